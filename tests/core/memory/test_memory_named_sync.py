"""Syncing only the files a write or a file watcher named (``MemoryIndex.sync_paths``):
soulframe's own ``memory_remember`` indexes the file it wrote without walking the memory
tree, and is searchable at once even in a server whose searches leave syncing to its
watcher; the watcher's sync of the same write finds nothing to do; whatever the paths cannot
tell (links, a directory moved) is a full walk, so no edit is missed."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from soulframe import Session
from soulframe._engine.agent import Agent
from soulframe.kit import dispatch
from walk_support import file_system_calls

OLD = time.time() - 3600


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "MEMORY.md").write_text("# Memory\n- curated alpaca\n")
    for i in range(30):
        day = f"2025-01-{1 + i:02d}"
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n- note number {i} about llamas\n")
        os.utime(ws / "memory" / f"{day}.md", (OLD, OLD))
    return ws


@pytest.fixture
def agent(ws: Path, tmp_path: Path) -> Iterator[Agent]:
    with Agent.open(ws, state_dir=str(tmp_path / "state")) as a, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.memory.sync()
        yield a


def _paths(agent: Agent, query: str) -> list[str]:
    return [h.path for h in agent.memory.search(query, min_score=0.0, k=10)]


def test_remember_indexes_its_file_without_walking_and_is_found_at_once_in_serve(agent: Agent, ws: Path) -> None:
    agent.memory.follows_changes = True  # as in `serve`: a search does not sync first
    with file_system_calls(ws) as calls:
        saved = dispatch(agent, "memory_remember", {"text": "the heron nests by the boathouse"},
                         session=Session.main())
    assert calls.listings_of(ws / "memory") == 0
    assert _paths(agent, "heron boathouse") == [saved["path"]]
    # the watcher's event for the same write: read once, nothing to index, no walk
    with file_system_calls(ws) as calls:
        report = agent.memory.sync_paths([ws / saved["path"]])
    assert calls.listings_of(ws / "memory") == 0
    assert not report.changed_anything


def test_named_paths_see_edits_deletions_and_renames(agent: Agent, ws: Path) -> None:
    log = ws / "memory" / "2025-01-05.md"
    text = log.read_text()
    # a same-size rewrite with the old mtime: the stat alone would call it unchanged
    log.write_text(text.replace("llamas", "otters"))
    os.utime(log, (OLD, OLD))
    with file_system_calls(ws) as calls:
        agent.memory.sync_paths([log])
    assert calls.listings_of(ws / "memory") == 0
    assert _paths(agent, "otters") == ["memory/2025-01-05.md"]
    moved = ws / "memory" / "2025-01-05-otters.md"
    log.rename(moved)
    agent.memory.sync_paths([log, moved])
    assert _paths(agent, "otters") == ["memory/2025-01-05-otters.md"]
    moved.unlink()
    agent.memory.sync_paths([str(moved)])
    assert _paths(agent, "otters") == []


def test_a_path_that_cannot_tell_the_whole_change_walks(agent: Agent, ws: Path) -> None:
    # memory/alias.md is a second name of a log: an edit of the log, named by its own
    # path, changes what alias.md holds too, so only a walk is right
    (ws / "memory" / "alias.md").symlink_to(ws / "memory" / "2025-01-07.md")
    agent.memory.sync()
    (ws / "memory" / "2025-01-07.md").write_text("# 2025-01-07\n- a walrus visited\n")
    with file_system_calls(ws) as calls:
        agent.memory.sync_paths([ws / "memory" / "2025-01-07.md"])
    assert calls.listings_of(ws / "memory") == 1
    assert sorted(_paths(agent, "walrus")) == ["memory/2025-01-07.md", "memory/alias.md"]


def test_a_named_path_keeps_privacy_and_the_workspace(agent: Agent, ws: Path, tmp_path: Path) -> None:
    (ws / "MEMORY.md").write_text("# Memory\n- curated alpaca\n- the vault code is kept offline\n")
    agent.memory.sync_paths([ws / "MEMORY.md"])
    assert _paths(agent, "vault code") == ["MEMORY.md"]
    group = agent.memory.search("vault code", min_score=0.0, session=Session.group())
    assert [h.path for h in group] == []
    # a path outside the workspace (or through ..) is never read: a walk decides instead
    outside = tmp_path / "elsewhere.md"
    outside.write_text("- a secret that is not memory\n")
    agent.memory.sync_paths([outside, ws / "memory" / ".." / ".." / "elsewhere.md"])
    assert _paths(agent, "secret") == []


def test_memory_watch_reads_the_files_its_events_name(agent: Agent, ws: Path) -> None:
    """``memory watch``: after its first sync, a change is indexed by reading the files the
    events named, not by a walk of memory/."""
    import threading

    from soulframe._engine.memory.watch import watch

    reports: list[object] = []
    ready, synced, stop = threading.Event(), threading.Event(), threading.Event()

    def on_sync(report: object) -> None:
        reports.append(report)
        synced.set()

    before = agent.memory.last_sync
    thread = threading.Thread(target=watch, args=(agent.memory,), daemon=True, kwargs={
        "debounce_s": 0.1, "on_sync": on_sync, "stop": stop, "on_ready": ready.set})
    thread.start()
    try:
        assert ready.wait(10)
        deadline = time.monotonic() + 10
        while agent.memory.last_sync is before and time.monotonic() < deadline:
            time.sleep(0.02)  # the catch-up sync at start (a walk) is done
        with file_system_calls(ws) as calls:
            (ws / "memory" / "2025-02-01.md").write_text("# 2025-02-01\n- a bittern boomed\n")
            assert synced.wait(10)
        assert calls.listings_of(ws / "memory") == 0
        assert _paths(agent, "bittern") == ["memory/2025-02-01.md"]
    finally:
        stop.set()
        thread.join(10)
