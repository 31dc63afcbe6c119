"""`soulframe doctor` in a workspace of years of daily logs (``tox -e bench``; figures in the
table at the end of the run, see conftest.py).

Doctor reads every memory file once, to find a secret written into one by hand: that read
and scan is the work it cannot skip, and the baseline. Target: every check together costs at
most 1.75x that baseline on 3,000 daily logs (``SOULFRAME_BENCH_DOCTOR_FILES``): listing the
logs, looking for symlinks and the index's status add less than the reading (resolving every
log's path again, and asking each file whether any of its parents is a link, made it 2.2x;
measured 1.4x to 1.5x here and 1.8x once in a clean CI run; medians of seven runs).
"""

from __future__ import annotations

import datetime
import os
import time
import warnings
from pathlib import Path
from typing import Any

from soulframe._engine.agent import Agent
from soulframe._engine.cli.doctor import run_checks
from soulframe._engine.redaction import secret_lines

from .bench_memory import make_workspace
from .conftest import interleaved


def test_doctor_beside_reading_every_file(tmp_path: Path, bench: Any) -> None:
    n = int(os.environ.get("SOULFRAME_BENCH_DOCTOR_FILES", "3000"))
    ws = make_workspace(tmp_path / "ws", n, entries=3)
    old, first = time.time() - 3600, datetime.date(2018, 1, 1)
    for i, p in enumerate(sorted((ws / "memory").iterdir())):  # named as daily logs are
        dated = p.with_name(f"{first + datetime.timedelta(days=i)}.md")
        p.rename(dated)
        os.utime(dated, (old, old))
    agent = Agent.open(ws, state_dir=str(tmp_path / "state"), embedding__provider="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.sync()
    files = sorted((ws / "memory").iterdir())

    def read_and_scan() -> None:
        for p in files:
            list(secret_lines(p.read_text(encoding="utf-8", errors="replace")))

    def doctor() -> None:
        findings = run_checks(agent)
        assert not [f for f in findings if "the check failed" in f.message]

    d, b = interleaved(doctor, read_and_scan, runs=7)
    agent.close()
    bench.speed(f"doctor, {n:,} daily logs", d.cpu, b.cpu, target=1.75,
                baseline_name="reading and scanning each file once")
