"""A command that must index more than a few files says so on a terminal — the first
`memory search` over a new workspace included — and a search with nothing to index shows
nothing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path


def _search_on_a_terminal(ws: Path, tmp_path: Path) -> str:
    cfg = tmp_path / "cli.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n\n[embedding]\nprovider = "none"\n')
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(ws), "memory", "search", "boiler"],
                              env={**os.environ, "SOULFRAME_CONFIG": str(cfg), "COLUMNS": "100"},
                              stdout=subprocess.PIPE, stderr=slave, text=True, timeout=120)
        os.close(slave)
        slave = -1
        err = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert proc.returncode == 0, err
    assert "boiler" in proc.stdout
    return err.decode("utf-8", "replace")


def test_the_first_search_over_many_files_shows_progress_and_a_second_does_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 31):
        (ws / "memory" / f"2026-09-{day:02d}.md").write_text(
            f"# 2026-09-{day:02d}\n\n- note {day}: the boiler was serviced\n")
    first = _search_on_a_terminal(ws, tmp_path)
    assert "indexing memory" in first, first
    second = _search_on_a_terminal(ws, tmp_path)
    assert "indexing memory" not in second, second
