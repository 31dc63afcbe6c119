"""What a growing workspace costs on paths that used to walk every memory file
(``tox -e bench``; ratios to a baseline measured in the same run, see conftest.py). The
workspaces hold 2,000 daily logs (``SOULFRAME_BENCH_GROWTH_FILES``), a realistic heavy user:

* the web inspector's Memory page at most 2.2x one walk of the memory tree (status and the
  timeline share one walk; with two it measured 3.0x, with one 1.9x: the rest is the
  index's records and the 90 logs the timeline reads);
* a ``memory_remember`` in ``serve`` (the tool's call, which indexes the file it wrote, the
  watcher's sync of the paths its events named and its comparison of those resources) at
  most 1.5x the same in a 20-log workspace: none walks the tree (~0.75 s of CPU a note at
  20,000 logs when they did);
* a search as a user with 2,000 memory documents in the store at most 1.5x the same search
  without a user: an unchanged user's documents are not read and hashed again (the mark of
  their files is one query).
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
    from soulframe_mcp.resources import ResourceView

    agents = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (20, FILES):
            ws = _aged(make_workspace(tmp_path / f"ws{n}", n, entries=2))
            agents[n] = agent_for(ws, tmp_path / f"state{n}", None)
            agents[n].memory.sync()
            agents[n].memory.follows_changes = True  # as serve's searches do

        views = {n: ResourceView(a, Session.main()) for n, a in agents.items()}
        for view in views.values():
            view.served()  # the change feed's first listing

        def remember(n: int) -> None:
            agent = agents[n]
            saved = dispatch(agent, "memory_remember", {"text": "the heron came back to the pond"},
                             session=Session.main())
            # what serve's watcher then does with the paths its events named: the index,
            # then the resources to announce
            report = agent.memory.sync_paths([agent.root / saved["path"]])
            assert not report.changed_anything
            assert views[n].memory_files_named([saved["path"]]) is not None

        big, small = interleaved(lambda: remember(FILES), lambda: remember(20), runs=9)
    for a in agents.values():
        a.close()
    bench.speed(f"memory_remember + the watcher's sync, {FILES:,} logs", big.cpu, small.cpu, target=1.5,
                baseline_name="the same in 20 logs")


def test_a_search_as_a_user_with_many_documents(tmp_path: Path, bench: Any) -> None:
    import datetime
    import random

    from soulframe import Session
    from soulframe._engine.agentstore import context_store

    from .bench_memory import daily_log

    ws = _aged(make_workspace(tmp_path / "ws", 20, entries=2))
    agent = agent_for(ws, tmp_path / "state", None)
    rng = random.Random(3)
    first = datetime.date(2000, 1, 1)
    # a user's daily logs are memory/YYYY-MM-DD.md: one a day
    docs = {f"memory/{first + datetime.timedelta(days=d)}.md": daily_log(rng, d, 2) for d in range(FILES)}
    context_store(agent).seed_user_files("alice", docs)
    alice, owner = Session.main(user_id="alice"), Session.main()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.search("kayak heron", session=alice)  # indexes alice's documents once
        user, plain = interleaved(lambda: agent.memory.search("kayak heron", session=alice, track=False),
                                  lambda: agent.memory.search("kayak heron", session=owner, track=False), runs=9)
    agent.close()
    bench.speed(f"search as a user with {FILES:,} documents", user.cpu, plain.cpu, target=1.5,
                baseline_name="the same search without a user")
