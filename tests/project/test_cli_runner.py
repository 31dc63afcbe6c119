"""The tests' in-process command line (tests/cli_runner.py) answers as a process does:
same exit code, same stdout, same stderr, and nothing left behind for the next call."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from cli_runner import run_cli


def test_in_process_and_a_real_process_give_the_same_answers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_cli("init", str(ws), "--no-download", check=True)
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- The boiler was serviced.\n")
    env = {"NO_COLOR": "1", "SOULFRAME_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text('state_dir = "%s"\n[embedding]\nprovider = "none"\n'
                                        % (tmp_path / "state"))
    for args in (("-w", str(ws), "config", "get", "memory.max_results", "--json"),
                 ("-w", str(ws), "memory", "search", "boiler", "--json"),
                 ("-w", str(tmp_path / "typo"), "prompt"),  # exit 2, the error on stderr
                 ("-w", str(ws), "memory", "search", "  "),  # exit 1, one line, no traceback
                 ("-w", str(ws), "no-such-command")):
        inside = run_cli(*args, env=env)
        real = run_cli(*args, env=env, process=True)
        assert (inside.returncode, inside.stdout, inside.stderr) == (
            real.returncode, real.stdout, real.stderr), args


def test_nothing_is_left_behind_for_the_next_call(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_cli("init", str(ws), "--no-download", check=True)
    before_env, before_cwd = dict(os.environ), os.getcwd()
    logger = logging.getLogger("soulframe")
    before_log = (logger.level, list(logger.handlers))
    first = run_cli("-v", "-w", str(ws), "prompt", env={"SOULFRAME_LOG": "debug"}, cwd=ws)
    assert first.returncode == 0 and "soulframe" in first.stderr  # -v logged on its stderr
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    assert (logger.level, list(logger.handlers)) == before_log
    # a second -v logs to its own stderr, not to the first call's captured stream
    second = run_cli("-v", "-w", str(ws), "prompt")
    assert second.returncode == 0 and "soulframe" in second.stderr
    # without -v nothing is logged
    assert "INFO" not in run_cli("-w", str(ws), "prompt").stderr
    # stdout carries the command's output only
    data = json.loads(run_cli("-w", str(ws), "config", "get", "memory.max_results", "--json").stdout)
    assert data["key"] == "memory.max_results"
