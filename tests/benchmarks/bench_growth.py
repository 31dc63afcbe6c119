"""What a growing workspace costs on paths that used to walk every memory file
(``tox -e bench``; ratios to a baseline measured in the same run, see conftest.py). The
workspaces hold 2,000 daily logs (``SOULFRAME_BENCH_GROWTH_FILES``), a realistic heavy user:

* the web inspector's Memory page at most 2.2x one walk of the memory tree (status and the
  timeline share one walk; with two it measured 3.0x, with one 1.9x: the rest is the
  index's records and the 90 logs the timeline reads);
* a ``memory_remember`` in ``serve`` (the tool's call, which indexes the file it wrote, and
  the watcher's sync of the paths its events named) at most 1.5x the same in a 20-log
  workspace: neither walks the tree (each walked it: ~0.75 s of CPU a note at 20,000 logs);
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


def test_remember_in_serve_does_not_grow_with_the_workspace(tmp_path: Path, bench: Any) -> None:
    from soulframe import Session
    from soulframe.kit import dispatch

    agents = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (20, FILES):
            ws = _aged(make_workspace(tmp_path / f"ws{n}", n, entries=2))
            agents[n] = agent_for(ws, tmp_path / f"state{n}", None)
            agents[n].memory.sync()
            agents[n].memory.follows_changes = True  # as serve's searches do

        def remember(n: int) -> None:
            agent = agents[n]
            saved = dispatch(agent, "memory_remember", {"text": "the heron came back to the pond"},
                             session=Session.main())
            # what serve's watcher then does with the paths its events named
            report = agent.memory.sync_paths([agent.root / saved["path"]])
            assert not report.changed_anything

        big, small = interleaved(lambda: remember(FILES), lambda: remember(20), runs=9)
    for a in agents.values():
        a.close()
    bench.speed(f"memory_remember + the watcher's sync, {FILES:,} logs", big.cpu, small.cpu, target=1.5,
                baseline_name="the same in 20 logs")
