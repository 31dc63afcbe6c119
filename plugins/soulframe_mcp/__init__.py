"""``soulframe serve``: a Model Context Protocol server over an agent's tools, system prompt
and workspace files.

The MCP SDK costs most of a second to import, so it is imported only when ``serve`` runs
(see :mod:`soulframe_mcp.server`); loading this plugin imports click and soulframe only.
"""

from __future__ import annotations

from typing import Any

import click
from soulframe import ToolSpec, hookimpl
from soulframe.config import K, Key
from soulframe.model import SESSION_KINDS

#: a note is a line of the daily log, which is loaded into every main-session prompt: a
#: runaway model must not be able to push megabytes into it through one call
MAX_NOTE_CHARS = 4_000


@hookimpl
def register_tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="memory_remember",
            description=(
                "Append a note to today's daily memory log (memory/YYYY-MM-DD.md). Use it when "
                "the user asks you to remember something, or for a fact worth keeping."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": MAX_NOTE_CHARS,
                             "description": "The note, one or two sentences."},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
            handler=_remember,
            writes=True,
            # writing to memory is for the user's own main session only
            sessions=frozenset({"main"}),
            summary="Append a note to today's memory log",
        )
    ]


def _remember(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    from soulframe.agentstore import effective_user
    from soulframe.tools import ToolError

    if not args["text"].strip():
        raise ToolError("memory_remember: the text is empty; send the note to keep")

    user = effective_user(ctx.agent, ctx.session.user_id)
    if user:
        # a user's notes are theirs: kept in the store under their id, never in the
        # agent's workspace where other users' sessions would find them
        from soulframe.memory.users import UserMemory

        name = UserMemory(ctx.agent, user).append_daily(args["text"], via="memory_remember")
        return {"saved": True, "path": name, "scope": "user"}
    # a refused note (injection, secret) raises UnsafeWriteError: the tool error names it
    path = ctx.agent.memory.append_daily(args["text"], via="memory_remember")
    # workspace-relative, like the user scope and memory_search's paths (usable with memory_get)
    return {"saved": True, "path": str(ctx.agent.workspace.relative(path)), "scope": "agent"}


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("serve")
    @click.option("--http", "port", type=int, metavar="PORT",
                  help="Serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio.")
    @click.option("--host", default="127.0.0.1", show_default=True,
                  help="Address for --http. Anything but loopback exposes the agent's memory.")
    @click.option("--session", "session_kind", type=click.Choice(SESSION_KINDS), default="main",
                  show_default=True, help="Session kind tool calls run in.")
    @click.option("--user", "user_id", help="User id tool calls and prompts are for.")
    @click.option("--no-remember", is_flag=True, help="Do not offer memory_remember.")
    @click.option("--read-only", is_flag=True,
                  help="Offer no tool that writes (memory_remember, context_write, any plugin's).")
    @click.pass_context
    def serve(ctx: click.Context, port: int | None, host: str, session_kind: str,
              user_id: str | None, no_remember: bool, read_only: bool) -> None:
        """Serve the agent over the Model Context Protocol (stdio by default).

        \b
        Tools:     memory_search, memory_get, memory_remember, skill_search, skill_read,
                   and every tool a plugin registers
        Prompts:   system_prompt (arguments: mode, session, user, channel)
        Resources: the workspace context files, read-only

        \b
        Claude Desktop / Claude Code / Cursor: run it as a stdio server, e.g.
          {"command": "soulframe", "args": ["-w", "/path/to/agent", "serve"]}
        """
        try:
            from .server import run
        except ModuleNotFoundError as exc:
            from soulframe.model import SoulframeError

            raise SoulframeError(
                f"`soulframe serve` needs the MCP SDK, which is not installed (no module "
                f"{exc.name!r}): pip install 'soulframe[mcp]'"
            ) from None

        agent = ctx.obj.agent()
        allow_remember = bool(agent.config.get("serve.allow_remember")) and not no_remember
        read_only = read_only or bool(agent.config.get("serve.read_only"))
        run(agent, port=port, host=host, session_kind=session_kind, user_id=user_id,
            allow_remember=allow_remember, read_only=read_only)


@hookimpl
def register_config_keys() -> dict[str, Key]:
    return {
        # ----------------------------------------------------------------- serving
        "serve.allow_remember": K(True, "offer memory_remember over MCP"),
        "serve.read_only": K(False, "offer no tool that writes (memory_remember, context_write, ...) over MCP"),
    }
