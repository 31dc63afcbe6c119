"""What every command shares: the top-level options' :class:`State` (the agent built on first
use), ``pass_state``, ``echo_json`` and ``command_group`` — the helpers a plugin's commands use."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..model import SoulframeError, check_user

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from ..agent import Agent
    from ..config import Config
    from ..plugins import PluginManager


class State:
    """What the top-level options decided, with the agent built on first use."""

    def __init__(self, workspace: str | None, agent_id: str | None, config_path: str | None) -> None:
        self.workspace = workspace
        self.agent_id = agent_id
        self.config_path = config_path
        self._agent: Agent | None = None
        self._config: Config | None = None
        self.pm: PluginManager | None = None
        #: the chat model ``-m/--model`` named for this run (see :func:`model_option`)
        self.model: str | None = None

    def config(self) -> Config:
        if self._config is None:
            from ..config import load_config

            cfg = load_config(self.config_path, workspace=self.workspace,
                              agent_id=self.agent_id, pm=self.pm)
            from ..chatmodels import choose

            self._config = choose(cfg, self.model, _ChatProviders(cfg.pm))
        return self._config

    def agent(self, *, require_workspace: bool = True) -> Agent:
        """The agent the options select. Its workspace must exist, unless the command only
        reads the configuration through it (``models list``)."""
        if self._agent is None:
            from ..agent import Agent

            agent = Agent(self.config(), agent_id=self.agent_id, pm=self.pm)
            if not require_workspace:
                return agent  # not kept: a later agent() still checks the workspace
            try:
                agent.require_workspace()
            except SoulframeError as exc:
                # the workspace came from the config or the built-in default, not from -w
                # (checked earlier): say which, so "where is my agent?" has an answer
                from .errors import StartError

                origin = self.config().origin("workspace") if self.workspace is None else "-w"
                source = "the built-in default" if origin == "default" else origin
                raise StartError(f"{exc} (the workspace from {source}; pick another with -w "
                                 "or `workspace` in your user config)") from None
            self._agent = agent
        return self._agent

    def close(self) -> None:
        """Close the agent, if a command built one (its store's connections, watchers)."""
        if self._agent is not None:
            agent, self._agent = self._agent, None
            agent.close()


class _ChatProviders:
    """The chat-model providers' names, collected only when a model name must be resolved:
    collecting them imports every chat plugin's settings, which `prompt` never needs."""

    def __init__(self, pm: PluginManager | None) -> None:
        self.pm = pm

    def __iter__(self) -> Iterator[str]:
        from ..plugins import collect_named

        return iter(collect_named(self.pm, "register_chat_models") if self.pm is not None else {})


pass_state = click.make_pass_decorator(State)


def command_group(cli: click.Group, name: str, help: str) -> click.Group:
    """The group ``soulframe NAME``, created if no plugin made it yet, so several plugins can
    add subcommands to one group (``memory``, ``agents``, ``skills``, ``models``)::

        @hookimpl
        def register_commands(cli):
            command_group(cli, "memory", "Memory files and the memory index.").add_command(my_cmd)

    Raises :class:`SoulframeError` when NAME is already a plain command.
    """
    existing = cli.commands.get(name)
    if isinstance(existing, click.Group):
        return existing
    if existing is not None:
        raise SoulframeError(f"cannot add to `soulframe {name}`: it is a command, not a group")
    group = click.Group(name, help=help)
    cli.add_command(group)
    return group


def own_copy(group: click.Group) -> click.Group:
    """A module-level group, copied for one CLI: plugins add their subcommands to the group
    the CLI holds (``soulframe memory flush``), and adding them to the module's own would
    carry them into every CLI built later in the process, a disabled plugin's included."""
    import copy

    fresh = copy.copy(group)
    fresh.commands = dict(group.commands)
    return fresh


def echo_json(data: Any) -> None:
    """Print data as JSON for scripts (stable key order, UTF-8, paths as strings)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def model_option(fn: Any) -> Any:
    """``-m/--model NAME`` for a command that calls a chat model: an alias, ``provider/model``
    or a model id; it overrides ``[model]`` for this run (:mod:`soulframe._engine.chatmodels`)."""

    def remember(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        state = ctx.find_object(State)
        if state is not None and value:
            state.model = value
            state._config = None  # chosen before the config is read, whatever the order
            state._agent = None
        return value

    return click.option("-m", "--model", "model", metavar="NAME", expose_value=False,
                        callback=remember, is_eager=True,
                        help="Chat model for this run: an alias, provider/model, or a model id "
                        "(default: [model] in the config, else `soulframe models default`).")(fn)


def user_option(help: str, *, name: str = "user_id") -> Callable[[F], F]:
    """``--user ID``, the user a command acts for, passed to the command as ``name``.
    An id the API refuses (empty, over 256 characters, with a NUL) is a usage error that
    says how to mean the agent's owner on the command line: leave ``--user`` out — so an
    empty ``--user "$USER_ID"`` in a script is refused, not taken for the owner."""

    def check(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check_user(value)
        except SoulframeError:
            got = ("an empty id" if not value else "a NUL character" if "\x00" in value
                   else f"{len(value)} characters")
            raise click.BadParameter(f"expected 1 to 256 characters, got {got} (leave --user out "
                                     "for the agent's owner)") from None

    return click.option("--user", name, metavar="ID", callback=check, help=help)
