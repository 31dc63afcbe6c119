"""A search does not walk the memory tree when nothing changed, and still sees every kind of
change (docs/memory.md "When a search re-reads the files"): new, deleted and renamed files
through their directory's mtime, in-place edits of recently changed files and of MEMORY.md
through their own stat, soulframe's own writes at once, anything else within
``memory.rescan_s``."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from soulframe import Session
from soulframe._engine.agent import Agent
from soulframe._engine.memory.freshness import HOT_FILES

OLD = time.time() - 3600  # an hour ago: older than any racy-timestamp window


def _age(root: Path) -> None:
    """Everything under ``root`` last changed an hour ago (as a workspace left alone)."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(dirpath) / name, (OLD, OLD))
        os.utime(dirpath, (OLD, OLD))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "MEMORY.md").write_text("# Memory\n- curated alpaca\n")
    for i in range(HOT_FILES + 10):
        day = f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}"
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n- note number {i} about llamas\n")
    _age(ws)
    for i, log in enumerate(sorted((ws / "memory").iterdir())):
        os.utime(log, (OLD + i, OLD + i))  # the last one is the most recently changed
    return ws


@pytest.fixture
def agent(ws: Path, tmp_path: Path) -> Iterator[Agent]:
    with Agent.open(ws, state_dir=str(tmp_path / "state")) as a, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.memory.sync()
        yield a


def _paths(agent: Agent, query: str) -> list[str]:
    return [h.path for h in agent.memory.search(query, min_score=0.0, k=10)]


def test_an_unchanged_workspace_is_not_walked_again(agent: Agent) -> None:
    walked = agent.memory.last_sync
    for _ in range(3):
        assert _paths(agent, "llamas")
    assert agent.memory.last_sync is walked  # no sync ran: the check found nothing moved


def test_new_deleted_and_renamed_files_are_seen_by_the_next_search(agent: Agent, ws: Path) -> None:
    (ws / "memory" / "2026-02-01.md").write_text("- a brand new vicuna\n")
    assert _paths(agent, "vicuna") == ["memory/2026-02-01.md"]
    os.replace(ws / "memory" / "2026-02-01.md", ws / "memory" / "renamed.md")
    assert _paths(agent, "vicuna") == ["memory/renamed.md"]
    (ws / "memory" / "renamed.md").unlink()
    assert _paths(agent, "vicuna") == []
    (ws / "memory" / "trips" / "peru").mkdir(parents=True)
    (ws / "memory" / "trips" / "peru" / "day1.md").write_text("- guanaco on the ridge\n")
    assert _paths(agent, "guanaco") == ["memory/trips/peru/day1.md"]


def test_an_in_place_edit_of_a_recent_file_or_memory_md_is_seen_at_once(agent: Agent, ws: Path) -> None:
    newest = ws / "memory" / "2025-03-18.md"  # the most recently changed, as today's log is
    with open(newest, "a") as fh:  # appended in place, as `echo >> log` or an editor does
        fh.write("- appended alpaca sighting\n")
    assert "memory/2025-03-18.md" in _paths(agent, "sighting")
    with open(ws / "MEMORY.md", "a") as fh:
        fh.write("- curated quokka\n")
    assert _paths(agent, "quokka") == ["MEMORY.md"]


def test_an_in_place_edit_of_an_old_file_is_seen_within_the_rescan_interval(ws: Path, tmp_path: Path) -> None:
    oldest = ws / "memory" / "2025-01-01.md"
    for rescan, seen in ((3600, False), (0, True)):
        with Agent.open(ws, state_dir=str(tmp_path / f"state{rescan}"), memory__rescan_s=rescan) as agent:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                agent.memory.sync()
                with open(oldest, "a") as fh:
                    fh.write(f"- okapi {rescan}\n")
                os.utime(oldest, (OLD, OLD))  # same size class of change, no mtime news
                os.utime(ws / "memory", (OLD, OLD))
                assert (_paths(agent, f"okapi {rescan}") == ["memory/2025-01-01.md"]) is seen
                agent.memory.sync()  # `memory index` always walks
                assert _paths(agent, f"okapi {rescan}") == ["memory/2025-01-01.md"]


def test_soulframe_s_own_writes_are_searchable_at_once(agent: Agent) -> None:
    agent.memory.remember("the capybara prefers oranges")
    assert _paths(agent, "capybara")
    agent.memory.remember("the curated wombat", curated=True)
    assert _paths(agent, "wombat") == ["MEMORY.md"]


def test_a_private_session_sees_the_same_fresh_index(agent: Agent, ws: Path) -> None:
    (ws / "memory" / "new.md").write_text("- public tapir\n")
    hits = agent.memory.search("tapir", session=Session.group(), min_score=0.0)
    assert [h.path for h in hits] == ["memory/new.md"]
