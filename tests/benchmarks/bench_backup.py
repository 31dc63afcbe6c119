"""`soulframe backup commit` in a workspace of years of daily logs (``tox -e bench``; figures
in the table at the end of the run, see conftest.py).

Target: committing one changed note in a 5,000-file workspace (``SOULFRAME_BENCH_BACKUP_FILES``)
costs at most 2.5x what git alone takes to stage and commit it (``git add -A`` + ``git
commit``): the secret check reads the files the commit takes, not every tracked file again
(that made it 19x). Wall time: the work is git's, in child processes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from soulframe_workflows.backup import commit_all, init

from .bench_memory import make_workspace
from .conftest import interleaved

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


def test_backup_commit_beside_git_alone(tmp_path: Path, bench: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
                       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
                       "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}.items():
        monkeypatch.setenv(key, value)
    n = int(os.environ.get("SOULFRAME_BENCH_BACKUP_FILES", "5000"))
    roots = {}
    for name in ("soulframe", "git"):
        root = make_workspace(tmp_path / name, n, entries=3)
        init(root)
        roots[name] = root
    turn = iter(range(10**6))

    def note(root: Path) -> None:
        with open(root / "memory" / "log-00007.md", "a") as fh:
            fh.write(f"- note {next(turn)}\n")

    def soulframe() -> None:
        note(roots["soulframe"])
        assert commit_all(roots["soulframe"], "memory update").committed

    def git_alone() -> None:
        note(roots["git"])
        subprocess.run(["git", "add", "-A"], cwd=roots["git"], check=True)
        subprocess.run(["git", "commit", "-qm", "memory update"], cwd=roots["git"], check=True)

    s, g = interleaved(soulframe, git_alone, runs=7)
    bench.speed(f"backup commit, {n:,} files", s.wall, g.wall, target=2.5,
                baseline_name="git add -A + commit alone")
