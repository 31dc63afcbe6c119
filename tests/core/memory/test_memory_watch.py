"""``memory watch`` re-syncs on changes of memory files only: real file events (watchdog's
inotify observer on Linux), a real index."""

from __future__ import annotations

import subprocess
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.memory.watch import watch
from soulframe._engine.plugins import make_plugin_manager

DEBOUNCE = 0.2
#: long enough for an event to have been delivered and debounced
SETTLE = 1.2


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "MEMORY.md").write_text("# MEMORY.md\n\n- Car: grey Subaru.\n")
    (root / "memory" / "2026-08-01.md").write_text("# 2026-08-01\n\n- Fixed the login test.\n")
    (root / "SOUL.md").write_text("# SOUL.md\nBe kind.\n")
    return root


class Watching:
    """``watch()`` running in a thread; ``syncs`` collects every sync report."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.syncs: list[Any] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            watch(self.agent.memory, debounce_s=DEBOUNCE, on_sync=self.syncs.append, stop=self.stop)

    def __enter__(self) -> Watching:
        self.thread.start()
        time.sleep(0.5)  # the observer is running
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)

    def wait_for(self, n: int, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while len(self.syncs) < n and time.monotonic() < end:
            time.sleep(0.05)


@pytest.fixture
def agent(ws: Path, tmp_path: Path) -> Any:
    cfg = load_config(search=False, workspace=ws, overrides={
        "state_dir": str(tmp_path / "state"), "embedding.provider": "none",
        "memory.extra_paths": ["notes"]})
    a = Agent(cfg, pm=make_plugin_manager())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.memory.sync()
    yield a
    a.close()


def test_changes_outside_memory_files_cause_no_sync(agent: Agent, ws: Path) -> None:
    with Watching(agent) as w:
        (ws / "SOUL.md").write_text("# SOUL.md\nBe kind, and brief.\n")
        (ws / "USER.md").write_text("# USER.md\n")
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / ".git" / "notes.md").write_text("not memory\n")
        (ws / "memory" / ".draft.md").write_text("hidden\n")
        (ws / "memory" / "todo.txt").write_text("not markdown\n")
        # reading memory files (what every sync does) is not a change
        for p in [ws / "MEMORY.md", ws / "memory" / "2026-08-01.md"]:
            p.read_text()
        agent.memory.search("login", sync=True)
        time.sleep(SETTLE)
        assert w.syncs == []


def test_a_memory_change_causes_one_sync_not_a_loop(agent: Agent, ws: Path) -> None:
    with Watching(agent) as w:
        (ws / "memory" / "2026-08-07.md").write_text("# 2026-08-07\n\n- The otters were out.\n")
        w.wait_for(1)
        time.sleep(SETTLE)  # the sync read the files: that must not trigger another
        assert len(w.syncs) == 1
        assert w.syncs[0].added == ["memory/2026-08-07.md"]


@pytest.mark.parametrize("change", ["MEMORY.md edited", "extra path", "note moved in", "note deleted", "memory dir moved away"])
def test_each_kind_of_memory_change_is_seen(agent: Agent, ws: Path, change: str, tmp_path: Path) -> None:
    with Watching(agent) as w:
        if change == "MEMORY.md edited":
            (ws / "MEMORY.md").write_text("# MEMORY.md\n\n- Car: blue Subaru.\n")
        elif change == "extra path":
            (ws / "notes" / "trip.md").write_text("# Trip\n\n- Lisbon in May.\n")
        elif change == "note moved in":
            outside = tmp_path / "draft.md"
            outside.write_text("# Draft\n\n- Moved in by an editor.\n")
            outside.rename(ws / "memory" / "moved.md")
        elif change == "note deleted":
            (ws / "memory" / "2026-08-01.md").unlink()
        else:
            (ws / "memory").rename(tmp_path / "memory-archive")
        w.wait_for(1)
    assert w.syncs and w.syncs[0].changed_anything


def test_a_change_made_while_the_watch_starts_is_not_missed(agent: Agent, ws: Path) -> None:
    """After the last sync (``memory watch`` runs one, then starts watching) and before the
    watch exists, a change sends no event: the note stayed unindexed until the next one."""
    (ws / "memory" / "2026-08-06.md").write_text("# 2026-08-06\n\n- The kestrel is back.\n")
    with Watching(agent) as w:
        w.wait_for(1)
    assert w.syncs and w.syncs[0].added == ["memory/2026-08-06.md"]
    assert len(w.syncs) == 1


def test_a_workspace_replaced_while_watched_is_watched_again(agent: Agent, ws: Path, tmp_path: Path) -> None:
    """Moved away and made again (restored from a backup, cloned afresh): the watch followed
    the old directory, said nothing, and no later note was ever indexed."""
    with Watching(agent) as w:
        ws.rename(tmp_path / "ws-before")
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / "2026-08-08.md").write_text("# 2026-08-08\n\n- Restored from the backup.\n")
        w.wait_for(1)
        (ws / "memory" / "2026-08-09.md").write_text("# 2026-08-09\n\n- Written after the restore.\n")
        w.wait_for(2)
    added = [p for s in w.syncs for p in s.added]
    assert "memory/2026-08-08.md" in added and "memory/2026-08-09.md" in added, w.syncs
