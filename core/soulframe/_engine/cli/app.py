"""The ``soulframe`` command line.

Commands import what they need inside their function, so ``soulframe --version``,
``soulframe plugins`` and ``soulframe prompt`` never pay for numpy, sqlite-vec, psycopg or
the embedding model. Plugins add commands through the ``register_commands(cli)`` hook.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .state import State, echo_json, own_copy, pass_state

if TYPE_CHECKING:
    from ..plugins import PluginManager


def _show_warning(message: Any, category: Any, filename: Any, lineno: Any, file: Any = None, line: Any = None) -> None:
    from .errors import no_color

    # None: click's context decides (a terminal, NO_COLOR via build_cli); a warning while
    # plugins load comes before there is one
    click.secho(f"warning: {message}", fg="yellow", err=True, color=False if no_color() else None)


#: the exit status of a command stopped by Ctrl-C, as shells report a process SIGINT ended
INTERRUPTED = 130


class SoulframeGroup(click.Group):
    """Turns a :class:`SoulframeError`, or a full disk, into a one-line error instead of a
    traceback; Ctrl-C into exit status 130 (click's own "Aborted!" exits 1, as a failure
    does, so a script could not tell a stopped run from a failed one)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # kept for the workspace check, which must know a subcommand's subcommand (`backup
        # restore` creates the workspace) before click has resolved it
        ctx.meta["soulframe.args"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            super().invoke(ctx)
            # None, whatever the command returned: :func:`main` reads a value here as the
            # exit status a ``ctx.exit(n)`` gave, and a command's return value is none
            return None
        except KeyboardInterrupt:
            click.echo("\ninterrupted (Ctrl-C)", err=True)
            raise SystemExit(INTERRUPTED) from None
        except Exception as exc:
            from .errors import error_line

            said = error_line(exc)
            if said is None:
                raise
            raise click.ClickException(said) from exc


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("soulframe")
    except PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version`` after other options (``soulframe -w WS --version``). Its own callback
    rather than ``click.version_option(_version())``: that reads the distribution's metadata
    whenever the CLI is built, a cost every other command paid for nothing."""
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"soulframe, version {_version()}")
    ctx.exit()


#: the top-level --help's closing part: what a script needs beyond the options
_EPILOG = """\b
Environment:
  SOULFRAME_WORKSPACE        the workspace, as -w gives it
  SOULFRAME_CONFIG           the config file, as --config gives it
  SOULFRAME_HOME             config, keys, models, caches and state in one dir
  SOULFRAME_DSN              PostgreSQL DSN for managed mode (store.dsn)
  SOULFRAME_KEYS_PATH        the API keys file (default: in the config dir)
  SOULFRAME_DISABLE_PLUGINS  plugin names to leave out, comma-separated
  SOULFRAME_LOG              log level on stderr (info, debug), as -v/-vv
  SOULFRAME_TRACE_PLUGINS    print every hook call on stderr (plugin authors)
  NO_COLOR                   no colour, even on a terminal

\b
Exit status: 0 done, 1 an error the message explains, 2 a wrong option or
argument or a workspace or config that keeps the command from starting,
130 stopped with Ctrl-C. With --json an error is also printed on stdout as
{"error": {"message", "code", ...}}.
"""


def build_cli(pm: PluginManager | None = None) -> click.Group:
    """A fresh CLI group with the core commands and every plugin's commands."""
    from .errors import no_color
    from .install import install_command, uninstall_command
    from .keys import keys_group

    color = False if no_color() else None

    @click.group(cls=SoulframeGroup, epilog=_EPILOG,
                 context_settings={"help_option_names": ["-h", "--help"], "color": color})
    @click.option("-w", "--workspace", type=click.Path(file_okay=False), envvar="SOULFRAME_WORKSPACE",
                  help="Agent workspace directory (default: from config, else ~/.soulframe/workspace).")
    @click.option("--agent", "agent_id", metavar="ID", help="Which [[agents]] entry of the config to use.")
    @click.option("--config", "config_path", type=click.Path(dir_okay=False),
                  help="Config file (default: $SOULFRAME_CONFIG, <workspace>/soulframe.toml, user config dir).")
    @click.option("-v", "--verbose", count=True,
                  help="Log what happens on stderr (-v info, -vv debug; or SOULFRAME_LOG=debug). "
                  "Secrets are masked.")
    @click.option("--version", is_flag=True, expose_value=False, is_eager=True,
                  callback=_print_version, help="Show the version and exit.")
    @click.pass_context
    def cli(ctx: click.Context, workspace: str | None, agent_id: str | None, config_path: str | None,
            verbose: int) -> None:
        """soulframe — identity, memory and skills for personal AI agents.

        An agent's identity and memory live in plain Markdown files in a workspace
        (SOUL.md, IDENTITY.md, USER.md, AGENTS.md, TOOLS.md, MEMORY.md, memory/*.md,
        skills/*/SKILL.md). soulframe turns them into system prompts, searchable memory
        and skills.

        \b
        Quick start:
          soulframe init ~/agent            create a workspace from templates
          soulframe -w ~/agent prompt       print the system prompt
          soulframe -w ~/agent memory search "what did we decide about X"
        """
        if verbose:
            from ..logs import configure

            configure(verbose)
        if workspace is not None and not _creates_workspace(ctx):
            _require_workspace(ctx, workspace)
        state = State(workspace, agent_id, config_path)
        state.pm = pm
        ctx.obj = state
        ctx.call_on_close(state.close)

    cli.add_command(plugins_command)
    cli.add_command(own_copy(config_group))
    cli.add_command(paths_command)
    cli.add_command(own_copy(keys_group))
    cli.add_command(install_command)
    cli.add_command(uninstall_command)
    _add_core_commands(cli)
    if pm is not None:
        _add_plugin_commands(cli, pm)
    return cli


def _add_plugin_commands(cli: click.Group, pm: PluginManager) -> None:
    """Every plugin's commands, one plugin at a time: a plugin whose hook raises is skipped
    with a warning naming it, and every other command (`soulframe plugins` to find it) keeps
    working. A name already taken keeps its command, with a warning naming both owners:
    replacing it would silently take away a core command, or a whole group of them
    (`soulframe memory ...`), for a plugin that meant to add one."""
    from ..plugins import call_in_order, plugin_failed

    owner = dict.fromkeys(cli.commands, "soulframe")
    before = dict(cli.commands)
    shown = _command_names(cli)

    def keep_taken_names(plugin_name: str) -> None:
        nonlocal before, shown
        for name, command in list(cli.commands.items()):
            if name not in before:
                owner[name] = plugin_name
            elif command is not before[name]:
                cli.commands[name] = before[name]
                plugin_failed(pm, plugin_name, "register_commands",
                              f"`soulframe {name}` is {owner[name]}'s already (give yours another "
                              f"name, or add a subcommand with soulframe.cli.command_group)")
        before = dict(cli.commands)
        now = _command_names(cli)
        new = [name for name in now if name not in shown]
        # a new group stands for its subcommands; a subcommand added to a group another
        # plugin (or the core) owns is shown as itself
        added = [name for name in new if " " not in name or name.split(" ")[0] not in new]
        if added:  # what `soulframe plugins` shows the plugin adds
            pm.commands[plugin_name] = added
        shown = now

    call_in_order(pm, "register_commands", after=keep_taken_names, cli=cli)


def _command_names(cli: click.Group) -> list[str]:
    """``memory`` and ``memory search`` alike: a plugin adds either."""
    names = []
    for name, command in cli.commands.items():
        names.append(name)
        if isinstance(command, click.Group):
            names.extend(f"{name} {sub}" for sub in command.commands)
    return names


#: the commands that make the workspace, so it need not exist before they run
CREATES_WORKSPACE: tuple[tuple[str, ...], ...] = (("init",), ("backup", "restore"))


def _creates_workspace(ctx: click.Context) -> bool:
    sub = ctx.invoked_subcommand
    if sub is None:
        return True
    args: list[str] = ctx.meta.get("soulframe.args", [])
    after = args[args.index(sub) + 1:] if sub in args else []
    nxt = next((a for a in after if not a.startswith("-")), None)
    return (sub,) in CREATES_WORKSPACE or (sub, nxt) in CREATES_WORKSPACE


def _require_workspace(ctx: click.Context, workspace: str) -> None:
    """A workspace named with ``-w`` (or $SOULFRAME_WORKSPACE) must exist: a typo would
    otherwise print a generic prompt, search nothing, or create the directory on the first
    write. ``init`` and ``backup restore`` create it (:data:`CREATES_WORKSPACE`)."""
    from pathlib import Path

    path = Path(workspace).expanduser()
    if path.is_dir():
        return
    from .errors import StartError

    what = "is not a directory" if path.exists() else "does not exist"
    raise StartError(f"the workspace {path} {what}; create one with `soulframe init {path}`")


def _add_core_commands(cli: click.Group) -> None:
    """Commands that belong to the core modules. Each module imports only click at load
    time; what a command needs is imported when it runs."""
    from .calllog import logs_command
    from .doctor import doctor_command
    from .memory import memory_group
    from .memory_eval import memory_eval
    from .models import add_models_commands
    from .prompt import prompt_command
    from .skills import skills_group
    from .tools import tools_group
    from .workspace import add_workspace_commands

    add_workspace_commands(cli)  # init, identity
    cli.add_command(doctor_command)
    cli.add_command(logs_command)
    cli.add_command(prompt_command)
    memory = own_copy(memory_group)
    memory.add_command(memory_eval)
    cli.add_command(memory)
    cli.add_command(own_copy(skills_group))
    cli.add_command(own_copy(tools_group))
    add_models_commands(cli)


# --------------------------------------------------------------------------- plugins


@click.command("plugins")
@click.option("--all", "show_all", is_flag=True, help="Include soulframe's own default plugins (text and JSON alike).")
@click.option("--hook", "hook_filter", metavar="NAME", help="Only plugins implementing this hook.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: a list of {name, dist, version, hooks, registers, overrides, loaded, "
              "problems}; a plugin that failed to load has loaded false and its error in problems.")
@pass_state
def plugins_command(state: State, show_all: bool, hook_filter: str | None, as_json: bool) -> None:
    """List installed plugins: distribution, version, hooks and what each registers.

    Third-party plugins only, like `llm plugins`; --all adds soulframe's own default
    plugins (ordinary plugins loaded from the same entry points), in text and JSON alike.
    A plugin that failed to load is listed too, with why (unless --hook is given).

    \b
      soulframe plugins
      soulframe plugins --all --hook register_prompt_sections
    """
    from soulframe.hookspecs import HOOK_NAMES

    from .. import plugins as p

    if hook_filter is not None and hook_filter not in HOOK_NAMES:
        import difflib  # only for a "did you mean": kept off the start-up path

        hint = difflib.get_close_matches(hook_filter, HOOK_NAMES, n=1)
        raise click.BadParameter(f"no hook is named {hook_filter!r}"
                                 + (f" (did you mean {hint[0]!r}?)" if hint else "")
                                 + "; see docs/plugins/hooks.md", param_hint="--hook")
    pm = state.pm
    assert pm is not None
    infos = p.list_plugins(pm)
    warned = set(pm.load_errors)  # as plugins loaded and the CLI was built: said once already
    registered, overrides, failures = p.what_each_registers(pm)
    for name, commands in pm.commands.items():
        registered.setdefault(name, {})["commands"] = commands
    for line in failures:
        if line not in warned:
            click.secho(f"warning: {line}", fg="yellow", err=True)
    rows: list[dict[str, Any]] = []
    hidden = 0
    for info in infos:
        if hook_filter and hook_filter not in info.hooks:
            continue
        own = info.dist is not None and info.dist.lower() == "soulframe"
        if not show_all and own:
            hidden += 1
            continue
        rows.append({
            "name": info.name,
            "dist": info.dist,
            "version": info.version,
            "hooks": list(info.hooks),
            "registers": registered.get(info.name, {}),
            "overrides": overrides.get(info.name, []),
            "loaded": True,
            "problems": pm.problems.get(info.name, []),
        })
    if hook_filter is None:  # no hooks to filter by: it never loaded
        rows.extend({"name": info.name, "dist": info.dist, "version": info.version, "hooks": [],
                     "registers": {}, "overrides": [], "loaded": False,
                     "problems": pm.problems.get(info.name, [])} for info in pm.failed)
    if as_json:
        echo_json(rows)
        return
    for row in rows:
        click.secho(f"{row['name']}", bold=True, nl=False)
        click.echo(f"  ({row['dist'] or 'local'} {row['version'] or ''})".rstrip())
        if not row["loaded"]:
            click.secho("    not loaded (the problem is below)", fg="yellow")
            continue
        click.echo(f"    hooks: {', '.join(row['hooks'])}")
        for kind, names in row["registers"].items():
            click.echo(f"    {kind}: {', '.join(names)}")
        for line in row["overrides"]:
            click.secho(f"    overrides {line}", fg="yellow")
    if not rows:
        # "none installed" above a plugin that failed to load sent its author to reinstall it
        click.echo("no third-party plugin loaded (see the problems below)" if pm.load_errors
                   else "no third-party plugins installed")
    if hidden:
        click.echo(f"({hidden} of soulframe's own default plugins not shown: --all lists them)")
    for line in pm.load_errors:
        click.echo(f"problem: {line}")


# --------------------------------------------------------------------------- config


@click.group("config")
def config_group() -> None:
    """Inspect and change the configuration: show, get, set, unset, path."""


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {key: {value, origin}}.")
@pass_state
def config_show(state: State, as_json: bool) -> None:
    """Print every setting, its value and where it came from (default, file:line, $ENV).
    API keys, tokens and passwords (in URLs and DSNs too) are shown as ``***``.

    \b
      soulframe -w ~/agent config show
      soulframe -w ~/agent config show --json | jq '."memory.min_score"'
    """
    from ..config import mask_secrets

    cfg = state.config()
    data = {k: {"value": mask_secrets(k, cfg.get(k)), "origin": cfg.origin(k)} for k in cfg.keys}
    agents = [
        {"id": a.id, "workspace": str(a.workspace), "type": a.type, "identity": dict(a.identity),
         "prompt_mode": a.prompt_mode}
        for a in cfg.agents
    ]
    if as_json:
        echo_json({"config_file": str(cfg.path) if cfg.path else None, "settings": data,
                   "agents": agents, "plugins_config": {k: mask_secrets(f"plugins.config.{k}", dict(v))
                                      for k, v in cfg.plugin_settings.items()}})
        return
    click.echo(f"# config file: {cfg.path or '(none found; defaults)'}")
    for key, entry in data.items():
        origin = entry["origin"]
        click.echo(f"{key} = {json.dumps(entry['value'], ensure_ascii=False)}"
                   + ("" if origin == "default" else f"   # {origin}"))
    for a in agents:
        click.echo(f"[agent {a['id']}] type={a['type']} workspace={a['workspace']}")


@config_group.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {key, value, origin}.")
@pass_state
def config_get(state: State, key: str, as_json: bool) -> None:
    """Print one setting's effective value (secrets as ``***``; `keys get` prints a stored
    key). Exit 1 for a key no plugin declares.

    \b
      soulframe config get memory.max_results
      soulframe config get workspace --json
    """
    from ..config import _did_you_mean, mask_secrets

    cfg = state.config()
    if key not in cfg.keys:
        raise click.ClickException(f"unknown key {key!r}{_did_you_mean(key, list(cfg.keys))}")
    value = mask_secrets(key, cfg.get(key))
    if as_json:
        echo_json({"key": key, "value": value, "origin": cfg.origin(key)})
    else:
        click.echo(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _config_target(state: State, user: bool) -> Path:
    from ..config import discover_workspace, user_config_dir

    if not user:
        ws = state.workspace or os.environ.get("SOULFRAME_WORKSPACE")
        root = Path(ws).expanduser() if ws else discover_workspace(Path.cwd())
        if root is not None:
            json_file = root / "soulframe.json"
            if json_file.is_file() and not (root / "soulframe.toml").is_file():
                raise click.ClickException(
                    f"{json_file}: a JSON config is not edited in place; change it by hand")
            return root / "soulframe.toml"
    return user_config_dir() / "soulframe.toml"


def _config_write(state: State, key: str, value: Any, user: bool) -> Path:
    from ..config import load_config
    from ..config_edit import edited, write_validated
    from ..workspace import ensure_private_dir

    path = _config_target(state, user)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    new = edited(text, key, value)
    ensure_private_dir(path.parent)
    workspace = path.parent if path.name == "soulframe.toml" and not user else None
    write_validated(path, new, lambda tmp: load_config(tmp, workspace=workspace))
    return path


@config_group.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@click.option("--user", is_flag=True,
              help="Change your user config (every workspace without its own soulframe.toml), "
              "not the workspace's.")
def config_set(key: str, value: str, user: bool) -> None:
    """Set KEY to VALUE in the workspace's soulframe.toml (or, with --user or outside any
    workspace, in your user config). VALUE is read as TOML when it parses (3, true,
    ["a", "b"]), else as text. The file is validated as it is when loaded — a misspelt key
    or a value out of range changes nothing — and its comments and layout are kept.

    \b
      soulframe -w ~/agent config set memory.max_results 8
      soulframe config set --user workspace ~/agent     # the default workspace, without -w
    """
    from ..config import key_catalogue
    from ..config_edit import parse_value

    state = click.get_current_context().find_object(State)
    assert state is not None
    parsed = parse_value(value)
    spec = key_catalogue(state.pm).get(key)
    if spec is not None and spec.path and isinstance(parsed, str) and parsed \
            and not parsed.startswith("~") and not Path(parsed).is_absolute():
        # typed here, `workspace agent` means the agent folder in this directory; written as
        # is, the file would read it relative to itself (~/.config/soulframe/agent)
        parsed = str(Path(parsed).resolve())
    path = _config_write(state, key, parsed, user)
    click.echo(f"set {key} in {path}")
    if key == "workspace" and isinstance(parsed, str) and not Path(parsed).expanduser().is_dir():
        import shlex

        click.secho(f"note: {parsed} does not exist yet; create it with `soulframe init {shlex.quote(parsed)}`",
                    fg="yellow", err=True)


@config_group.command("unset")
@click.argument("key")
@click.option("--user", is_flag=True, help="Change your user config, not the workspace's.")
def config_unset(key: str, user: bool) -> None:
    """Remove KEY from the config file, so its default (or the next source) applies.

    \b
      soulframe -w ~/agent config unset memory.min_score
      soulframe config unset model.name --user
    """
    state = click.get_current_context().find_object(State)
    assert state is not None
    path = _config_write(state, key, None, user)
    click.echo(f"removed {key} from {path}")


@click.command("paths")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {name: {path, exists}}.")
@pass_state
def paths_command(state: State, as_json: bool) -> None:
    """Where soulframe keeps its files: your config and keys, models, caches, the default
    workspace, indexes and global skills. Set SOULFRAME_HOME to keep them all under one
    directory; a setting in the config file still wins for what it names.

    \b
      soulframe paths
      SOULFRAME_HOME=/srv/sf soulframe paths --json
    """
    from ..chatmodels import aliases_path, default_model_path
    from ..keys import keys_path
    from ..paths import ENV, cache_dir, config_dir, data_dir, override, soulframe_home

    cfg = state.config()
    rows = {
        "home": soulframe_home(),
        "config dir": config_dir(),
        "config file": cfg.path or config_dir() / "soulframe.toml",
        "keys": keys_path(),
        "model aliases": aliases_path(),
        "default chat model": default_model_path(),
        "models": data_dir() / "models",
        "cache": cache_dir(),
        "workspace": cfg.agent(state.agent_id).workspace,
        "state": Path(str(cfg.get("state_dir"))).expanduser(),
        "global skills": Path(str(cfg.get("skills.global_dir"))).expanduser(),
    }
    if as_json:
        echo_json({"override": str(override()) if override() else None,
                   **{k: {"path": str(v), "exists": v.exists()} for k, v in rows.items()}})
        return
    source = f"${ENV}" if override() else f"defaults (set ${ENV} to move them all)"
    click.echo(f"# {source}")
    width = max(len(k) for k in rows)
    for name, path in rows.items():
        click.echo(f"{name:<{width}}  {path}" + ("" if path.exists() else "  (not yet)"))


@config_group.command("path")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {config_file, user_config_dir}.")
@pass_state
def config_path(state: State, as_json: bool) -> None:
    """Print the config file in use (or where one would be looked for).

    \b
      soulframe config path
      soulframe -w ~/agent config path --json
    """
    from ..config import user_config_dir

    cfg = state.config()
    if as_json:
        echo_json({"config_file": str(cfg.path) if cfg.path else None,
                   "user_config_dir": str(user_config_dir())})
        return
    click.echo(str(cfg.path) if cfg.path else f"(none) — looked in the workspace and {user_config_dir()}")


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        # answered before plugins load: they only add commands, and monitors poll this
        click.echo(f"soulframe, version {_version()}")
        return
    warnings.showwarning = _show_warning
    from ..logs import ENV, configure

    verbosity = _verbosity(args)
    if verbosity or ENV in os.environ:  # before plugins load, so their loading is logged
        configure(verbosity)

    from .errors import Declined, StartError, error_line, report

    as_json = _wants_json(args)
    try:
        pm = _plugins_for(args)
    except KeyboardInterrupt:  # while plugins load (a second or more): no traceback either
        click.echo("\ninterrupted (Ctrl-C)", err=True)
        sys.exit(INTERRUPTED)
    except Exception as exc:  # a config that does not load; a -w path the system refuses
        said = error_line(exc)
        if said is None:
            raise
        error = StartError(said)
        error.__cause__ = exc  # its file, line and key, for --json
        report(error, as_json=as_json)
        sys.exit(error.exit_code)
    cli = build_cli(pm)
    try:
        # not standalone: click would print every error as text on stderr itself
        code = cli.main(args=args, prog_name="soulframe", standalone_mode=False)
    except click.ClickException as exc:
        report(exc, as_json=as_json)
        sys.exit(exc.exit_code)
    except click.Abort as exc:  # a declined confirmation, or Ctrl-C while click read input
        if isinstance(exc.__cause__, KeyboardInterrupt):
            click.echo("interrupted (Ctrl-C)", err=True)
            sys.exit(INTERRUPTED)
        declined = Declined()
        report(declined, as_json=as_json)
        sys.exit(declined.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _wants_json(args: list[str]) -> bool:
    """Whether the command line asks for ``--json`` (before a ``--``, after which it would be
    an argument): then even an error in the arguments themselves is answered in JSON."""
    head = args[:args.index("--")] if "--" in args else args
    return "--json" in head


#: the top-level options that take a value (which is then no command name)
_VALUE_OPTIONS = ("-w", "--workspace", "--agent", "--config")


def _top_level(args: list[str]) -> list[str]:
    """The arguments before the command name: the top-level options and their values. A
    command's own options are not among them (`agents add ID --workspace DIR` names the new
    agent's workspace, not the one to run in)."""
    head: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        head.append(args[i])
        if args[i] in _VALUE_OPTIONS and i + 1 < len(args):
            head.append(args[i + 1])
            i += 1
        i += 1
    return head


def _verbosity(args: list[str]) -> int:
    """How many ``-v`` the top-level options hold (``-v``, ``-vv``, ``--verbose``)."""
    n = 0
    for a in _top_level(args):
        if a == "--verbose":
            n += 1
        elif re.fullmatch(r"-v+", a):
            n += len(a) - 1
    return n


def _plugins_for(args: list[str]) -> PluginManager:
    """The plugins the config enables. ``plugins.disabled`` must be known before plugins load
    (they add the commands), so the config is read once, early, with the same lookup the CLI
    options use; the plugin manager it loaded serves every command. A wrong ``--agent`` is
    found here too, as a wrong ``--config`` is (exit 2)."""
    from ..config import load_config

    head = _top_level(args)

    def opt(*names: str) -> str | None:
        for i, a in enumerate(head):
            for n in names:
                if a == n and i + 1 < len(head):
                    return head[i + 1]
                if a.startswith(n + "="):
                    return a.split("=", 1)[1]
        return None

    cfg = load_config(opt("--config"), workspace=opt("-w", "--workspace"), agent_id=opt("--agent"))
    pm: PluginManager = cfg.pm
    return pm


if __name__ == "__main__":  # pragma: no cover
    main()
