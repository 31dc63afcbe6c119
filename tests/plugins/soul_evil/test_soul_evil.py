"""soul-evil: the alternate persona swapped in memory during a window or by chance, with an
audit trail (seed 003 §1.5, §5.3, §8.8). Times are fixed with ``Session.now``."""

from __future__ import annotations

import datetime as dt
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from soulframe import Agent, Session
from soulframe._engine.model import ConfigError
from soulframe._engine.prompt.context import collect_context
from soulframe_soul_evil.audit import audit_path, read
from soulframe_soul_evil.schedule import Schedule, parse_at, parse_duration

BERLIN = "Europe/Berlin"


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "SOUL.md").write_text("I am kind.")
    (workspace / "SOUL_EVIL.md").write_text("I am chaos.")
    (workspace / "AGENTS.md").write_text("rules")
    return workspace


def agent(ws: Path, tmp_path: Path, **kw: Any) -> Agent:
    settings: dict[str, Any] = {"soul_evil__enabled": True, "soul_evil__at": "23:30",
                                "soul_evil__duration": "1h", "timezone": BERLIN,
                                "state_dir": str(tmp_path / "state")}
    settings.update(kw)
    return Agent.open(ws, **settings)


def soul(a: Agent, when: dt.datetime, kind: str = "main", key: str | None = "s1") -> str | None:
    f = collect_context(a, Session(kind=kind, now=when, key=key)).file("SOUL.md")  # type: ignore[arg-type]
    return None if f is None else f.content


def at(h: int, m: int, day: int = 10) -> dt.datetime:
    return dt.datetime(2026, 6, day, h, m)  # naive = agent-local time


@pytest.mark.parametrize("when,evil", [
    (at(23, 29), False),
    (at(23, 30), True),
    (at(23, 59), True),
    (at(0, 0, 11), True),   # the window crosses midnight
    (at(0, 29, 11), True),
    (at(0, 30, 11), False),  # 23:30 + 1h ends here
    (at(12, 0), False),
])
def test_window_including_midnight_crossing(ws: Path, tmp_path: Path, when: dt.datetime, evil: bool) -> None:
    assert soul(agent(ws, tmp_path), when) == ("I am chaos." if evil else "I am kind.")


def test_the_window_is_in_the_agent_timezone(ws: Path, tmp_path: Path) -> None:
    a = agent(ws, tmp_path)
    # 21:45 UTC in June is 23:45 in Berlin
    assert soul(a, dt.datetime(2026, 6, 10, 21, 45, tzinfo=dt.UTC)) == "I am chaos."
    assert soul(a, dt.datetime(2026, 6, 10, 23, 45, tzinfo=dt.UTC)) == "I am kind."  # 01:45 Berlin


def test_the_swap_is_in_memory_only_and_audited(ws: Path, tmp_path: Path) -> None:
    a = agent(ws, tmp_path)
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    assert soul(a, at(23, 45), key="chat-42") == "I am chaos."
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before  # nothing on disk changed
    entries, bad = read(a)
    assert bad == []
    (entry,) = entries
    assert entry["session_kind"] == "main" and entry["session_key"] == "chat-42"
    assert entry["persona"] == "SOUL_EVIL.md" and entry["reason"] == "window 23:30–00:30"
    assert entry["time"].startswith("2026-06-10T23:45:00+02:00")
    assert stat.S_IMODE(audit_path(a).stat().st_mode) == 0o600
    assert stat.S_IMODE(audit_path(a).parent.stat().st_mode) == 0o700
    assert soul(a, at(12, 0)) == "I am kind."
    assert len(read(a)[0]) == 1  # no swap, no record


def test_missing_alternate_file_warns_and_keeps_the_soul(ws: Path, tmp_path: Path) -> None:
    (ws / "SOUL_EVIL.md").unlink()
    a = agent(ws, tmp_path)
    with pytest.warns(UserWarning, match="SOUL_EVIL.md not found"):
        assert soul(a, at(23, 45)) == "I am kind."
    assert read(a)[0] == []


def test_empty_alternate_file_warns_and_keeps_the_soul(ws: Path, tmp_path: Path) -> None:
    (ws / "SOUL_EVIL.md").write_text("\n")
    with pytest.warns(UserWarning, match="SOUL_EVIL.md is empty"):
        assert soul(agent(ws, tmp_path), at(23, 45)) == "I am kind."


def test_a_custom_file_name(ws: Path, tmp_path: Path) -> None:
    (ws / "GRUMPY.md").write_text("I am grumpy.")
    assert soul(agent(ws, tmp_path, soul_evil__file="GRUMPY.md"), at(23, 45)) == "I am grumpy."


def test_subagents_never_see_either_soul_and_nothing_is_recorded(ws: Path, tmp_path: Path) -> None:
    a = agent(ws, tmp_path)
    assert soul(a, at(23, 45), kind="subagent") is None
    assert read(a)[0] == []


def test_disabled_means_no_swap(ws: Path, tmp_path: Path) -> None:
    assert soul(agent(ws, tmp_path, soul_evil__enabled=False), at(23, 45)) == "I am kind."


def test_chance_is_drawn_once_per_session_and_day(ws: Path, tmp_path: Path) -> None:
    always = agent(ws, tmp_path, soul_evil__at=None, soul_evil__duration=None, soul_evil__chance=1.0)
    assert soul(always, at(12, 0)) == "I am chaos."
    assert read(always)[0][-1]["reason"] == "chance 1"
    half = agent(ws, tmp_path, soul_evil__at=None, soul_evil__duration=None, soul_evil__chance=0.5)
    results = {}
    for key in [f"session-{i}" for i in range(40)]:
        first = soul(half, at(12, 0), key=key)
        assert all(soul(half, at(h, 0), key=key) == first for h in (13, 14, 15))  # stable all day
        results[key] = first
    assert set(results.values()) == {"I am chaos.", "I am kind."}  # both happen across sessions


def test_durations_and_times_parse() -> None:
    assert parse_duration("30m") == dt.timedelta(minutes=30)
    assert parse_duration("1h") == dt.timedelta(hours=1)
    assert parse_duration("90s") == dt.timedelta(seconds=90)
    assert parse_duration("1h30m") == dt.timedelta(minutes=90)
    assert parse_duration("45") == dt.timedelta(minutes=45)
    assert parse_at("7:05") == dt.time(7, 5)
    for bad in ("abc", "0m", "25h", "-5m", "30 parsecs"):
        with pytest.raises(ConfigError, match=r"soul_evil.duration"):
            parse_duration(bad)
    for bad in ("25:00", "12:60", "noon", "12"):
        with pytest.raises(ConfigError, match=r"soul_evil.at .*HH:MM"):
            parse_at(bad)


def test_half_a_window_is_a_config_error(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="soul_evil.duration is not set"):
        soul(agent(ws, tmp_path, soul_evil__duration=None), at(23, 45))


def test_next_window(tmp_path: Path) -> None:
    s = Schedule(enabled=True, at=dt.time(23, 30), duration=dt.timedelta(minutes=30))
    now = dt.datetime(2026, 6, 10, 23, 40, tzinfo=dt.UTC)
    assert s.window_containing(now) == (now.replace(minute=30), now.replace(day=11, hour=0, minute=0))
    assert s.next_window(now)[0] == dt.datetime(2026, 6, 11, 23, 30, tzinfo=dt.UTC)  # type: ignore[index]


def test_log_and_status_commands(ws: Path, tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "state"
    (ws / "soulframe.toml").write_text(
        f'state_dir = "{state}"\ntimezone = "{BERLIN}"\n'
        '[soul_evil]\nenabled = true\nat = "23:30"\nduration = "30m"\n'
    )
    a = Agent.open(ws)
    for day in (10, 11, 12):
        soul(a, at(23, 40, day), key=f"day-{day}")
    out = cli("-w", str(ws), "soul-evil", "log", "--json", "--limit", "2")
    assert out.returncode == 0, out.stderr
    entries = json.loads(out.stdout)
    assert [e["session_key"] for e in entries] == ["day-11", "day-12"]
    text = cli("-w", str(ws), "soul-evil", "log").stdout
    assert "day-10" in text and "SOUL_EVIL.md" in text and "window 23:30–00:00" in text
    status = json.loads(cli("-w", str(ws), "soul-evil", "status", "--json").stdout)
    assert status["enabled"] is True and status["file_exists"] is True
    assert status["next_window"][0].endswith("23:30+01:00") or status["next_window"][0].endswith("23:30+02:00")
