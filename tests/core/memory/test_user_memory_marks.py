"""A search as a user reads that user's memory documents only when they changed: the
context files mark every change (``MarksUserFiles``), and the index keeps the mark of what
it holds. A change by another process or app server, a deletion, a rebuild of the index are
all seen; an unchanged user's memory costs one query."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from soulframe import Session
from soulframe._engine.agent import Agent
from soulframe._engine.agentstore import context_store
from soulframe._engine.memory.users import UserMemory

ALICE = Session.main(user_id="alice")
LOG = "memory/2026-01-05.md"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    return ws


@pytest.fixture
def two(ws: Path, tmp_path: Path) -> Iterator[tuple[Agent, Agent]]:
    """The same agent opened twice: a server and another process sharing its store."""
    with Agent.open(ws, state_dir=str(tmp_path / "state")) as a, \
            Agent.open(ws, state_dir=str(tmp_path / "state")) as b, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield a, b


def _found(agent: Agent, query: str) -> list[str]:
    return [h.snippet for h in agent.memory.search(query, min_score=0.0, session=ALICE) if h.scope == "user"]


def test_changes_from_elsewhere_are_seen_and_an_unchanged_user_is_not_read(two: tuple[Agent, Agent]) -> None:
    server, other = two
    UserMemory(server, "alice").append_daily("the cat is called Dinah")
    assert any("Dinah" in s for s in _found(server, "Dinah"))
    # unchanged: the documents' text is not read again
    reads: list[str] = []
    files: Any = context_store(server)
    files.conn.set_trace_callback(lambda sql: reads.append(sql) if "content" in sql and sql.startswith("SELECT") else None)
    try:
        _found(server, "Dinah")
        assert reads == []
        # rewritten by another process: seen at once
        context_store(other).write_user_file("alice", LOG, "# 2026-01-05\n\n- the parrot is called Polly\n")
        assert any("Polly" in s for s in _found(server, "Polly"))
        assert reads  # the change was read
    finally:
        files.conn.set_trace_callback(None)
    context_store(other).delete_user_file("alice", LOG)
    assert _found(server, "Polly") == []


def test_a_rebuild_elsewhere_brings_the_users_memory_back(two: tuple[Agent, Agent]) -> None:
    server, other = two
    UserMemory(server, "alice").append_daily("the cat is called Dinah")
    assert any("Dinah" in s for s in _found(server, "Dinah"))
    other.memory.rebuild()  # empties the index, alice's rows included
    assert any("Dinah" in s for s in _found(server, "Dinah"))
