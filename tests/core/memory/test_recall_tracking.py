"""Recall tracking (both stores) and superseded facts in search and the prompt."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from conftest import run_cli
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.model import Session

DAY = "# 2026-11-02\n\n- Booked the dentist, Dr. Weber, for Tuesdays.\n- The car goes to the garage on 4 December.\n- Priya prefers dark-mode screenshots.\n"


def agent_on(workspace: Path, tmp_path: Path, backend: str, dsn: str | None = None) -> Agent:
    values = {"embedding.provider": "none", "state_dir": str(tmp_path / "state")}
    if backend == "postgres":
        values |= {"store.backend": "postgres", "store.dsn": dsn}
    cfg = load_config(search=False, workspace=workspace, overrides=values)
    if backend == "postgres":
        import attrs

        cfg = attrs.evolve(cfg, agents=(attrs.evolve(cfg.agents[0], id=f"a{uuid.uuid4().hex[:8]}"),))
    return Agent(cfg)


def exercise(agent: Agent, workspace: Path) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "2026-11-02.md").write_text(DAY)
    mem = agent.memory
    for q in ("dentist", "when is the dentist", "Dr. Weber appointment", "dentist"):
        assert mem.search(q, min_score=0)[0].path == "memory/2026-11-02.md"
    mem.search("garage car", min_score=0)
    mem.search("dentist", min_score=0, track=False)  # evaluation: not counted
    top = agent.store.recalls(5)
    dentist = next(r for r in top if "dentist" in r.text)
    assert (dentist.count, dentist.queries, dentist.line) == (4, 3, 3)
    assert dentist.text == "- Booked the dentist, Dr. Weber, for Tuesdays."
    assert top[0] == dentist and dentist.days == 1 and dentist.last_recalled > 0
    garage = next(r for r in top if "garage" in r.text)
    assert (garage.count, garage.queries, garage.line) == (1, 1, 4)
    # the tool path counts too
    from soulframe._engine.tools import dispatch

    dispatch(agent, "memory_search", {"query": "garage in December"}, session=Session.main())
    garage = next(r for r in agent.store.recalls(5) if "garage" in r.text)
    assert (garage.count, garage.queries) == (2, 2)
    status = mem.status(deep=True)
    assert status.most_recalled is not None and status.most_recalled[0].text == dentist.text


def test_recall_tracking_sqlite(workspace: Path, tmp_path: Path) -> None:
    agent = agent_on(workspace, tmp_path, "sqlite")
    exercise(agent, workspace)
    # counting is not an index change: the vector matrix is not reloaded after a search
    generation = agent.store.get_meta("generation")
    agent.memory.search("dentist", min_score=0)
    assert agent.store.get_meta("generation") == generation


@pytest.mark.postgres
def test_recall_tracking_postgres(workspace: Path, tmp_path: Path, pg_dsn: str) -> None:
    agent = agent_on(workspace, tmp_path, "postgres", pg_dsn)
    try:
        exercise(agent, workspace)
    finally:
        agent.close()


def test_status_deep_lists_the_most_recalled(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / "2026-11-02.md").write_text(DAY)
    for q in ("dentist", "dentist Tuesday"):
        run_cli("-w", str(workspace), "memory", "search", q, check=True)
    out = run_cli("-w", str(workspace), "memory", "status", "--deep", check=True).stdout
    assert "most recalled" in out
    assert "   2 /   2 /  1" in out and "memory/2026-11-02.md#L3  - Booked the dentist" in out


def test_status_deep_lists_only_entries_still_in_their_files(workspace: Path) -> None:
    """The counts of an entry corrected or deleted stay in the store; status listed them as
    the most recalled, old text and all ("Dr. Weber" after the note said "Dr. Wagner")."""
    run_cli("init", str(workspace), check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    log = workspace / "memory" / "2026-11-02.md"
    log.write_text(DAY)
    for q in ("dentist", "dentist Tuesday", "garage December"):
        run_cli("-w", str(workspace), "memory", "search", q, check=True)
    # the dentist's name corrected, a line added above it, the garage note deleted
    log.write_text(DAY.replace("- Booked", "- Paid the gas bill.\n- Booked").replace("Weber", "Wagner")
                   .replace("- The car goes to the garage on 4 December.\n", ""))
    run_cli("-w", str(workspace), "memory", "search", "dentist Wagner", check=True)
    out = run_cli("-w", str(workspace), "memory", "status", "--deep", "--json", check=True).stdout
    listed = [(r["path"], r["line"], r["text"], r["count"]) for r in json.loads(out)["most_recalled"]]
    assert listed == [("memory/2026-11-02.md", 4, "- Booked the dentist, Dr. Wagner, for Tuesdays.", 1)]


def test_recall_counts_follow_a_pruned_log_into_the_archive(workspace: Path) -> None:
    """``memory prune`` moves old logs into memory/archive/; the counts stayed under the old
    path, so an entry recalled often enough was no longer a consolidation candidate."""
    run_cli("init", str(workspace), check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (workspace / "memory" / "2026-11-02.md").write_text(DAY)
    ws = ("-w", str(workspace))
    for q in ("dentist", "when is the dentist", "Dr. Weber appointment"):
        run_cli(*ws, "memory", "search", q, check=True)

    def candidates() -> list[tuple[str, int]]:
        out = run_cli(*ws, "memory", "consolidate", "--dry-run", "--no-model", "--json").stdout
        return [(c["citation"], c["recalls"]) for c in json.loads(out)["candidates"]]

    assert candidates() == [("memory/2026-11-02.md#L3", 3)]
    run_cli(*ws, "memory", "prune", "--before", "2026-11-03", check=True)
    assert (workspace / "memory" / "archive" / "2026-11-02.md").is_file()
    run_cli(*ws, "memory", "index", check=True)
    assert candidates() == [("memory/archive/2026-11-02.md#L3", 3)]


MEMORY = (
    "# MEMORY.md\n\n"
    "- ~~Lives in Berlin, Kastanienallee~~ (superseded by: Lives in Lisbon, Alfama, 2026-11-20)\n"
    "- Works on the platform team.\n"
    "- Lives in Lisbon, Alfama (added 2026-11-20)\n"
)


def test_a_superseded_fact_is_hidden_below_its_successor_and_out_of_the_prompt(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (workspace / "MEMORY.md").write_text(MEMORY)
    search = ["-w", str(workspace), "memory", "search", "where does the user live Berlin Lisbon", "--json"]
    hits = json.loads(run_cli(*search, check=True).stdout)
    assert "Lives in Lisbon" in hits[0]["snippet"]
    assert not any("Berlin" in h["snippet"] for h in hits)
    both = json.loads(run_cli(*search, "--history", check=True).stdout)
    assert "Lives in Lisbon" in both[0]["snippet"] and "~~" not in both[0]["snippet"]
    old = [h for h in both if "Berlin" in h["snippet"]]
    assert len(old) == 1 and old[0]["citation"] == "MEMORY.md#L3-L3"
    assert both.index(old[0]) > 0 and old[0]["score"] < both[0]["score"]
    prompt = run_cli("-w", str(workspace), "prompt", check=True).stdout
    assert "Lives in Lisbon, Alfama" in prompt and "Berlin" not in prompt
    assert "Berlin" in (workspace / "MEMORY.md").read_text()  # the file keeps its history


def test_the_memory_search_tool_shows_history_only_when_asked(workspace: Path, tmp_path: Path) -> None:
    from soulframe._engine.tools import dispatch

    (workspace / "MEMORY.md").write_text(MEMORY)
    agent = agent_on(workspace, tmp_path, "sqlite")
    args = {"query": "lives in Berlin or Lisbon", "min_score": 0}
    now = dispatch(agent, "memory_search", args, session=Session.main())["results"]
    assert now and not any("Berlin" in h["snippet"] for h in now)
    both = dispatch(agent, "memory_search", {**args, "history": True}, session=Session.main())["results"]
    assert "Berlin" in both[-1]["snippet"] and both[-1]["citation"] == "MEMORY.md#L3-L3"
