"""`soulframe serve` as hosts meet it: how soon it answers after it starts, and how it serves
many clients at once. Every figure is printed beside a baseline measured in the same run.

Targets (issues 27 and 29):

* **first answer**: from starting `soulframe serve` (stdio) to the answer of the client's first
  request, at most 2x the wall time and 1.5x the CPU time of `python -c "import mcp"` (the SDK
  alone; on a quiet machine that is 0.6-0.8 s, so the first answer comes within 1.5 s). CPU
  time is the steadier figure on a shared machine.
* **8 concurrent clients**: `serve --http` on a 300-file workspace with the offline model,
  8 of the SDK's own clients calling `memory_search` at once, serves at least the rate of
  the same searches made one after another in-process (`agent.memory.search`, what one call
  costs without MCP), with p99 latency at most 3x the p50 and no error.
* **memory flat**: the server's resident memory stays within 10 MB of where it stood after
  warming up, over a soak of ``SOULFRAME_BENCH_SOAK_S`` seconds (default 60; the issue's
  10-minute soak is ``SOULFRAME_BENCH_SOAK_S=600``).
"""

from __future__ import annotations

import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import attrs
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

RUNS = 5
CLIENTS = 8
FILES = 300
SOAK_S = float(os.environ.get("SOULFRAME_BENCH_SOAK_S", "60"))
TICK = os.sysconf("SC_CLK_TCK")

PEOPLE = ["Priya", "Tomas", "Lena", "Marcus", "Dr Okafor", "Aiko", "Jonas", "Wren", "Farah", "Nils"]
TOPICS = ["the knee appointment", "the studio rent", "the Lisbon trip", "the spare house key", "the quarterly report",
          "the dark-mode screenshots", "the release notes", "the bike repair", "the team offsite", "the tax return"]
VERBS = ["moved", "paid", "booked", "forgot", "finished", "asked about", "cancelled", "reviewed", "postponed", "shared"]
QUERIES = [f"what happened with {t}" for t in TOPICS] + [f"what did {p} do" for p in PEOPLE] + [
    "when is the next appointment", "who has the spare key", "anything about money", "travel plans",
    "what was finished last week", "who reviewed the report"]


def _env() -> dict[str, str]:
    # bytecode as a user's installed package has it: compiled once, then read
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system, all threads) a running process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _tree(pid: int) -> list[int]:
    """``pid`` and its child processes (the server's tool-call workers)."""
    found = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of the server and its workers together (a worker holds its own
    interpreter and model: leaving it out would hide where the memory went)."""
    total = 0.0
    for p in _tree(pid):
        try:
            total += _rss_mb(p)
        except (OSError, AssertionError):
            continue
    return total


def _tree_cpu(pid: int) -> float:
    total = 0.0
    for p in _tree(pid):
        try:
            total += _cpu_of(p)
        except (OSError, IndexError, ValueError):
            continue
    return total


def _process(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, env=_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


FIRST = {
    "2025-11-25": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
    "2026-07-28": {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}}},
}


def _first_answer(ws: Path, revision: str) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "serve"], env=_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(FIRST[revision]) + "\n").encode())
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    wall = time.perf_counter() - start
    cpu = _cpu_of(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=60)
    assert "result" in answer, answer
    return wall, cpu


def test_first_answer_after_start(tmp_path: Path) -> None:
    ws = tmp_path / "agent"
    subprocess.run([sys.executable, "-m", "soulframe", "init", str(ws)], check=True, capture_output=True, env=_env())
    _first_answer(ws, "2025-11-25")  # bytecode compiled, caches warm
    base = [_process([sys.executable, "-c", "import mcp"]) for _ in range(RUNS)]
    base_wall = statistics.median(b[0] for b in base)
    base_cpu = statistics.median(b[1] for b in base)
    print(f"\n  {'':42} {'wall':>9}  {'':10} {'CPU':>9}")
    label = 'python -c "import mcp"'
    print(f"  {label:42} {base_wall * 1000:6.0f} ms  {'(baseline)':10} "
          f"{base_cpu * 1000:6.0f} ms  (baseline)")
    for revision in FIRST:
        runs = [_first_answer(ws, revision) for _ in range(RUNS)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"  {'serve: first answer (' + revision + ')':42} {wall * 1000:6.0f} ms  {wall / base_wall:5.2f}x     "
              f"{cpu * 1000:6.0f} ms  {cpu / base_cpu:5.2f}x   (targets 2x wall, 1.5x CPU)")
        assert cpu <= 1.5 * base_cpu, f"first answer ({revision}) used {cpu:.2f} s CPU, {cpu / base_cpu:.2f}x the SDK import"
        assert wall <= 2.0 * base_wall, f"first answer ({revision}) took {wall:.2f} s, {wall / base_wall:.2f}x the SDK import"


# --------------------------------------------------------------------------- many clients


def _workspace(root: Path) -> Path:
    ws = root / "agent"
    subprocess.run([sys.executable, "-m", "soulframe", "init", str(ws)], check=True, capture_output=True, env=_env())
    rnd = random.Random(29)
    mem = ws / "memory"
    mem.mkdir(exist_ok=True)
    for i in range(FILES - 1):
        day = f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
        lines = [f"# {day}", ""] + [
            f"- {rnd.choice(PEOPLE)} {rnd.choice(VERBS)} {rnd.choice(TOPICS)} ({rnd.randint(1, 99)})."
            for _ in range(6)]
        (mem / f"{day}-{i:03d}.md").write_text("\n".join(lines) + "\n")
    (ws / "MEMORY.md").write_text("# Memory\n\n- Priya prefers dark-mode screenshots.\n")
    subprocess.run([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "index"],
                   check=True, capture_output=True, env=_env(), timeout=1800)
    return ws


def _in_process_rate(ws: Path, seconds: float = 10.0, *, sync: bool = True) -> tuple[float, float]:
    """Searches per second, one after another in this process, and CPU seconds per search."""
    from soulframe._engine.agent import Agent
    from soulframe._engine.model import Session

    agent = Agent.open(ws)
    try:
        for q in QUERIES:  # the model loaded, every query embedded once, as in the server
            agent.memory.search(q, session=Session.main())
        done, start, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - start < seconds:
            agent.memory.search(QUERIES[done % len(QUERIES)], session=Session.main(), sync=sync)
            done += 1
        return done / (time.perf_counter() - start), (time.process_time() - cpu) / done
    finally:
        agent.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@attrs.define
class Run:
    """What the clients saw in each phase, and the server's memory over the soak."""

    latencies: dict[str, list[float]] = attrs.Factory(dict)
    seconds: dict[str, float] = attrs.Factory(dict)
    errors: list[str] = attrs.Factory(list)
    rss: list[float] = attrs.Factory(list)
    #: CPU seconds over each phase: the server with its workers, and this process (the clients)
    server_cpu: dict[str, float] = attrs.Factory(dict)
    client_cpu: dict[str, float] = attrs.Factory(dict)
    processes: int = 0


async def _serve_clients(url: str, token: str, pid: int, phases: list[tuple[str, float]]) -> Run:
    """CLIENTS SDK clients, connected once (as a host keeps its connection), calling
    memory_search back to back through each phase in turn."""
    run = Run()
    phase = {"name": ""}
    connected = anyio.Event()
    ready: list[int] = []
    done = anyio.Event()

    async def one(n: int) -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120))
        async with http, Client(streamable_http_client(url, http_client=http), mode="2026-07-28",
                                read_timeout_seconds=120) as c:
            i = n
            await c.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)]})  # tools listed once
            ready.append(n)
            if len(ready) == CLIENTS:
                connected.set()
            await connected.wait()
            while not done.is_set():
                name = phase["name"]
                start = time.perf_counter()
                try:
                    r = await c.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)]})
                    if r.is_error or "results" not in (r.structured_content or {}):
                        run.errors.append(str(r.content)[:200])
                except Exception as exc:
                    run.errors.append(f"{type(exc).__name__}: {exc}")
                run.latencies.setdefault(name, []).append(time.perf_counter() - start)
                i += CLIENTS

    async def conduct() -> None:
        await connected.wait()
        for name, seconds in phases:
            phase["name"] = name
            start = time.perf_counter()
            server, client = _tree_cpu(pid), time.process_time()
            if name == "soak":
                run.rss.append(_tree_rss_mb(pid))
                while time.perf_counter() - start < seconds:
                    await anyio.sleep(min(5.0, seconds))
                    run.rss.append(_tree_rss_mb(pid))
            else:
                await anyio.sleep(seconds)
            run.seconds[name] = time.perf_counter() - start
            run.server_cpu[name] = _tree_cpu(pid) - server
            run.client_cpu[name] = time.process_time() - client
            run.processes = len(_tree(pid))
        phase["name"] = "end"
        done.set()

    async with anyio.create_task_group() as tg:
        for n in range(CLIENTS):
            tg.start_soon(one, n)
        tg.start_soon(conduct)
    return run


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.timeout(300 + 2 * SOAK_S)  # the suite's 300 s would cut a 10-minute soak short
def test_eight_clients_over_http(tmp_path: Path, bench: Any) -> None:
    from soulframe_embeddings.local import LocalProvider

    if not LocalProvider().available():
        pytest.skip("offline model not installed")
    ws = _workspace(tmp_path)
    baseline, baseline_cpu = _in_process_rate(ws)
    unsynced, _ = _in_process_rate(ws, sync=False)
    from threadpoolctl import threadpool_limits

    # not the baseline, printed beside it: the in-process search's vector scan lets NumPy's
    # BLAS split one small product over both cores and busy-wait, which costs it CPU the
    # server's workers (one BLAS thread each) do not spend; this is the bar without that
    with threadpool_limits(limits=1, user_api="blas"):
        one_blas, one_blas_cpu = _in_process_rate(ws, 5.0)
    port = _free_port()
    env = {**_env(), "SOULFRAME_SERVE_TOKEN": "bench-" + "t" * 40}
    # SOULFRAME_BENCH_WORKERS: the server's --workers (default: the server's own choice)
    workers = ["--workers", os.environ["SOULFRAME_BENCH_WORKERS"]] if os.environ.get("SOULFRAME_BENCH_WORKERS") else []
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "serve", "--http", str(port), *workers],
                            env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 120
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline and proc.poll() is None, "serve --http did not start"
            time.sleep(0.1)
        run = anyio.run(_serve_clients, url, env["SOULFRAME_SERVE_TOKEN"], proc.pid,
                        [("warm", 15.0), ("measure", 30.0), ("soak", SOAK_S)])
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    latencies = sorted(run.latencies["measure"])
    rate = len(latencies) / run.seconds["measure"]
    errors = run.errors
    samples = run.rss
    settled = samples[0]
    p50 = latencies[len(latencies) // 2]
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    drift = max(abs(s - settled) for s in samples)
    served_cpu = run.server_cpu["measure"] / len(latencies)
    client_cpu = run.client_cpu["measure"] / len(latencies)
    print(f"\n  in-process search, one thread      {baseline:7.1f} searches/s (baseline), "
          f"{baseline_cpu * 1000:5.2f} ms CPU each")
    print(f"  ... the same without its sync walk {unsynced:7.1f} searches/s (what the server's watcher saves)")
    print(f"  ... the same, BLAS on one thread   {one_blas:7.1f} searches/s, {one_blas_cpu * 1000:5.2f} ms CPU each "
          f"(served: {rate / one_blas:4.2f}x of it)")
    print(f"  serve --http, {CLIENTS} SDK clients        {rate:7.1f} searches/s ({rate / baseline:4.2f}x, target >= 1x); "
          f"CPU per request {served_cpu * 1000:5.2f} ms in the server ({run.processes} processes), "
          f"{client_cpu * 1000:5.2f} ms in the clients")
    print(f"  latency p50 {p50 * 1000:6.0f} ms, p99 {p99 * 1000:6.0f} ms  ({p99 / p50:4.2f}x, target <= 3x); "
          f"errors {len(errors)}")
    print(f"  resident memory (server and workers) after warm-up {settled:6.1f} MB; over a {SOAK_S:.0f} s soak "
          f"{min(samples):6.1f}-{max(samples):6.1f} MB (drift {drift:4.1f} MB, target <= 10 MB)")
    assert not errors, errors[:5]
    # Issue 29's bar: the server with 8 clients serves at least the in-process rate, as a
    # speed target on the time per search. On 2 cores it holds with the default workers
    # (two processes: 218-268 searches/s, 0.85-1.26x, median 1.03x over eight runs); the
    # calls on the server's own threads reached 0.54-0.61x (one core's worth of Python
    # for HTTP, MCP and the searches). docs/serving.md has the runs.
    bench.speed(f"serve --http, {CLIENTS} SDK clients, time per search", 1 / rate, 1 / baseline,
                target=1.0, baseline_name="one in-process search after another")
    assert p99 <= 3 * p50, f"p99 {p99 * 1000:.0f} ms is {p99 / p50:.1f}x p50 {p50 * 1000:.0f} ms"
    assert drift <= 10, f"resident memory moved {drift:.1f} MB during the soak"
