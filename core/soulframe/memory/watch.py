"""``soulframe memory watch``: re-sync the index when memory files change (watchdog).

Events are debounced (``memory.watch_debounce_ms``, 1,500 ms, seed 000 §13): a burst of
writes (an editor's save, a flush writing several files) causes one sync. Moves and creates
are handled as well as modifications (editors save by renaming a temp file).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import MemoryIndex, SyncReport


def _relevant(path: str) -> bool:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.lower().endswith(".md") and not name.startswith(".")


def watch(
    memory: MemoryIndex,
    *,
    debounce_s: float = 1.5,
    on_sync: Callable[[SyncReport], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Block, syncing ``memory`` after changes settle, until ``stop`` is set (or Ctrl-C)."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    dirty = threading.Event()
    last_event = [0.0]

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
            if event.is_directory or any(_relevant(p) for p in paths if p):
                last_event[0] = time.monotonic()
                dirty.set()

    stop = stop or threading.Event()
    observer: Any = Observer()
    root = memory.agent.root
    observer.schedule(Handler(), str(root), recursive=True)
    observer.start()
    try:
        while not stop.is_set():
            if not dirty.wait(timeout=0.2):
                continue
            # wait until no event arrived for the debounce window
            while time.monotonic() - last_event[0] < debounce_s and not stop.is_set():
                time.sleep(min(0.05, debounce_s))
            dirty.clear()
            report = memory.sync()
            if on_sync is not None:
                on_sync(report)
    finally:
        observer.stop()
        observer.join(timeout=5)
