"""The MCP server, on the official SDK's low-level ``Server``, for both protocol revisions
the SDK speaks (2026-07-28 and 2025-11-25), over stdio and stateless streamable HTTP.

soulframe's tools arrive from plugins as JSON Schemas, not as Python signatures, so the
low-level server (which takes schemas as they are) fits them better than ``MCPServer``, whose
tools are built by introspecting function signatures. Every handler is stateless: the
session kind and user come from how the server was started and may only be narrowed by a
request (:mod:`.scope`), so any number of HTTP server processes can answer one address.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from soulframe import Session

from .changes import ChangeFeed
from .resources import CONTEXT_TEMPLATE, MEMORY_TEMPLATE, NotServed, ResourceView
from .scope import NARROWER, ScopeError, prompt_kind, prompt_mode, prompt_user
from .typed import as_mcp_tool, as_result, misfit, tool_error
from .workers import (
    ToolWorkers,
    WorkerSpec,
    auto_workers,
    call_here,
    offered_tools,
    one_blas_thread,
    warm_memory,
)

if TYPE_CHECKING:
    # the server owns the agent's lifetime (watchers, close): the whole agent, not AgentLike
    from soulframe import Agent, ToolSpec

log = logging.getLogger("soulframe.serve")

PROMPT_NAME = "system_prompt"
#: resources per resources/list page
PAGE = 500


def build_server(agent: Agent, *, session_kind: str = "main", user_id: str | None = None,
                 allow_remember: bool = True, read_only: bool = False, transport: str = "inproc",
                 watch: bool = False, workers: ToolWorkers | None = None) -> Server[Any]:
    """An MCP server for ``agent``. Each request is handled on its own: one failure is
    reported to the client and the server goes on serving.

    ``transport`` is ``stdio``, ``http`` or ``inproc``: only a stdio connection has a channel
    back to a 2025-11-25 client, so only there is ``resources/subscribe`` offered. ``watch``
    starts the change watcher with the server (:mod:`.changes`). With ``workers``, tool
    calls run in those worker processes (:mod:`.workers`) instead of this process's threads."""
    session = Session(kind=session_kind, user_id=user_id)  # type: ignore[arg-type]
    view = ResourceView(agent, session)
    feed = ChangeFeed(view, legacy_push=transport == "stdio")

    table: list[list[ToolSpec]] = []
    #: the tools whose results are checked against their outputSchema, with their plugin
    checked: dict[str, str] = {}

    def tools() -> list[ToolSpec]:
        # built once: the tools come from the plugins and the sandbox settings, both fixed
        # for the server's life (every plugin's register_tools ran on each call before)
        if not table:
            table.append(offered_tools(agent, session, allow_remember=allow_remember, read_only=read_only))
            checked.update(_outside_tools(agent))
        return table[0]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[as_mcp_tool(t) for t in tools()])

    def input_schema(name: str) -> dict[str, Any] | None:
        # what the SDK checks a 2026-07-28 call's Mcp-Param-* headers against: without it,
        # every tools/call first ran a whole tools/list (every tool built as an MCP type)
        # to find one schema. The offer does not depend on the caller, so this is the same
        # schema the listing gives
        spec = next((t for t in tools() if t.name == name), None)
        return dict(spec.parameters) if spec is not None else None

    limiters: list[anyio.CapacityLimiter] = []
    #: each tool's compiled outputSchema, by name
    validators: dict[str, Any] = {}

    def pool() -> anyio.CapacityLimiter:
        # as many calls at once as there are cores: more threads only take turns at the
        # interpreter lock, and a call that waits its turn in a queue keeps its place
        # (many clients get even latencies instead of a few very slow calls)
        if not limiters:
            limiters.append(anyio.CapacityLimiter(max(2, os.cpu_count() or 2)))
        return limiters[0]

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        offered = tools()
        spec = next((t for t in offered if t.name == params.name), None)
        if spec is None:
            # said in the client's terms: dispatch's own message speaks to a host's code
            # ("the tools passed to dispatch"), and a worker need not be woken for it
            available = ", ".join(sorted(t.name for t in offered)) or "none"
            return tool_error(f"unknown tool {params.name!r}: this server does not offer it to its "
                              f"{session_kind} session; available: {available}")
        arguments = dict(params.arguments or {})
        if workers is not None:  # another process runs it: this one goes on serving HTTP
            # a call that changes nothing, or nothing more when repeated, may go to another
            # worker when its own stopped before answering
            repeatable = spec is not None and (not spec.writes or spec.idempotent)
            outcome = await workers.call(params.name, arguments, repeatable=repeatable)
        else:
            outcome = await anyio.to_thread.run_sync(
                lambda: call_here(agent, params.name, arguments, session=session, tools=offered),
                limiter=pool(),
            )
        if outcome.status != "ok":
            return tool_error(str(outcome.value))
        problem = misfit(spec, outcome.value, validators) if spec is not None and spec.name in checked else None
        if problem is not None:
            owner = checked[params.name]
            log.warning("tool %s (plugin %s) returned a result that does not fit its outputSchema: %s",
                        params.name, owner, problem)
            return tool_error(f"{params.name}: the tool's result does not fit the outputSchema it declares "
                              f"({problem}); a bug in plugin {owner!r}, which registers it")
        return as_result(spec, outcome.value, outcome.text)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT_NAME,
            description=f"The system prompt of agent {agent.id!r}, built from its workspace files.",
            arguments=[
                types.PromptArgument(name="mode", description=(
                    "full, task, minimal or none: this server's session's mode or one that shows less")),
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
            if mode is not None:
                own = await anyio.to_thread.run_sync(lambda: agent.system_prompt(session).mode)
                mode = prompt_mode(session_kind, own, mode)
        except ScopeError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        prompt_session = Session(kind=kind, mode=mode, user_id=prompt_user_id,  # type: ignore[arg-type]
                                 channel=args.get("channel") or None)
        prompt = await anyio.to_thread.run_sync(lambda: agent.system_prompt(prompt_session))
        return types.GetPromptResult(
            description=f"system prompt ({prompt.mode} mode, {kind} session)",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=prompt.text))],
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        if feed.legacy_push:  # a 2025-11-25 client that lists is told when the list changes
            await anyio.to_thread.run_sync(feed.start_watching)
        served = await anyio.to_thread.run_sync(view.served)
        feed.seen(ctx.session)
        start = _cursor(getattr(params, "cursor", None))
        page = served[start:start + PAGE]
        return types.ListResourcesResult(
            resources=[types.Resource(
                name=s.rel, uri=s.uri, mime_type="text/markdown", size=s.size,
                description=(f"{s.rel}, a context file of the workspace" if s.kind == "context"
                             else f"{s.rel}, a memory file"),
                # a user's copy in the store has no modification time to give
                annotations=types.Annotations(last_modified=s.last_modified) if s.last_modified else None,
            ) for s in page],
            next_cursor=str(start + PAGE) if start + PAGE < len(served) else None,
        )

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(
                name="memory-file", uri_template=MEMORY_TEMPLATE, mime_type="text/markdown",
                description=("A memory file by its workspace-relative path, as memory_search returns it: "
                             "memory://MEMORY.md (main sessions only), memory://memory/2026-11-26.md"),
            ),
            types.ResourceTemplate(
                name="context-file", uri_template=CONTEXT_TEMPLATE, mime_type="text/markdown",
                description="A context file this session's prompt shows: SOUL.md, AGENTS.md, TOOLS.md, ...",
            ),
        ])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            _served, text = await anyio.to_thread.run_sync(view.read, uri)
        except NotServed as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        except OSError as exc:  # vanished between the check and the read
            raise MCPError(code=types.INVALID_PARAMS, message=f"{uri}: {exc.strerror or exc}") from None
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)])

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        try:
            return await feed.subscribe(ctx, params)
        except NotServed as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[dict[str, Any]]:
        feed.attach()
        if workers is not None:
            import asyncio

            workers.bind(asyncio.get_running_loop())
        if watch:
            await anyio.to_thread.run_sync(feed.start_watching)
        try:
            yield {}
        finally:
            feed.stop()
            if workers is not None:
                await workers.aclose()

    from importlib.metadata import version

    legacy = transport == "stdio"
    server: Server[Any] = Server(
        "soulframe",
        version=version("soulframe"),
        instructions=(f"Identity, memory and skills of agent {agent.id!r}. Search memory with memory_search "
                      "before answering about prior work, decisions or preferences."),
        lifespan=lifespan,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe if legacy else None,
        on_unsubscribe_resource=feed.unsubscribe if legacy else None,
        on_subscriptions_listen=feed.listen,
    )
    server.feed = feed  # type: ignore[attr-defined]  # for run() and the tests
    return server


def _outside_tools(agent: Agent) -> dict[str, str]:
    """The tools a plugin not shipped with soulframe registers, each with that plugin: their
    results are checked against the schemas they declare. soulframe's own tools are held to
    theirs by its tests; checking every result cost the server about 0.7 ms of CPU per
    search, half again its HTTP and MCP work. A name registered by both counts as outside."""
    from soulframe.kit import list_plugins, what_each_registers

    ours = {p.name for p in list_plugins(agent.pm) if p.dist == "soulframe"}
    return {tool: plugin for plugin, kinds in what_each_registers(agent.pm)[0].items() if plugin not in ours
            for tool in kinds.get("tools", ())}


def _cursor(raw: str | None) -> int:
    if not raw:
        return 0
    try:
        start = int(raw)
    except ValueError:
        raise MCPError(code=types.INVALID_PARAMS, message=f"cursor {raw!r}: use the nextCursor of the last page") from None
    return max(0, start)


class AfterFirstAnswer:
    """Server middleware: the work a long-lived server does besides answering — watching
    for changes, the skills' hot reload, loading the embedding model and syncing the index,
    the periodic sync — starts once the first request is answered (or after ``delay``
    seconds of quiet), so none of it competes with the first answer for the interpreter."""

    def __init__(self, jobs: list[Any], delay: float = 1.0) -> None:
        self.jobs = jobs
        self.answered = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(delay,), name="soulframe-background", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self, delay: float) -> None:
        self.answered.wait(delay)
        for job in self.jobs:
            try:
                job()
            except Exception as exc:  # each job says what went wrong; the server serves on
                log.warning("%s failed: %s: %s", getattr(job, "__name__", job), type(exc).__name__, exc)

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        try:
            return await call_next(ctx)
        finally:
            self.answered.set()


def _say(message: str) -> None:
    # stderr only: on stdio, standard output is the protocol channel
    print(f"soulframe: {message}", file=sys.stderr, flush=True)


def run(agent: Agent, *, port: int | None, host: str, session_kind: str, user_id: str | None,
        allow_remember: bool, read_only: bool = False, allow_hosts: tuple[str, ...] = (),
        workers: int | None = None, opened: tuple[str | None, str | None, str | None] | None = None) -> None:
    """Serve until stopped. ``workers``: tool-call processes for ``--http`` (None: by the
    number of cores, see :func:`.workers.auto_workers`; 0: this process's threads); ``opened``: the
    workspace, config file and agent id the agent was opened with (``-w``, ``--config``,
    ``--agent``), so each worker opens the same agent (None: the agent's workspace)."""
    if not agent.workspace.root.is_dir():
        # a typo in a desktop client's config would otherwise serve an empty agent in silence
        _say(f"warning: the workspace {agent.workspace.root} does not exist; serving an agent with "
             f"no files (create it with `soulframe init {agent.workspace.root}`)")
    if port is not None:
        from .http import check_port

        check_port(host, port)
    pool: ToolWorkers | None = None
    count = 0 if port is None else (auto_workers() if workers is None else workers)
    if count > 0:
        # tool calls in worker processes (see soulframe_mcp.workers): stdio has one client
        # that waits for each answer, so it keeps them in this process
        # the options exactly as given: a worker inherits this process's working directory
        # and environment, so the config is found and read as it was here
        workspace, config_path, agent_id = opened or (str(agent.root), None, None)
        pool = ToolWorkers(WorkerSpec(workspace=workspace, config_path=config_path, agent_id=agent_id,
                                      session_kind=session_kind, user_id=user_id, allow_remember=allow_remember,
                                      read_only=read_only, root=str(agent.root)), count)
        _say(f"tool calls run in up to {count} worker process{'es' if count > 1 else ''}, started as calls "
             "need them, each with its own copy of the embedding model (--workers 0: in this process)")
    server = build_server(agent, session_kind=session_kind, user_id=user_id, allow_remember=allow_remember,
                          read_only=read_only, transport="stdio" if port is None else "http", workers=pool)
    from .periodic import PeriodicSync

    syncer = PeriodicSync.for_agent(agent)

    def watch_skills() -> None:
        # a server lives long: an edited or new SKILL.md is served without a restart
        try:
            agent.skills.watch()
        except Exception as exc:  # no inotify, too many watches: serve anyway, say so
            _say(f"warning: skills hot reload is off ({exc})")

    feed: ChangeFeed = server.feed  # type: ignore[attr-defined]
    memory_on = bool(agent.config.get("memory.enabled"))

    def resync(paths: frozenset[str] | None) -> None:
        # waits for another process's sync (a `memory remember` indexing its note): a
        # client is told of a change once a search can find it. Only the files the events
        # named are read (a walk of 20,000 logs is a quarter second of CPU per change);
        # sync_paths walks when they cannot tell the whole change
        if paths is None:
            agent.memory.sync()
        else:
            agent.memory.sync_paths(paths)

    if memory_on:
        feed.on_change = resync

    def follow_changes() -> None:
        # the watcher syncs the index after every change it sees, so a search need not
        # walk every file first (the periodic sync still catches what a watcher misses)
        if memory_on and feed.watching:
            agent.memory.sync()
            agent.memory.follows_changes = True
            if pool is not None:
                pool.follow_changes()

    # the index kept fresh at start, on changes and on an interval (seed 001 "Memory
    # Sync"), the model loaded before the first memory_search needs it
    # with workers the searches, and so the embedding model, are theirs: this process
    # loads the model only if its watcher has changed files to index
    warm = [one_blas_thread, lambda: warm_memory(agent, model=pool is None), *([pool.start] if pool is not None else [])]
    background = AfterFirstAnswer([feed.start_watching, follow_changes, watch_skills, *warm,
                                   *([syncer.start] if syncer is not None else [])])
    server.middleware.append(background)
    background.start()
    try:
        if port is None:
            if sys.stdin.isatty():  # someone ran it by hand: say what it is waiting for
                _say("serving MCP over stdio: an MCP client (Claude Desktop, Claude Code, Cursor, VS Code) "
                     "launches this command and talks to it; press Ctrl-D to stop. "
                     "See `soulframe serve --help`.")
            anyio.run(_run_stdio, server)
            return
        from .http import serve_http

        serve_http(agent, server, host=host, port=port, allow_hosts=allow_hosts, say=_say,
                   stopping=feed.close_streams)
    finally:
        if syncer is not None:
            syncer.stop()
        agent.close()


async def _run_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)

