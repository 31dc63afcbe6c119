"""Per-user context files (seed 000 §3–4, §6): the ``store`` context source.

Yields the session user's own copies of the context files (``scope="user"``, so they
override the agent's in the merge) from whichever store is selected: SQLite in standalone
mode (``<state_dir>/agents.sqlite``), PostgreSQL in managed mode, where it also yields the
agent-level files from the database. A user's files are seeded from the templates on the
user's first session. The rules live in :mod:`soulframe.agentstore`; this plugin only
registers the source, so a third party can replace it by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click
from soulframe import hookimpl
from soulframe.model import Registration, ToolSpec


def _source(agent: Any) -> Any:
    from soulframe.agentstore import StoreContextSource

    return StoreContextSource(agent)


# tryfirst: pluggy lists it last, so among agent-level files of the same name the store's
# (managed mode) win over the workspace's
@hookimpl(tryfirst=True)
def register_context_sources() -> Iterable[Registration]:
    return [Registration(
        "store", _source,
        "per-user context files (and, in managed mode, agent-level ones) from the store",
    )]


# The agent edits its own context files (finishing BOOTSTRAP.md, updating USER.md, a
# self-evolving SOUL.md) through these tools, so every write passes the interceptor's rules:
# per-user copies for users, the store in managed mode, and a predefined agent's shared
# files read-only from chat (seed 000 §3).
_NAME = {
    "type": "string",
    "enum": ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"],
    "description": "The context file.",
}


@hookimpl
def register_tools() -> Iterable[ToolSpec]:
    return [
        ToolSpec(
            name="context_read",
            description=(
                "Read one of your context files (SOUL.md, IDENTITY.md, USER.md, AGENTS.md, "
                "TOOLS.md, HEARTBEAT.md, BOOTSTRAP.md) as it applies to the current user."
            ),
            parameters={"type": "object", "properties": {"name": _NAME}, "required": ["name"],
                        "additionalProperties": False},
            handler=_read,
            sessions=frozenset({"main", "heartbeat"}),
            summary="Read a context file (SOUL.md, USER.md, ...)",
        ),
        ToolSpec(
            name="context_write",
            description=(
                "Replace one of your context files. Use it to record what you learn about the user "
                "in USER.md, and to finish the first-run ritual by writing an empty BOOTSTRAP.md "
                "(which deletes it). A predefined agent's shared files cannot be changed from chat."
            ),
            parameters={"type": "object",
                        "properties": {"name": _NAME,
                                       "content": {"type": "string", "description": "The whole new content."}},
                        "required": ["name", "content"], "additionalProperties": False},
            handler=_write,
            writes=True,
            sessions=frozenset({"main"}),
            summary="Replace a context file; empty BOOTSTRAP.md ends the first run",
        ),
    ]


def _read(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    from soulframe.agentstore import read_context_file

    content = read_context_file(ctx.agent, ctx.session.user_id, args["name"])
    return {"name": args["name"], "exists": content is not None, "content": content or ""}


def _write(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    from soulframe.agentstore import ContextFileReadOnlyError, write_context_file
    from soulframe.tools import ToolError

    try:
        outcome = write_context_file(ctx.agent, ctx.session.user_id, args["name"], args["content"])
    except ContextFileReadOnlyError as exc:
        raise ToolError(str(exc)) from exc
    return {"name": outcome.name, "action": outcome.action, "scope": outcome.scope}


@hookimpl
def register_commands(cli: click.Group) -> None:
    names = click.Choice(list(_NAME["enum"]))

    @cli.group("context")
    def context() -> None:
        """Read and set context files where they live: the workspace, a user's copies, or the
        store in managed mode.

        \b
        soulframe context show USER.md --user alice
        soulframe context set SOUL.md --from new-soul.md     # a predefined agent's shared file
        """

    @context.command("show")
    @click.argument("name", type=names)
    @click.option("--user", "user_id", help="Show this user's copy (falls back to the agent's).")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: {name, user, content}.")
    @click.pass_obj
    def show(state: Any, name: str, user_id: str | None, as_json: bool) -> None:
        """Print context file NAME as the agent sees it."""
        from soulframe.agentstore import read_context_file
        from soulframe.cli import echo_json

        content = read_context_file(state.agent(), user_id, name)
        if content is None:
            raise click.ClickException(f"{name}: none" + (f" for user {user_id!r}" if user_id else ""))
        if as_json:
            echo_json({"name": name, "user": user_id, "content": content})
            return
        click.echo(content, nl=not content.endswith("\n"))

    @context.command("set")
    @click.argument("name", type=names)
    @click.option("--from", "source", type=click.File("r", encoding="utf-8"), required=True,
                  help="File with the new content ('-' for standard input).")
    @click.option("--user", "user_id", help="Set this user's copy instead of the agent's.")
    @click.pass_obj
    def set_(state: Any, name: str, source: Any, user_id: str | None) -> None:
        """Replace context file NAME as an administrator.

        Unlike the agent's context_write tool, this may change a predefined agent's shared
        files (SOUL.md, AGENTS.md, ...), in the store in managed mode.
        """
        from soulframe.agentstore import write_context_file

        outcome = write_context_file(state.agent(), user_id, name, source.read(), from_chat=False)
        click.echo(f"{outcome.name}: {outcome.action} ({outcome.scope} copy, in the {outcome.where})")
