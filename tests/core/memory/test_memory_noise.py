"""The MEMORY.md template's boilerplate and the heartbeat's status lines are not memory:
never returned by a search, whatever the question."""

from __future__ import annotations

import warnings
from pathlib import Path

from soulframe import Agent
from soulframe._engine.memory.noise import TEMPLATE_LINES, is_noise
from soulframe.testing import make_agent

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = ROOT / "plugins" / "soulframe_workspace" / "templates" / "MEMORY.md"


def _heartbeat_log(tmp_path: Path) -> Agent:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(TEMPLATE.read_text(encoding="utf-8"), encoding="utf-8")
    (ws / "memory" / "2026-03-01.md").write_text(
        "# 2026-03-01\n\n- 09:15 heartbeat: OK\n- 09:45 heartbeat: OK\n"
        "- Booked the boiler service for Thursday\n- 10:15 heartbeat: OK\n"
        "- 10:45 heartbeat: needs attention — the backup disk is full\n", encoding="utf-8")
    return make_agent(ws, seed=False, state_dir=tmp_path / "state")


def test_the_noise_list_is_the_template_s_own_text() -> None:
    lines = set(TEMPLATE.read_text(encoding="utf-8").splitlines())
    assert TEMPLATE_LINES <= lines


def test_template_boilerplate_is_never_returned(tmp_path: Path) -> None:
    agent = _heartbeat_log(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for q in ("curated knowledge that should survive every session",
                  "keep entries short and dated, durable facts", "group chats sub-agents"):
            hits = agent.memory.search(q, min_score=0)
            assert all(h.path != "MEMORY.md" for h in hits), (q, [h.snippet for h in hits])
    agent.close()


def test_heartbeat_status_lines_are_never_returned(tmp_path: Path) -> None:
    agent = _heartbeat_log(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hits = agent.memory.search("heartbeat OK", min_score=0)
        # only the run that needed attention is memory
        assert hits and all("heartbeat: OK" not in h.snippet for h in hits)
        assert "needs attention" in hits[0].snippet
        assert agent.memory.search("boiler service")[0].snippet.startswith("- Booked the boiler")
    agent.close()


def test_what_counts_as_noise() -> None:
    assert is_noise("- 09:15 heartbeat: OK") and is_noise("heartbeat: ok")
    assert not is_noise("- 10:45 heartbeat: needs attention — disk full")
    assert not is_noise("- The heartbeat: OK, said the doctor, after the scan")
