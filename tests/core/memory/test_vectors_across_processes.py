"""A long-lived process (``soulframe serve``, the inspector) keeps the index's vectors in
memory; another process that changes a file must not leave it scanning the old vectors. The
case users hit: a ``memory remember`` appends to today's log, whose last chunk is replaced by
one that SQLite gives the same row id."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session
from soulframe_embeddings.local import LocalProvider

pytestmark = pytest.mark.skipif(not LocalProvider().available(), reason="offline model not installed")


def test_a_chunk_replaced_by_another_process_is_found_by_meaning(workspace: Path) -> None:
    today = workspace / "memory" / f"{dt.date.today().isoformat()}.md"
    today.parent.mkdir()
    today.write_text(f"# {today.stem}\n\n- Started the day.\n")
    (workspace / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- Paid the studio rent.\n")
    server = Agent.open(workspace)
    other = Agent.open(workspace)  # its own connection and matrix, as another process has
    try:
        assert server.memory.search("studio rent", session=Session.main())  # vectors loaded
        other.memory.append_daily("Notifications reach the client.")
        other.memory.sync()
        hits = server.memory.search("notifications reach the client", session=Session.main(),
                                    channels="vector", min_score=0)
        # the new text, by its own vector (a stale one would score as "Started the day." does)
        assert hits[0].path == f"memory/{today.name}" and hits[0].vector_score >= 0.9
        assert "Notifications reach the client." in hits[0].snippet
    finally:
        server.close()
        other.close()
