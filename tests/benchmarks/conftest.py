"""Benchmarks: ``tox -e bench`` (``.ci/run`` runs it after the tests).

Every target is a **ratio to a baseline measured in the same run** — never absolute
milliseconds: the machine is shared (2 cores, several jobs), so only ratios mean anything.
At the end of the session one table lists every figure beside its baseline and target.

Writing a benchmark (``tests/benchmarks/bench_<topic>.py``, a ``test_*`` function):

* time with :func:`interleaved` (subject and baseline alternate, so a busy moment hits both)
  or :func:`timed`; both return :class:`Timing` — ``cpu`` (median CPU seconds of the whole
  process, all threads: robust when other jobs preempt us), ``wall`` (median wall seconds)
  and ``best`` (fastest wall run: the closest to an idle machine). :func:`process_timing`
  does the same for a command run as a process (its CPU from ``getrusage``).
* report through the ``bench`` fixture:

  - ``bench.speed(name, subject, baseline, target=R, baseline_name=...)`` — a **speed
    target**: ``subject / baseline <= R``. Beyond ``R x (1 + NOISE)`` the test fails, and so
    does ``tox -e bench`` and CI (``NOISE`` = 0.25, or ``$SOULFRAME_BENCH_NOISE``); between
    ``R`` and the margin it is printed as "noise".
  - ``bench.quality(name, value, target, higher_is_better=True)`` — a **quality target**
    (recall, a hit rate, a ratio an open issue has yet to reach): printed, marked
    "NOT YET" when it does not hold, never failing — so unrelated work can land.
  - ``bench.info(name, text)`` — a figure with no target (throughput, sizes).

Keep each benchmark to seconds, not minutes: CI runs them all on 2 cores.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import pytest

NOISE = float(os.environ.get("SOULFRAME_BENCH_NOISE", "0.25"))


@attrs.frozen
class Timing:
    cpu: float  # median CPU seconds (user + system, every thread of the process)
    wall: float  # median wall seconds
    best: float  # fastest wall seconds
    runs: int


def _timing(cpu: list[float], wall: list[float]) -> Timing:
    return Timing(statistics.median(cpu), statistics.median(wall), min(wall), len(wall))


def timed(fn: Callable[[], object], runs: int = 9) -> Timing:
    cpu, wall = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return _timing(cpu, wall)


def interleaved(subject: Callable[[], object], baseline: Callable[[], object],
                runs: int = 9, cpu_clock: Callable[[], float] = time.process_time) -> tuple[Timing, Timing]:
    """Time ``subject`` and ``baseline`` alternately, ``runs`` times each. CPU time is the
    whole process's by default; ``cpu_clock=time.thread_time`` counts the calling thread
    alone, for work that runs in it while other threads (a file watcher) come and go."""
    s_cpu, s_wall, b_cpu, b_wall = [], [], [], []
    for _ in range(runs):
        for fn, cpu, wall in ((baseline, b_cpu, b_wall), (subject, s_cpu, s_wall)):
            c, w = cpu_clock(), time.perf_counter()
            fn()
            wall.append(time.perf_counter() - w)
            cpu.append(cpu_clock() - c)
    return _timing(s_cpu, s_wall), _timing(b_cpu, b_wall)


def process_timing(commands: dict[str, Sequence[str]], runs: int = 7,
                   env: dict[str, str] | None = None) -> dict[str, Timing]:
    """Each command run ``runs`` times, the commands interleaved; CPU from ``getrusage`` of
    the child (a process preempted by other jobs waits, but does not spend CPU)."""
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    wall: dict[str, list[float]] = {k: [] for k in commands}
    for args in commands.values():  # compile bytecode, warm the OS cache
        subprocess.run(list(args), check=True, capture_output=True, env=env)
    for _ in range(runs):
        for key, args in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            out = subprocess.run(list(args), capture_output=True, env=env)
            wall[key].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if out.returncode:
                raise AssertionError(f"{' '.join(args)} exited {out.returncode}:\n{out.stderr.decode()[-2000:]}")
            cpu[key].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {k: _timing(cpu[k], wall[k]) for k in commands}


def bytecode_env() -> dict[str, str]:
    """The environment of an installed package: bytecode compiled once, then read (this
    sandbox sets PYTHONDONTWRITEBYTECODE, which would recompile every module on each run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(os.environ.get("TMPDIR", "/tmp"), "soulframe-bench-pyc"))
    return env


@attrs.define
class Row:
    test: str
    kind: str  # speed, quality, info
    name: str
    figure: str
    baseline: str = ""
    target: str = ""
    verdict: str = ""


ROWS: list[Row] = []


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 10 else f"{seconds:.1f} s"


class Bench:
    def __init__(self, test: str) -> None:
        self.test = test

    def speed(self, name: str, subject: float, baseline: float, *, target: float,
              baseline_name: str, unit: Callable[[float], str] = _ms) -> float:
        """A speed target: ``subject / baseline <= target`` (both in the same unit, usually
        seconds). Fails beyond ``target x (1 + NOISE)``. Returns the ratio."""
        ratio = subject / baseline if baseline > 0 else float("inf")
        limit = target * (1 + NOISE)
        verdict = "ok" if ratio <= target else ("noise" if ratio <= limit else "FAIL")
        row = Row(self.test, "speed", name, unit(subject), f"{unit(baseline)} ({baseline_name})",
                  f"{ratio:.2f}x (<= {target:g}x)", verdict)
        ROWS.append(row)
        print(f"\n  [speed] {name}: {row.figure} vs {row.baseline} = {row.target}: {verdict}")
        assert ratio <= limit, (
            f"{name}: {ratio:.2f}x {baseline_name}, target {target:g}x "
            f"(+{NOISE:.0%} noise margin = {limit:.2f}x)")
        return ratio

    def quality(self, name: str, value: float, target: float, *, higher_is_better: bool = True,
                fmt: str = "{:.2f}") -> bool:
        """A quality target: printed (NOT YET when it does not hold), never failing."""
        holds = value >= target if higher_is_better else value <= target
        row = Row(self.test, "quality", name, fmt.format(value), "",
                  f"{'>=' if higher_is_better else '<='} {fmt.format(target)}", "ok" if holds else "NOT YET")
        ROWS.append(row)
        print(f"\n  [quality] {name}: {row.figure} (target {row.target}): {row.verdict}")
        return holds

    def info(self, name: str, text: str) -> None:
        ROWS.append(Row(self.test, "info", name, text))
        print(f"\n  [info] {name}: {text}")


@pytest.fixture
def bench(request: pytest.FixtureRequest) -> Bench:
    return Bench(request.node.nodeid.split("::")[-1])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not ROWS:
        return
    w = terminalreporter
    w.section(f"benchmark figures (speed targets fail beyond +{NOISE:.0%} noise; quality targets never fail)")
    width = max(len(r.name) for r in ROWS)
    for r in ROWS:
        if r.kind == "info":
            w.write_line(f"  {'info':7} {r.name:{width}}  {r.figure}")
        else:
            w.write_line(f"  {r.kind:7} {r.name:{width}}  {r.figure:>12}  vs {r.baseline:34} "
                         f"{r.target:18} {r.verdict}")
