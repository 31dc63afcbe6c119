"""The MCP server, on the official SDK's low-level ``Server``.

soulframe's tools arrive from plugins as JSON Schemas, not as Python signatures, so the
low-level server (which takes schemas as they are) fits them better than ``MCPServer``, whose
tools are built by introspecting function signatures.
"""

from __future__ import annotations

import errno
import json
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from soulframe.model import Session, SoulframeError
from soulframe.tools import ToolError, dispatch

from .scope import NARROWER, ScopeError, prompt_kind, prompt_user

if TYPE_CHECKING:
    from soulframe.agent import Agent

log = logging.getLogger("soulframe.serve")

PROMPT_NAME = "system_prompt"
RESOURCE_SCHEME = "soulframe"
CONTEXT_FILES = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
                 "BOOTSTRAP.md", "MEMORY.md")
PRIVATE_FILES = ("MEMORY.md", "USER.md", "SOUL.md", "IDENTITY.md")


def build_server(agent: Agent, *, session_kind: str = "main", user_id: str | None = None,
                 allow_remember: bool = True, read_only: bool = False) -> Server[Any]:
    """An MCP server for ``agent``. Each request is handled on its own: one failure is
    reported to the client and the server goes on serving."""
    session = Session(kind=session_kind, user_id=user_id)  # type: ignore[arg-type]

    def tools() -> list[Any]:
        offered: list[Any] = agent.tools(session)
        if not allow_remember:
            offered = [t for t in offered if t.name != "memory_remember"]
        if read_only:
            offered = [t for t in offered if not t.writes]
        return offered

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=dict(t.parameters))
            for t in tools()
        ])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await anyio.to_thread.run_sync(
                lambda: dispatch(agent, params.name, params.arguments or {}, session=session, tools=tools())
            )
        except ToolError as exc:
            return _tool_error(str(exc))
        except Exception as exc:  # a handler bug must not take the server down
            log.exception("tool %s failed", params.name)
            return _tool_error(f"{params.name} failed: {type(exc).__name__}: {exc}")
        text = json.dumps(result, ensure_ascii=False, default=str)
        structured = result if isinstance(result, dict) else {"result": result}
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=json.loads(json.dumps(structured, default=str)))

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT_NAME,
            description=f"The system prompt of agent {agent.id!r}, built from its workspace files.",
            arguments=[
                types.PromptArgument(name="mode", description="full, task, minimal or none"),
                types.PromptArgument(name="session", description=(
                    f"{', '.join(NARROWER.get(session_kind, (session_kind,)))}: this server's "
                    f"session ({session_kind}) or a narrower one")),
                types.PromptArgument(name="user", description=(
                    f"only {user_id!r}, the server's user" if user_id else
                    "not accepted: this server serves no user's files")),
                types.PromptArgument(name="channel", description="channel name, e.g. telegram"),
            ],
        )])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        from mcp.shared.exceptions import MCPError

        if params.name != PROMPT_NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}; available: {PROMPT_NAME}")
        args = params.arguments or {}
        mode = args.get("mode") or None
        if mode not in (None, "full", "task", "minimal", "none"):
            raise MCPError(code=types.INVALID_PARAMS, message=f"mode {mode!r}: expected full, task, minimal or none")
        asked = args.get("session") or None
        if asked is not None and asked not in ("main", "subagent", "cron", "heartbeat", "group"):
            raise MCPError(code=types.INVALID_PARAMS, message=f"session {asked!r}: expected main, subagent, cron, heartbeat or group")
        # the arguments come from the client: they may narrow the session the server was
        # started for, never widen it (see soulframe_mcp.scope)
        try:
            kind = prompt_kind(session_kind, asked)
            prompt_user_id = prompt_user(user_id, args.get("user") or None)
        except ScopeError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        prompt_session = Session(kind=kind, mode=mode, user_id=prompt_user_id,  # type: ignore[arg-type]
                                 channel=args.get("channel") or None)
        prompt = await anyio.to_thread.run_sync(lambda: agent.system_prompt(prompt_session))
        return types.GetPromptResult(
            description=f"system prompt ({prompt.mode} mode, {kind} session)",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=prompt.text))],
        )

    def visible_files() -> list[str]:
        from soulframe.prompt.context import visible_in_session

        names = []
        for name in CONTEXT_FILES:
            # exactly the files this session's prompt may show: the one session filter
            if not visible_in_session(name, session, agent.config):
                continue
            try:
                path = agent.workspace.resolve(name)
            except Exception:  # a symlink leading outside the workspace is not served
                continue
            if path.is_file():
                names.append(name)
        return names + _daily_logs()

    def _daily_logs() -> list[str]:
        """Today's and yesterday's logs, for every session that sees them in its prompt
        (seed 003 §1.2: daily logs are read in every session; sub-agents and cron keep
        their two-file allowlist)."""
        from soulframe.memory.files import Discovery
        from soulframe.prompt.context import daily_log_names, visible_in_session

        out = []
        for name in daily_log_names(agent, session):
            if not visible_in_session(name, session, agent.config):
                continue
            try:
                path = agent.workspace.resolve(name)
            except Exception:
                continue
            # privacy follows the file reached: a log that is a link to MEMORY.md or USER.md
            # (or a hard link of one) is not served under a public log's name
            if path.is_file() and Discovery(agent.workspace).privacy(name) is False:
                out.append(name)
        return out

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(name=name, uri=f"{RESOURCE_SCHEME}://workspace/{name}", mime_type="text/markdown",
                           description=f"{name} from the agent's workspace (read-only)")
            for name in visible_files()
        ])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        prefix = f"{RESOURCE_SCHEME}://workspace/"
        name = uri[len(prefix):] if uri.startswith(prefix) else None
        if name is None or name not in visible_files():
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"{uri}: not a served resource; list_resources shows what is available")
        from soulframe.redaction import mask_for_model

        text = mask_for_model(agent.workspace.read_text(name), agent.config)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)])

    from importlib.metadata import version

    return Server(
        "soulframe",
        version=version("soulframe"),
        instructions=(f"Identity, memory and skills of agent {agent.id!r}. Search memory with memory_search "
                      "before answering about prior work, decisions or preferences."),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _warm_memory(agent: Agent) -> None:
    """Open the index, sync it and load the embedding model (one query's worth). Quiet:
    what goes wrong here is reported by the first search that meets it."""
    import warnings

    try:
        if not agent.config.get("memory.enabled"):
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory = agent.memory
            memory.sync(blocking=False)
            provider = memory.embedder
            if provider is not None:
                provider.embed_query("warm up")
    except Exception as exc:  # never take the server down from here
        log.debug("memory warm-up failed: %s", exc)


def _say(message: str) -> None:
    # stderr only: on stdio, standard output is the protocol channel
    print(f"soulframe: {message}", file=sys.stderr, flush=True)


def _check_port(host: str, port: int) -> None:
    """Fail with a clear message before announcing anything when the port cannot be bound
    (uvicorn would log a bare errno and exit 3 after we said "serving")."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise SoulframeError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}"
                + ("; another server is using that port, pick another with --http PORT"
                   if exc.errno == errno.EADDRINUSE else "")
            ) from None


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(agent: Agent, *, port: int | None, host: str, session_kind: str, user_id: str | None,
        allow_remember: bool, read_only: bool = False) -> None:
    if not agent.workspace.root.is_dir():
        # a typo in a desktop client's config would otherwise serve an empty agent in silence
        _say(f"warning: the workspace {agent.workspace.root} does not exist; serving an agent with "
             f"no files (create it with `soulframe init {agent.workspace.root}`)")
    if port is not None:
        _check_port(host, port)
        if not _is_loopback(host):
            _say(f"warning: --host {host} is not a loopback address: anyone who can reach it can read "
                 "this agent's memory; there is no authentication")
    server = build_server(agent, session_kind=session_kind, user_id=user_id, allow_remember=allow_remember,
                          read_only=read_only)
    # A server lives long: watch the skill tiers so an edited or new SKILL.md is served
    # without a restart, and keep the memory index fresh — at start and on an interval, as
    # well as before every search (seed 001 "Memory Sync").
    try:
        agent.skills.watch()
    except Exception as exc:  # no inotify, too many watches: serve anyway, say so
        print(f"soulframe: warning: skills hot reload is off ({exc})", file=sys.stderr, flush=True)
    # ... and load the embedding model and bring the index up to date now, in the
    # background, so the client's first memory_search does not pay for them
    threading.Thread(target=_warm_memory, args=(agent,), name="soulframe-warm", daemon=True).start()
    from .periodic import PeriodicSync

    syncer = PeriodicSync.for_agent(agent)
    if syncer is not None:
        syncer.start()
    try:
        if port is None:
            if sys.stdin.isatty():  # someone ran it by hand: say what it is waiting for
                _say("serving MCP over stdio: an MCP client (Claude Desktop, Claude Code, Cursor) "
                     "launches this command and talks to it; press Ctrl-D to stop. "
                     "See `soulframe serve --help`.")
            anyio.run(_run_stdio, server)
            return
        import uvicorn

        app = server.streamable_http_app(host=host)
        shown = f"[{host}]" if ":" in host else host
        _say(f"serving MCP on http://{shown}:{port}/mcp (Ctrl-C to stop)")
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        if syncer is not None:
            syncer.stop()
        agent.close()


async def _run_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
