"""The example plugin's own tests: its logic, and that soulframe finds it once installed."""

from __future__ import annotations

import datetime as dt
import importlib.metadata as md
from zoneinfo import ZoneInfo

import pytest
import soulframe_quiet_hours as qh
from click.testing import CliRunner
from soulframe.cli import build_cli
from soulframe.kit import make_plugin_manager


def test_window_crossing_midnight() -> None:
    start, end = dt.time(22, 0), dt.time(7, 0)
    assert qh.is_quiet(dt.time(23, 30), start, end)
    assert qh.is_quiet(dt.time(6, 59), start, end)
    assert not qh.is_quiet(dt.time(7, 0), start, end)
    assert not qh.is_quiet(dt.time(12, 0), start, end)


def test_window_within_a_day() -> None:
    start, end = dt.time(13, 0), dt.time(14, 0)
    assert qh.is_quiet(dt.time(13, 30), start, end)
    assert not qh.is_quiet(dt.time(14, 30), start, end)


def test_bad_time_names_the_key() -> None:
    with pytest.raises(ValueError, match=r"start = '25h'.*HH:MM"):
        qh.window({"start": "25h"})


def test_installed_as_a_soulframe_plugin() -> None:
    eps = {ep.name: ep for ep in md.entry_points(group="soulframe")}
    assert "soulframe_quiet_hours" in eps, (
        "the example plugin is not installed: pip install -e examples/soulframe-quiet-hours"
    )
    assert eps["soulframe_quiet_hours"].dist.name == "soulframe-quiet-hours"


def test_command_runs(tmp_path) -> None:
    # the whole command line with the installed plugins, in this process (click's runner)
    cli = build_cli(make_plugin_manager())
    out = CliRunner().invoke(cli, ["-w", str(tmp_path), "quiet-hours"])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("quiet hours 22:00-07:00:")


def test_the_command_and_the_prompt_read_the_agents_clock(tmp_path) -> None:
    """The agent lives in Los Angeles; the machine may be anywhere. Both say the same."""
    from soulframe import Agent, Session

    ws = tmp_path / "ws"
    ws.mkdir()
    la_now = dt.datetime.now(dt.UTC).astimezone(ZoneInfo("America/Los_Angeles"))
    start = (la_now - dt.timedelta(hours=1)).strftime("%H:%M")
    end = (la_now + dt.timedelta(hours=1)).strftime("%H:%M")
    (ws / "soulframe.toml").write_text(
        f'timezone = "America/Los_Angeles"\n\n[plugins.config.soulframe_quiet_hours]\n'
        f'start = "{start}"\nend = "{end}"\n')
    cli = build_cli(make_plugin_manager())
    out = CliRunner().invoke(cli, ["-w", str(ws), "quiet-hours"])
    assert out.exit_code == 0, out.output
    assert out.stdout.strip().endswith(": on now"), out.stdout
    agent = Agent.open(ws)
    assert "It is quiet hours now." in agent.system_prompt(Session.main()).text
    # a heartbeat is told too (it would report findings); a sub-agent is not
    assert "It is quiet hours now." in agent.system_prompt(Session.heartbeat()).text
    assert "Quiet Hours" not in agent.system_prompt(Session.subagent()).text
