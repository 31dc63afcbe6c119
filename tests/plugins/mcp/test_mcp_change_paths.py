"""``serve``'s watcher hands the index the files its events named, so a change costs a read
of those files, not a walk of every memory file; an event that names no file alone (a
directory made, moved or deleted) asks for a walk."""

from __future__ import annotations

import queue
import time
import warnings
from pathlib import Path

from soulframe import Session
from soulframe._engine.agent import Agent
from soulframe_mcp.changes import ChangeFeed
from soulframe_mcp.resources import ResourceView


def test_the_watcher_names_the_files_that_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "memory" / "2026-01-01.md").write_text("# 2026-01-01\n- a quiet day\n")
    told: queue.Queue[frozenset[str] | None] = queue.Queue()
    with Agent.open(ws, state_dir=str(tmp_path / "state")) as agent, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.sync()
        feed = ChangeFeed(ResourceView(agent, Session.main()), legacy_push=False, on_change=told.put)
        feed.start_watching()
        try:
            log = ws / "memory" / "2026-01-02.md"
            log.write_text("# 2026-01-02\n- the kingfisher came back\n")
            paths = told.get(timeout=10)
            assert paths is not None and str(log) in paths
            agent.memory.sync_paths(paths)
            assert [h.path for h in agent.memory.search("kingfisher", min_score=0)] == ["memory/2026-01-02.md"]
            time.sleep(0.3)
            (ws / "memory" / "trips").mkdir()
            assert told.get(timeout=10) is None
        finally:
            feed.stop()


def test_a_change_to_a_log_is_announced_without_listing_every_memory_file(tmp_path: Path) -> None:
    """serve's feed compares the resources the events named, not a listing of every
    memory file (20,000 stats per change); a new log is still announced as a list change
    and an edited one as updated."""
    from walk_support import file_system_calls

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "memory" / "2026-01-01.md").write_text("# 2026-01-01\n- a quiet day\n")
    with Agent.open(ws, state_dir=str(tmp_path / "state")) as agent, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.sync()
        feed = ChangeFeed(ResourceView(agent, Session.main()), legacy_push=False,
                          on_change=lambda paths: agent.memory.sync() if paths is None else agent.memory.sync_paths(paths))
        feed.start_watching()

        def announced(n: int) -> None:
            deadline = time.monotonic() + 10
            while feed.announced < n and time.monotonic() < deadline:
                time.sleep(0.05)
            assert feed.announced == n

        try:
            with file_system_calls(ws) as calls:
                (ws / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n- the kingfisher came back\n")
                announced(1)  # the list changed
                time.sleep(0.3)
                with open(ws / "memory" / "2026-01-01.md", "a") as fh:
                    fh.write("- and an otter\n")
                announced(2)  # that log was updated
            assert calls.listings_of(ws / "memory") == 0
            assert [h.path for h in agent.memory.search("otter", min_score=0)] == ["memory/2026-01-01.md"]
        finally:
            feed.stop()
