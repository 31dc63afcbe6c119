"""``soulframe memory watch``: re-sync the index when memory files change (watchdog).

Events are debounced (``memory.watch_debounce_ms``, 1,500 ms, seed 000 §13): a burst of
writes (an editor's save, a flush writing several files) causes one sync. Moves and creates
are handled as well as modifications (editors save by renaming a temp file).

Only changes to memory files count (``MEMORY.md``, ``memory/**/*.md``,
``memory.extra_paths``: :meth:`~soulframe._engine.memory.files.Discovery.is_memory_path`), and
directories that hold them: a commit under ``.git/``, an edit of ``SOUL.md`` or the sync's
own reads of the files it indexes (inotify reports opens and closes) never cause a sync.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..workspace import directory_identity
from .files import SKIP_DIRS

if TYPE_CHECKING:
    from .files import Discovery
    from .index import MemoryIndex
    from .results import SyncReport


#: after a sync failed (a full disk, a locked or missing index), the next try comes this
#: long after, or sooner with the next change
RETRY_S = 30.0

#: how often the watch checks that the workspace is still the directory it watches
ROOT_CHECK_S = 1.0

#: what changes a file; "opened" and "closed_no_write" are reads (the sync's own among them)
CHANGE_EVENTS = frozenset({"created", "deleted", "modified", "moved", "closed"})


class MemoryChanges:
    """Decides whether a file-system event under the workspace changes memory."""

    def __init__(self, discovery: Discovery) -> None:
        self.discovery = discovery
        self.root = os.path.realpath(discovery.root)
        self._roots = [discovery.root.as_posix()]
        if self.root != self._roots[0]:
            self._roots.append(self.root)
        self._dirs = ["memory", *(extra for extra, _ in discovery.extra)]

    def _rel(self, path: str) -> str | None:
        path = path.replace("\\", "/")
        for root in self._roots:
            if path.startswith(root.rstrip("/") + "/"):
                return path[len(root.rstrip("/")) + 1 :]
        return None

    def path_matters(self, path: str, is_directory: bool) -> bool:
        rel = self._rel(path)
        if rel is None:
            return False
        if is_directory:
            # a directory of notes moved in, out or deleted: its files may send no events
            parts = rel.split("/")
            hidden = any(p.startswith(".") or p in SKIP_DIRS for p in parts)
            return not hidden and any(rel == d or rel.startswith(d + "/") for d in self._dirs)
        return self.discovery.is_memory_path(rel)

    def __call__(self, event: Any) -> bool:
        if event.event_type not in CHANGE_EVENTS:
            return False
        if event.event_type == "modified" and event.is_directory:
            return False  # a directory's mtime: its files' own events say what changed
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        return any(self.path_matters(p, event.is_directory) for p in paths if p)


def watch(
    memory: MemoryIndex,
    *,
    debounce_s: float = 1.5,
    on_sync: Callable[[SyncReport], None] | None = None,
    stop: threading.Event | None = None,
    on_ready: Callable[[], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
) -> None:
    """Block, syncing ``memory`` after changes settle, until ``stop`` is set (or Ctrl-C).
    ``on_ready`` is called once changes are being watched (not before: a change made
    between "watching" and the watch itself would be missed). With ``on_error``, a sync that
    fails is handed to it and the watch goes on, trying again after :data:`RETRY_S` or at
    the next change; without, the error ends the watch."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    dirty = threading.Event()
    last_event = [0.0]
    matters = MemoryChanges(memory.discovery)
    #: the files the events since the last sync named; None: only a walk can tell (a
    #: directory made, moved or deleted; the first sync; the workspace replaced)
    named: list[set[str] | None] = [None]
    named_lock = threading.Lock()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if matters(event):
                with named_lock:
                    paths = named[0]
                    if event.is_directory:
                        named[0] = None
                    elif paths is not None:
                        paths.update(str(p) for p in (event.src_path, getattr(event, "dest_path", "")) if p)
                last_event[0] = time.monotonic()
                dirty.set()

    stop = stop or threading.Event()
    observer: Any = Observer()
    root = memory.agent.root
    handler = Handler()
    watched = directory_identity(root)
    observer.schedule(handler, str(root), recursive=True)
    observer.start()  # the inotify (or other) watch exists once this returns
    checked = time.monotonic()
    # a change made after the caller's last sync but before the watch existed sent no event:
    # one sync now catches it (handed to on_sync only when it changed something)
    dirty.set()
    catching_up = True
    if on_ready is not None:
        on_ready()
    try:
        while not stop.is_set():
            if time.monotonic() - checked >= ROOT_CHECK_S:
                checked = time.monotonic()
                now = directory_identity(root)
                if now is not None and now != watched:
                    # the workspace was replaced (moved away and made again, restored from a
                    # backup, cloned afresh): the watch followed the old directory, and no
                    # change here would ever be seen again
                    watched = now
                    observer.unschedule_all()
                    observer.schedule(handler, str(root), recursive=True)
                    last_event[0] = 0.0
                    with named_lock:
                        named[0] = None
                    dirty.set()
            if not dirty.wait(timeout=0.2):
                continue
            # wait until no event arrived for the debounce window
            while time.monotonic() - last_event[0] < debounce_s and not stop.is_set():
                time.sleep(min(0.05, debounce_s))
            dirty.clear()
            first, catching_up = catching_up, False
            with named_lock:
                paths, named[0] = named[0], set()
            try:
                # the files the events named, read alone; a walk when they cannot tell
                # (sync_paths walks then too)
                report = memory.sync() if paths is None else memory.sync_paths(sorted(paths))
            except Exception as exc:
                if on_error is None:
                    raise
                on_error(exc)
                # the changes are still not indexed: the debounce wait above ends RETRY_S
                # from now, or a debounce after the next change
                last_event[0] = time.monotonic() + RETRY_S - debounce_s
                with named_lock:
                    named[0] = None  # the retry walks: what failed is not known
                dirty.set()
                continue
            if on_sync is not None and not (first and not report.changed_anything and not report.warnings):
                on_sync(report)
    finally:
        observer.stop()
        observer.join(timeout=5)
