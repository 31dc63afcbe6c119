"""Tool calls in worker processes, for ``soulframe serve --http`` on a machine with several cores.

Why processes: one tool call (a memory search) is mostly Python, and a Python process runs
Python on one core at a time. Threads only took turns: with 8 clients the server spent about
as much interpreter time per request on HTTP and the MCP SDK as on the search itself, all of
it on one core, and served well under the rate one in-process loop reaches. Here the front
process keeps what must be shared (the listening socket, the token, the MCP protocol, the
change watcher and its notifications, resources and prompts) and hands each ``tools/call`` to
a pool of worker processes, each with the agent opened as the server opened it (same
workspace, config, agent id, session and tool filter). Calls are balanced per request, not
per connection, so one busy client cannot pin a worker while another idles.

Workers start on demand, up to the limit: an idle server with one client runs one worker
(started, with the embedding model loaded, once the first answer is out); concurrent calls
add workers, each costing an interpreter and a copy of the model. A worker that dies (killed,
out of memory) fails the calls it held as tool errors; the pool is replaced for the next call.

Workers search with the index's own freshness check (``sync_if_stale``): the front's watcher
syncs the index after a change, and a worker that sees the change first syncs it itself
(another process's sync is waited for, never repeated).

This module must stay light: a worker imports it, soulframe and the tool plugins, never the
MCP SDK.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from soulframe import AgentLike, Session, ToolSpec

log = logging.getLogger("soulframe.serve")

#: the default --workers on 3 cores or more: one per core but one, at most this many (each
#: holds its own interpreter and copy of the model)
MAX_AUTO_WORKERS = 4


def auto_workers(cpus: int | None = None) -> int:
    """Worker processes for ``--http`` when ``--workers`` is not given: none on one core
    (nothing to run them on), two on 2 cores, one per core but one (left to the server
    process) on more, at most :data:`MAX_AUTO_WORKERS`. On 2 cores two workers served 8
    clients at 218-268 searches/s against 144-163 with the calls on the server's own
    threads (docs/serving.md), for ~90 MB of memory each."""
    if cpus is None:
        cpus = os.cpu_count() or 1
    return 0 if cpus < 2 else min(max(cpus - 1, 2), MAX_AUTO_WORKERS)


def offered_tools(agent: AgentLike, session: Session, *, allow_remember: bool, read_only: bool) -> list[ToolSpec]:
    """The tools this server offers: the session's, less memory_remember (``--no-remember``)
    and every tool that writes (``--read-only``). The front lists these; a worker calls only
    these, so a client cannot reach a tool the listing left out."""
    offered: list[ToolSpec] = agent.tools(session)
    if not allow_remember:
        offered = [t for t in offered if t.name != "memory_remember"]
    if read_only:
        offered = [t for t in offered if not t.writes]
    return offered


@attrs.frozen
class Outcome:
    """One call's result as the front turns it into MCP: ``ok`` with the JSON result,
    ``tool_error`` (the tool refused: bad arguments, a path outside the workspace) or
    ``error`` (a handler bug, already logged where it happened)."""

    status: str
    value: Any
    #: the JSON text of an ``ok`` value, made where the value was: the front sends it as
    #: the result's text instead of encoding the value again for every request
    text: str | None = None


def call_here(agent: AgentLike, name: str, arguments: dict[str, Any], *, session: Session,
              tools: list[ToolSpec]) -> Outcome:
    """Run one tool call in this process."""
    from soulframe.kit import ToolError, dispatch

    try:
        result = dispatch(agent, name, arguments, session=session, tools=tools)
    except ToolError as exc:
        return Outcome("tool_error", str(exc))
    except Exception as exc:  # a handler bug must not take the server down
        log.exception("tool %s failed", name)
        return Outcome("error", f"{name} failed: {type(exc).__name__}: {exc}")
    # plain JSON: what the client gets anyway, and all that crosses from a worker
    plain, text = as_json(result)
    return Outcome("ok", plain, text)


def as_json(result: Any) -> tuple[Any, str]:
    """``result`` as plain JSON, and its text. JSON has no NaN or Infinity (RFC 8259): such
    a float becomes null, as the SDK writes it in the structured content, so the text a
    strict parser reads (a JavaScript host's ``JSON.parse``) agrees with it."""
    try:
        text = json.dumps(result, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:  # a float that is not a finite number (a circular value raises again)
        text = json.dumps(_finite(json.loads(json.dumps(result, ensure_ascii=False, default=str))),
                          ensure_ascii=False, allow_nan=False)
    return json.loads(text), text


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def warm_memory(agent: AgentLike, *, model: bool = True, wait: bool = False) -> None:
    """Open the index, sync it and (with ``model``) load the embedding model, one query's
    worth. Quiet: what goes wrong here is reported by the first search that meets it.
    ``wait``: when another process is indexing, wait for it (a worker takes no call before
    the index is current: a search skips a sync another process holds, and would otherwise
    find a half-built index on a first start)."""
    import warnings

    try:
        if not agent.config.get("memory.enabled"):
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory = agent.memory
            memory.sync(blocking=wait)
            provider = memory.embedder if model else None
            if provider is not None:
                provider.embed_query("warm up")
    except Exception as exc:  # never take the server down from here
        log.debug("memory warm-up failed: %s", exc)


@attrs.frozen
class WorkerSpec:
    """How the front opened its agent and what it serves: all a worker needs to open the
    same agent and offer the same tools (plain values: it crosses to a new interpreter)."""

    workspace: str | None
    config_path: str | None
    agent_id: str | None
    session_kind: str
    user_id: str | None
    allow_remember: bool
    read_only: bool
    #: the front's workspace: a worker that opened another one serves nothing
    root: str


# --------------------------------------------------------------------------- in a worker

_worker: dict[str, Any] = {}


def _start(spec: WorkerSpec, parent: int, following: Any = None) -> None:
    """A worker's initializer: open the agent, warm its index and model."""
    import signal

    from soulframe import Agent, Session, SoulframeError
    from soulframe.kit import load_config

    # Ctrl-C reaches the whole process group: the front stops the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(parent,), name="soulframe-worker-parent", daemon=True).start()
    agent = Agent(load_config(spec.config_path, workspace=spec.workspace, agent_id=spec.agent_id),
                  agent_id=spec.agent_id)
    if os.path.realpath(agent.root) != os.path.realpath(spec.root):
        raise SoulframeError(f"a worker opened the workspace {agent.root}, not the server's {spec.root}")
    session = Session(kind=spec.session_kind, user_id=spec.user_id)  # type: ignore[arg-type]
    tools = offered_tools(agent, session, allow_remember=spec.allow_remember, read_only=spec.read_only)
    memory = agent.memory if agent.config.get("memory.enabled") else None
    _worker.update(agent=agent, session=session, tools=tools, memory=memory, following=following)
    one_blas_thread()
    warm_memory(agent, wait=True)


def one_blas_thread() -> None:
    """NumPy's BLAS on one thread, for the whole process. A server's parallelism is its
    concurrent calls (threads or workers): a BLAS that splits each small product of a search
    over every core, then busy-waits for its threads, only takes cores from the other calls
    (measured on 2 cores: ~16 ms of CPU per search instead of ~5, and one client's searches
    cost the server ~24 ms of CPU each instead of ~9)."""
    try:
        import numpy  # noqa: F401  # loads the BLAS, so there is one to limit
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
    except Exception as exc:  # only ever costs speed
        log.debug("BLAS threads not limited: %s", exc)


def _exit_with(parent: int) -> None:
    # a front killed outright (SIGKILL) cannot stop its workers: they stop themselves
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _call(name: str, arguments: dict[str, Any]) -> Outcome:
    memory, following = _worker["memory"], _worker["following"]
    if memory is not None and following is not None:
        # while the front's watcher syncs the index after every change, a search need not
        # look for changes first (as in a single-process server: seed 001 "Memory Sync")
        memory.follows_changes = bool(following.value)
    return call_here(_worker["agent"], name, arguments, session=_worker["session"], tools=_worker["tools"])


def _serve(conn: Any, spec: WorkerSpec, parent: int, following: Any) -> None:
    """A worker's life: open the agent, say so, then answer one call at a time until the
    front closes the pipe."""
    import pickle

    _start(spec, parent, following)
    conn.send_bytes(pickle.dumps(os.getpid()))
    while True:
        try:
            name, arguments = pickle.loads(conn.recv_bytes())
        except EOFError:
            return
        conn.send_bytes(pickle.dumps(_call(name, arguments), protocol=pickle.HIGHEST_PROTOCOL))


# --------------------------------------------------------------------------- in the front


class WorkerGone(RuntimeError):
    """The worker process ended (killed, crashed, failed to start) before it answered."""


@attrs.define(eq=False)
class _Worker:
    process: Any
    reader: Any
    writer: Any

    async def exchange(self, message: Any) -> Any:
        """Send one pickled message, read one back (multiprocessing's framing: the worker
        talks through a plain ``Connection``)."""
        import pickle
        import struct

        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.writer.write(struct.pack("!i", len(data)) + data if len(data) <= 0x7FFFFFFF
                          else struct.pack("!iQ", -1, len(data)) + data)
        return await self.receive()

    async def receive(self) -> Any:
        import asyncio
        import pickle
        import struct

        try:
            (size,) = struct.unpack("!i", await self.reader.readexactly(4))
            if size == -1:  # over 2 GiB
                (size,) = struct.unpack("!Q", await self.reader.readexactly(8))
            return pickle.loads(await self.reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise WorkerGone(f"worker process {self.process.pid} stopped (exit code "
                             f"{self.process.exitcode})") from exc

    def stop(self) -> None:
        """Close the pipe: the worker ends when it has answered the call it holds."""
        self.writer.close()

    def end(self, timeout: float) -> None:
        self.process.join(timeout=timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)


class ToolWorkers:
    """The worker processes the front hands tool calls to: one call per worker at a time,
    a call waiting its turn in order; a new worker started while every worker is busy and
    there are fewer than ``count``. Lives on the server's event loop: no thread of the front
    takes part in a call."""

    def __init__(self, spec: WorkerSpec, count: int) -> None:
        import multiprocessing
        from collections import deque

        if count < 1:
            raise ValueError(f"workers = {count}: at least one")
        self.spec = spec
        self.count = count
        self._idle: list[_Worker] = []
        self._live: list[_Worker] = []
        self._starting = 0
        self._waiting: deque[Any] = deque()
        self._tasks: set[Any] = set()
        self._ended: list[_Worker] = []
        self._loop: Any = None
        self._closed = False
        #: workers that did not start (each one is logged)
        self.failed = 0
        #: shared with every worker: 1 while the front's watcher syncs the index after each change
        self._following: Any = multiprocessing.get_context("spawn").Value("b", 0, lock=False)

    def follow_changes(self) -> None:
        """The front's watcher now syncs the index after every change: the workers' searches
        skip their own check for changed files."""
        self._following.value = 1

    def bind(self, loop: Any) -> None:
        """The server's event loop, where every call and every worker's pipe lives."""
        self._loop = loop

    async def _launch(self) -> None:
        import asyncio
        import multiprocessing
        import socket

        process: Any = None
        try:
            # spawn: a fresh interpreter, never a fork of a process running watcher
            # threads and holding SQLite connections
            ctx = multiprocessing.get_context("spawn")
            mine, theirs = ctx.Pipe(duplex=True)
            process = ctx.Process(target=_serve, args=(theirs, self.spec, os.getpid(), self._following),
                                  name="soulframe-serve-worker", daemon=True)
            try:
                await asyncio.to_thread(process.start)
                sock = socket.socket(fileno=os.dup(mine.fileno()))
            finally:
                theirs.close()
                mine.close()
            reader, writer = await asyncio.open_unix_connection(sock=sock)
            worker = _Worker(process, reader, writer)
            await worker.receive()  # its agent is open and its model loaded
        except Exception as exc:
            log.warning("a worker process for tool calls did not start: %s", exc)
            if process is not None and process.pid is not None and process.is_alive():
                process.kill()
            self._starting -= 1
            self.failed += 1
            if not self._live and not self._starting:  # nobody left to answer the waiting calls
                while self._waiting:
                    waiter = self._waiting.popleft()
                    if not waiter.done():
                        waiter.set_exception(WorkerGone(f"no worker process could start ({exc})"))
            return
        self._starting -= 1
        if self._closed:
            worker.stop()
            return
        self._live.append(worker)
        self._release(worker)

    def _release(self, worker: _Worker) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self._idle.append(worker)

    def _drop(self, worker: _Worker) -> None:
        if worker in self._live:
            self._live.remove(worker)
        if worker in self._idle:
            self._idle.remove(worker)
        worker.stop()
        self._ended.append(worker)
        if self._waiting and not self._closed and len(self._live) + self._starting < self.count:
            self._spawn()  # calls are waiting for the worker that just went

    async def _acquire(self) -> _Worker:
        import asyncio

        if self._closed:
            raise WorkerGone("the server is stopping")
        while self._idle:
            worker = self._idle.pop()
            if worker.process.is_alive():
                return worker
            # ended while idle (killed, out of memory): replaced before any call is lost
            log.warning("worker process %s stopped (exit code %s); starting another",
                        worker.process.pid, worker.process.exitcode)
            self._drop(worker)
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        if len(self._live) + self._starting < self.count and (self.failed < 3 or not self._live):
            # after three failed starts the workers already running serve on their own
            self._spawn()
        return await waiter  # type: ignore[no-any-return]

    def _spawn(self) -> None:
        import asyncio

        self._starting += 1  # counted now: the next call must not start another
        task = asyncio.get_running_loop().create_task(self._launch())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start(self) -> None:
        if not self._live and not self._starting:
            self._starting += 1
            await self._launch()

    def start(self) -> None:
        """Start one worker ahead of the first call (its agent opened, its model loaded);
        called from the server's background thread."""
        import asyncio

        if self._loop is not None and not self._closed:
            asyncio.run_coroutine_threadsafe(self._start(), self._loop).result()

    async def call(self, name: str, arguments: dict[str, Any], *, repeatable: bool = False) -> Outcome:
        """Run one tool call in a worker. ``repeatable`` (the tool writes nothing, or is
        idempotent): when the worker stops before it answers, the call goes once more to
        another worker. A worker killed just before the call reached it cannot always be
        told from one that died running it (the kill is not seen at once), so only a call
        that is safe to run twice is run again; any other gets an error saying so."""
        import asyncio

        async def exchange() -> Outcome:
            for _ in range(2 if repeatable else 1):
                worker = await self._acquire()
                try:
                    outcome: Outcome = await worker.exchange((name, arguments))
                except WorkerGone as exc:
                    self._drop(worker)
                    log.warning("%s: %s", name, exc)
                    continue
                except BaseException:
                    self._drop(worker)  # an answer half read: the pipe is no use to anyone
                    raise
                self._release(worker)
                return outcome
            return Outcome("error", f"{name}: the worker process running this call stopped before it "
                                    "answered; call again")

        # a client that gives up (disconnects) cancels its request, not the call: the worker
        # finishes it (a note half written helps nobody) and takes the next
        task = asyncio.get_running_loop().create_task(exchange())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            return await asyncio.shield(task)
        except WorkerGone as exc:
            return Outcome("error", f"{name}: {exc}")

    async def aclose(self) -> None:
        """Stop every worker, on the event loop as the server stops (each finishes the call
        it holds)."""
        import asyncio

        self._closed = True
        for worker in list(self._live):
            self._drop(worker)
        ended, self._ended = self._ended, []
        for worker in ended:
            await asyncio.to_thread(worker.end, 10.0)
