"""Two workspaces on one PostgreSQL database: indexing one never deletes, and searching one
never returns, the other's documents (the SQLite store keeps one file per workspace; the
PostgreSQL store keeps one agent key per workspace, and refuses a second workspace under a
key that already holds another's memory)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

pytestmark = pytest.mark.postgres


def _ws(root: Path, name: str, notes: dict[str, str]) -> Path:
    ws = root / name
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[store]\nbackend = "postgres"\n[embedding]\nprovider = "none"\n')
    for day, text in notes.items():
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n- {text}\n")
    return ws


def _run(ws: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("-w", str(ws), *args, env={"SOULFRAME_DSN": dsn})


def test_two_workspaces_opened_with_w_keep_their_own_documents(tmp_path: Path, pg_dsn: str, adversary: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from soulframe._engine.agent import Agent

    monkeypatch.setenv("SOULFRAME_DSN", pg_dsn)
    a = _ws(tmp_path, "a", {"2026-01-01": "pgalphanote about the harbour", "2026-01-03": "pgalphatwo"})
    b = _ws(tmp_path, "b", {"2026-01-02": "pgbetanote about the mill"})
    with adversary.attempt("memory index of workspace b after a, on one database") as att:
        for ws in (a, b, a):  # what `soulframe -w WS memory index` does
            with Agent.open(ws) as agent:
                report = agent.memory.sync()
                att.leaked(bool(report.removed))  # a document it did not index, deleted
        for ws, mine, theirs in ((a, "pgalphanote", "pgbetanote"), (b, "pgbetanote", "pgalphanote")):
            with Agent.open(ws) as agent:
                text = " ".join(h.snippet for h in agent.memory.search(f"{mine} {theirs}", min_score=0.0))
                att.leaked(theirs in text)
                assert mine in text
                assert agent.memory.status().indexed_files == (2 if ws == a else 1)
    with adversary.attempt("soulframe -w b memory search for a's note") as att:
        res = _run(b, pg_dsn, "memory", "search", "pgalphanote pgbetanote", "--json", "--min-score", "0")
        adversary.traceback("memory search", res.stderr)
        assert res.returncode == 0 and "pgbetanote" in res.stdout, res.stderr
        att.leaked("pgalphanote" in res.stdout)


def test_two_configs_naming_one_agent_id_are_refused_not_merged(tmp_path: Path, pg_dsn: str,
                                                                adversary: Any) -> None:
    from soulframe._engine.agent import Agent
    from soulframe._engine.model import SoulframeError

    a = _ws(tmp_path, "a", {"2026-01-01": "pgconfignote alpha"})
    b = _ws(tmp_path, "b", {"2026-01-02": "pgconfignote beta"})
    for ws in (a, b):  # each config names its own workspace for agent "default"
        (ws / "soulframe.toml").write_text(
            f'[store]\nbackend = "postgres"\ndsn = "{pg_dsn}"\n[embedding]\nprovider = "none"\n'
            f'[[agents]]\nid = "default"\nworkspace = "{ws}"\n')
    with Agent.open(config=a / "soulframe.toml") as agent:
        assert agent.state_key == "default"
        agent.memory.sync()
    with adversary.attempt("a second workspace under the same PostgreSQL agent key") as att:
        with Agent.open(config=b / "soulframe.toml") as agent, \
                pytest.raises(SoulframeError, match=f"holds the memory of the workspace {a}"):
            agent.memory.sync()
        att.refused()
    with Agent.open(config=a / "soulframe.toml") as agent:
        assert [f for f in agent.store.files()] == ["memory/2026-01-01.md"]  # untouched
