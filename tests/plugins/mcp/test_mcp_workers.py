"""``soulframe serve --http`` runs tool calls in worker processes (soulframe_mcp.workers):
the SDK's own client over real HTTP, the real workspace and index, real processes.

What a user would notice: the workers serve what the server was started for (its session,
its tool filter) and nothing wider; a worker that dies is replaced and the server answers
on; stopping the server leaves no process behind; ``--workers 0`` keeps the calls in the
server process, and ``--workers`` without ``--http`` is refused.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import run_cli
from mcp_servers import MEMORY_NOTE, client, http_server, make_workspace, text_of, token_file

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def served_workspace(workspace: Path) -> Path:
    return make_workspace(workspace)


def workers_of(pid: int) -> set[int]:
    """The worker processes (multiprocessing's spawned interpreters) of server ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"spawn_main" in cmdline:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def search(server, query: str) -> dict:
    async with client(server, "2026-07-28") as c:
        found = await c.call_tool("memory_search", {"query": query})
        assert not found.is_error, text_of(found)
        return json.loads(text_of(found))


def test_calls_run_in_workers_that_are_replaced_when_they_die(served_workspace: Path) -> None:
    with http_server(served_workspace, "--workers", "2") as server:
        async def many() -> list[dict]:
            results: list[dict] = [{}] * 6

            async def one(i: int) -> None:
                results[i] = await search(server, "screenshot appearance")

            async with anyio.create_task_group() as tg:
                for i in range(6):
                    tg.start_soon(one, i)
            return results

        for found in anyio.run(many):
            assert found["results"][0]["path"] == "MEMORY.md"
        first = workers_of(server.proc.pid)
        assert 1 <= len(first) <= 2, first  # never more than --workers

        # a worker killed between calls (out of memory, a stray kill): the next call is
        # answered by a new one, no error reaches the client
        for pid in first:
            os.kill(pid, signal.SIGKILL)
        found = anyio.run(search, server, "screenshot appearance")
        assert found["results"][0]["path"] == "MEMORY.md"
        now = workers_of(server.proc.pid)
        assert now and not now & first
        pids = now
    # stopping the server stops its workers
    deadline = time.monotonic() + 15
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in pids)


def test_workers_serve_only_the_servers_session_and_tools(served_workspace: Path) -> None:
    """The session and tool filter the server was started with hold in the workers, which
    open the agent themselves: a group session finds no private memory, a read-only server
    runs no tool that writes even when a client calls one it was not offered."""
    with http_server(served_workspace, "--session", "group", "--read-only", "--workers", "1") as server:
        async def main() -> None:
            async with client(server, "2026-07-28") as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert "memory_remember" not in names
                found = await c.call_tool("memory_search", {"query": "screenshot appearance"})
                assert not found.is_error and MEMORY_NOTE not in text_of(found)
                wrote = await c.call_tool("memory_remember", {"text": "Written through a worker."})
                assert wrote.is_error and "unknown tool" in text_of(wrote)

        anyio.run(main)
        assert workers_of(server.proc.pid)  # the calls went to a worker
    assert not any("Written through a worker." in p.read_text() for p in (served_workspace / "memory").glob("*.md"))


def test_workers_zero_keeps_calls_in_the_server_process(served_workspace: Path) -> None:
    with http_server(served_workspace, "--workers", "0") as server:
        found = anyio.run(search, server, "screenshot appearance")
        assert found["results"][0]["path"] == "MEMORY.md"
        assert not workers_of(server.proc.pid)


def test_workers_need_http(served_workspace: Path) -> None:
    out = run_cli("-w", str(served_workspace), "serve", "--workers", "2")
    assert out.returncode == 2 and "--workers needs --http" in out.stderr


def _call_while_its_worker_dies(server, tool: str, arguments: dict) -> object:
    """Call ``tool`` through the server's only worker, held stopped (SIGSTOP) so the call is
    certain to be waiting in it unanswered, then kill that worker: what the client gets."""
    async def main() -> object:
        async with client(server, "2026-07-28") as c:
            await c.call_tool("memory_search", {"query": "warm"})  # the worker is up
            (worker,) = workers_of(server.proc.pid)
            os.kill(worker, signal.SIGSTOP)
            outcome: dict[str, object] = {}

            async def call() -> None:
                outcome["result"] = await c.call_tool(tool, arguments)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.sleep(1.0)  # the front has handed it over: it sits in the stopped worker
                assert "result" not in outcome
                os.kill(worker, signal.SIGKILL)
            assert worker not in workers_of(server.proc.pid)
            return outcome["result"]

    return anyio.run(main)


def test_a_search_whose_worker_dies_mid_call_is_answered_by_another(served_workspace: Path) -> None:
    """memory_search writes nothing: a worker that dies holding it costs the client nothing."""
    with http_server(served_workspace, "--workers", "1") as server:
        result = _call_while_its_worker_dies(server, "memory_search", {"query": "screenshot appearance"})
        assert not result.is_error, text_of(result)
        assert json.loads(text_of(result))["results"][0]["path"] == "MEMORY.md"
        assert len(workers_of(server.proc.pid)) == 1  # replaced


def test_a_note_whose_worker_dies_mid_call_is_not_written_twice(served_workspace: Path) -> None:
    """memory_remember appends: run again after a worker died holding it, it could be written
    twice, so the client is told to call again instead."""
    with http_server(served_workspace, "--workers", "1") as server:
        result = _call_while_its_worker_dies(server, "memory_remember", {"text": "Lunch moved to Friday."})
        assert result.is_error
        assert "stopped before it answered; call again" in text_of(result)
        found = anyio.run(search, server, "screenshot appearance")  # the server answers on
        assert found["results"][0]["path"] == "MEMORY.md"
    notes = "".join(p.read_text() for p in (served_workspace / "memory").glob("*.md"))
    assert "Lunch moved to Friday." not in notes


def test_two_cores_get_two_workers_by_default() -> None:
    """The default --workers: on 2 cores two workers served 8 clients at 218-268 searches/s
    against 144-163 on the server's own threads (docs/serving.md); one core has nothing to
    run them on."""
    from soulframe_mcp.workers import MAX_AUTO_WORKERS, auto_workers

    assert [auto_workers(n) for n in (1, 2, 3, 4, 8, 64)] == [0, 2, 2, 3, MAX_AUTO_WORKERS, MAX_AUTO_WORKERS]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the default runs no worker on one core")
def test_serve_http_runs_calls_in_workers_by_default(served_workspace: Path) -> None:
    with http_server(served_workspace) as server:
        found = anyio.run(search, server, "screenshot appearance")
        assert found["results"][0]["path"] == "MEMORY.md"
        assert workers_of(server.proc.pid)
    # the user is told, and how to keep one process
    from soulframe_mcp.workers import auto_workers

    said = server.proc.stderr.read()
    assert f"tool calls run in up to {auto_workers()} worker processes" in said
    assert "(--workers 0: in this process)" in said


def test_sigterm_stops_a_server_while_a_client_listens(served_workspace: Path) -> None:
    """A host that listens for changes (a subscriptions/listen stream, the 2026-07-28 way to
    get notifications over HTTP) holds its stream open as long as the server runs: SIGTERM
    must end it, not wait for it, or a supervisor's stop only ever ends in SIGKILL with the
    token file and the workers left behind."""
    with http_server(served_workspace, "--workers", "1") as server:
        where = token_file(served_workspace, server.port)

        async def main() -> None:
            async with client(server, "2026-07-28") as c:
                await c.call_tool("memory_search", {"query": "warm"})  # a worker is up
                workers = workers_of(server.proc.pid)
                assert workers
                async with c.listen(resources_list_changed=True) as sub:
                    server.proc.terminate()
                    with anyio.fail_after(30):  # the stream is closed by the server, not dropped
                        assert [event async for event in sub] == []
            stopped = await anyio.to_thread.run_sync(lambda: server.proc.wait(timeout=30))
            assert stopped == 0
            assert not any(alive(p) for p in workers)

        anyio.run(main)
        assert not where.exists()
        said = server.proc.stderr.read()
        assert "stopping" in said and "Traceback" not in said, said
