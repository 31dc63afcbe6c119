"""The example plugin's own tests: its logic, and that soulframe finds it once installed."""

from __future__ import annotations

import datetime as dt
import importlib.metadata as md

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
