"""``soulframe serve``: a Model Context Protocol server over an agent's tools, system prompt
and workspace files.

The MCP SDK costs most of a second to import, so it is imported only when ``serve`` runs
(see :mod:`soulframe_mcp.server`); loading this plugin imports click and soulframe only.
"""

from __future__ import annotations

import click
from soulframe import SESSION_KINDS, K, Key, hookimpl
from soulframe.cli import user_option


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("serve")
    @click.option("--http", "port", type=int, metavar="PORT",
                  help="Serve stateless streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio.")
    @click.option("--host", default="127.0.0.1", show_default=True,
                  help="Address for --http. Anything but loopback is reachable from the network "
                       "(the token is still required; it travels in clear without TLS).")
    @click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
                  help="Another name clients use for this server in the Host header (with --http; "
                       "loopback names and --host are always allowed).")
    @click.option("--session", "session_kind", type=click.Choice(SESSION_KINDS), default="main",
                  show_default=True, help="Session kind tool calls run in.")
    @user_option("User id tool calls and prompts are for.")
    @click.option("--no-remember", is_flag=True, help="Do not offer memory_remember.")
    @click.option("--read-only", is_flag=True,
                  help="Offer no tool that writes (memory_remember, context_write, any plugin's).")
    @click.option("--workers", type=click.IntRange(min=0), metavar="N",
                  help="With --http: run tool calls in up to N worker processes, started as calls "
                       "need them (default: 2 on 2 cores, one per core but one on more, at most 4, none on "
                       "one core; each holds a copy of the model; 0: in the server process).")
    @click.pass_context
    def serve(ctx: click.Context, port: int | None, host: str, allow_hosts: tuple[str, ...],
              session_kind: str, user_id: str | None, no_remember: bool, read_only: bool,
              workers: int | None) -> None:
        """Serve the agent over the Model Context Protocol (stdio by default).

        \b
        Tools:     memory_search, memory_get, memory_remember, skill_search, skill_read,
                   context_read, context_write, and every tool a plugin registers
        Prompts:   system_prompt (arguments: mode, session, user, channel)
        Resources: the context files and memory files this session may read
                   (soulframe://workspace/SOUL.md, memory://memory/2026-11-26.md),
                   with change notifications
        Revisions: 2026-07-28 and 2025-11-25, over stdio and stateless HTTP

        \b
        --http needs this run's token on every request ('Authorization: Bearer
        <token>'): it is printed on stderr and written to
        <state_dir>/serve/http-PORT.token (0600); set SOULFRAME_SERVE_TOKEN to
        choose it. Requests whose Host or Origin does not name this server are
        refused, on every bind address.

        \b
          soulframe -w ~/agent serve
          soulframe -w ~/agent serve --http 8765 --read-only
          soulframe -w ~/agent serve --session group --user alice --no-remember

        \b
        Claude Desktop / Cursor (mcpServers) and VS Code (servers, with
        "type": "stdio"): run it as a stdio server, e.g.
          {"command": "soulframe", "args": ["-w", "/path/to/agent", "serve"]}
          claude mcp add soulframe -- soulframe -w /path/to/agent serve
        (docs/serving.md has each host's file)
        """
        try:
            from .server import run
        except ModuleNotFoundError as exc:
            from soulframe import SoulframeError

            raise SoulframeError(
                f"`soulframe serve` needs the MCP SDK, which is not installed (no module "
                f"{exc.name!r}): pip install 'soulframe[mcp]'"
            ) from None

        if workers is not None and port is None:
            raise click.UsageError("--workers needs --http: over stdio one client waits for each answer")
        state = ctx.obj
        agent = state.agent()
        allow_remember = bool(agent.config.get("serve.allow_remember")) and not no_remember
        read_only = read_only or bool(agent.config.get("serve.read_only"))
        run(agent, port=port, host=host, session_kind=session_kind, user_id=user_id,
            allow_remember=allow_remember, read_only=read_only, allow_hosts=allow_hosts, workers=workers,
            opened=(state.workspace, state.config_path, state.agent_id))


@hookimpl
def register_config_keys() -> dict[str, Key]:
    return {
        # ----------------------------------------------------------------- serving
        "serve.allow_remember": K(True, "offer memory_remember over MCP"),
        "serve.read_only": K(False, "offer no tool that writes (memory_remember, context_write, ...) over MCP"),
    }
