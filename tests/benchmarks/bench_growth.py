"""What a growing workspace costs on paths that used to walk every memory file
(``tox -e bench``; ratios to a baseline measured in the same run, see conftest.py). The
workspaces hold 2,000 daily logs (``SOULFRAME_BENCH_GROWTH_FILES``), a realistic heavy user:

* the web inspector's Memory page at most 2.2x one walk of the memory tree (status and the
  timeline share one walk; with two it measured 3.0x, with one 1.9x: the rest is the
  index's records and the 90 logs the timeline reads);
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Any

from .bench_memory import agent_for, make_workspace
from .conftest import interleaved

FILES = int(os.environ.get("SOULFRAME_BENCH_GROWTH_FILES", "2000"))


def _aged(ws: Path) -> Path:
    """Everything written an hour ago, as a workspace left alone (a file written in the last
    seconds is hashed again by a sync, whatever the change)."""
    old = time.time() - 3600
    for p in (ws / "memory").iterdir():
        os.utime(p, (old, old))
    os.utime(ws / "memory", (old, old))
    return ws


def test_the_memory_page_costs_one_walk(tmp_path: Path, bench: Any) -> None:
    from soulframe_ui.memory_page import index_facts

    ws = _aged(make_workspace(tmp_path / "ws", FILES, entries=2))
    agent = agent_for(ws, tmp_path / "state", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.sync()
        page, walk = interleaved(lambda: index_facts(agent), lambda: agent.memory.files(), runs=7)
    agent.close()
    bench.speed(f"Memory page, {FILES:,} logs", page.cpu, walk.cpu, target=2.2,
                baseline_name="one walk of the memory tree")
