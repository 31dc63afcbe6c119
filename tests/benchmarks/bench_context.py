"""How long collecting the context files of a session takes.

Run with ``.venv/bin/pytest tests/benchmarks/bench_context.py -s``. Prints the median time of
``collect_context`` for a seeded workspace (cold: first read; warm: the mtime cache hit), for
a workspace whose SOUL.md is 5 MB (read capped, truncated), and of the truncation policies
over a 2 MB file. Every prompt build pays the warm figure.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from soulframe import Agent, Session
from soulframe._engine.config import load_config
from soulframe._engine.model import ContextFile
from soulframe._engine.prompt.context import collect_context
from soulframe._engine.workspace import seed_workspace
from soulframe_truncation.fair import FairPolicy
from soulframe_truncation.headtail import HeadTailPolicy
from soulframe_workspace.source import clear_cache


def median_ms(fn: Callable[[], object], runs: int = 30) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def test_collect_context_speed(tmp_path: Path, bench: Any) -> None:
    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "memory" / "2026-01-01.md").write_text("note\n" * 200)
    agent = Agent.open(ws, store__backend="sqlite")
    session = Session.main()

    def cold() -> None:
        clear_cache()
        collect_context(agent, session)

    bench.info("collect_context, seeded workspace", f"cold {median_ms(cold):.2f} ms, "
               f"warm {median_ms(lambda: collect_context(agent, session)):.2f} ms")

    big = tmp_path / "big"
    seed_workspace(big)
    (big / "SOUL.md").write_text("soul line with some words é 🙂\n" * 170_000)  # ~5 MB
    big_agent = Agent.open(big)

    def cold_big() -> None:
        clear_cache()
        collect_context(big_agent, session)

    bench.info("collect_context, 5 MB SOUL.md", f"cold {median_ms(cold_big, 10):.2f} ms, "
               f"warm {median_ms(lambda: collect_context(big_agent, session), 10):.2f} ms")


def test_truncation_speed(bench: Any) -> None:
    config = load_config(search=False)
    text = "".join(f"## Heading {i}\n" + "words and more words\n" * 20 for i in range(5_000))
    files = [ContextFile("SOUL.md", text), ContextFile("AGENTS.md", text[: 30_000])]
    for policy in (HeadTailPolicy(), FairPolicy()):
        ms = median_ms(lambda p=policy: p.truncate_files(files, config), 10)  # type: ignore[misc]
        bench.info(f"truncation, {policy.name}", f"{len(text) / 1e6:.1f} MB + 30 KB of files in {ms:.2f} ms")


def test_judging_linked_context_files_by_the_file_reached(tmp_path: Path, bench: Any) -> None:
    """Privacy follows the file reached (soulframe._engine.prompt.reached): a plain file costs no
    extra system call, a symlinked or hard-linked one the identities of the root files
    (once per build) and one resolve. Measured as a ratio to the plain workspace in the
    same run."""
    import os

    plain = tmp_path / "plain"
    seed_workspace(plain)
    linked = tmp_path / "linked"
    seed_workspace(linked)
    (linked / "notes").mkdir()
    for name in ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md"):
        os.replace(linked / name, linked / "notes" / name)
        os.symlink(f"notes/{name}", linked / name)
    session = Session.group()
    agents = {p.name: Agent.open(p, store__backend="sqlite") for p in (plain, linked)}
    for a in agents.values():
        collect_context(a, session)
    times = {name: median_ms(lambda a=a: collect_context(a, session), 200) for name, a in agents.items()}
    # the resolve a symlink always costs (2.3x before judging) and ~20 µs a file
    bench.speed("collect_context (group, warm), four context files symlinked", times["linked"],
                times["plain"], target=4.0, baseline_name="plain files", unit=lambda ms: f"{ms:.3f} ms")
