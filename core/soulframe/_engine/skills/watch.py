"""Hot reload of skills (seed 000 §13): a watchdog observer over every skill root.

A change to a ``SKILL.md``, or a skill directory appearing or disappearing, starts a
debounce window (``skills.watch_debounce_ms``, 500 ms); when it closes, ``on_change`` is
called once with the paths seen, and the skill set bumps its version so the next prompt
build and search reload. Roots are watched recursively, so a new skill directory is covered
as soon as it is created. A root that does not exist yet is waited for by watching its
nearest existing parent; a root that is deleted goes back to being waited for. A root
replaced under the same path without an event reaching its watch (the whole workspace moved
away and made again, restored from a backup) is found by checking each root's directory
identity every :data:`ROOT_CHECK_S` and watched afresh.

Imported only by :meth:`soulframe._engine.skills.SkillSet.watch` (watchdog starts threads).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from ..workspace import directory_identity
from .loader import IGNORED_DIRS, SKILL_FILE, FileSig, sig_of

log = logging.getLogger("soulframe.skills")

#: how often (seconds) the watched roots are checked for having been replaced
ROOT_CHECK_S = 1.0

_RELEVANT = frozenset({"created", "deleted", "modified", "moved", "closed"})


def _as_str(path: Any) -> str:
    return os.fsdecode(bytes(path)) if isinstance(path, bytes | bytearray) else str(path)


class SkillWatcher:
    """Watches skill roots; calls ``on_change(paths)`` once per debounce window."""

    def __init__(
        self,
        roots: Sequence[Path],
        on_change: Callable[[list[str]], None],
        *,
        debounce_s: float = 0.5,
        known: Mapping[str, FileSig | None] | None = None,
    ) -> None:
        self.roots = [str(Path(r).expanduser().absolute()) for r in dict.fromkeys(roots)]
        self.on_change = on_change
        self.debounce_s = max(0.0, debounce_s)
        self._observer: Any = None
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._pending: list[str] = []
        self._deadline: float | None = None
        self._stopping = False
        self._worker: threading.Thread | None = None
        #: root -> watch handle, for roots that exist and are watched recursively
        self._root_watches: dict[str, Any] = {}
        #: root -> the directory the watch follows (device, inode)
        self._root_ids: dict[str, tuple[int, int] | None] = {}
        #: parent dir -> watch handle, for roots waited for
        self._parent_watches: dict[str, Any] = {}
        #: False when a root could not be watched (e.g. out of inotify watches): the skill
        #: set then keeps checking the disk itself
        self.complete = True
        #: stat signatures of the files seen, so that a "modified" event that changed only
        #: the access time (reading a skill updates atime under relatime) is ignored
        self._sigs: dict[str, FileSig | None] = dict(known or {})

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> SkillWatcher:
        self._observer = Observer()
        self._observer.daemon = True
        handler = _Handler(self)
        self._handler = handler
        with self._lock:
            self._sync_watches()
        self._observer.start()
        self._worker = threading.Thread(target=self._run, name="soulframe-skills-debounce", daemon=True)
        self._worker.start()
        return self

    def stop(self) -> None:
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._worker is not None:
            self._worker.join(timeout=5)

    @property
    def running(self) -> bool:
        return self._observer is not None and not self._stopping

    def __enter__(self) -> SkillWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ watches

    def _schedule(self, path: str, recursive: bool) -> Any:
        try:
            return self._observer.schedule(self._handler, path, recursive=recursive)
        except OSError as exc:  # inotify limits, permissions
            log.warning("skills: cannot watch %s (%s); changes there are found by polling", path, exc)
            self.complete = False
            return None

    def _sync_watches(self) -> None:
        """Watch every existing root; for every missing one, its nearest existing parent."""
        wanted_parents: set[str] = set()
        complete = True
        for root in self.roots:
            if os.path.isdir(root):
                if root not in self._root_watches:
                    identity = directory_identity(root)
                    handle = self._schedule(root, recursive=True)
                    if handle is None:
                        complete = False
                        continue
                    self._root_watches[root] = handle
                    self._root_ids[root] = identity
                continue
            if root in self._root_watches:  # deleted since
                self._unschedule(self._root_watches.pop(root))
                self._root_ids.pop(root, None)
            parent = _nearest_existing_parent(root)
            if parent is None:
                complete = False
            else:
                wanted_parents.add(parent)
        for parent in wanted_parents - set(self._parent_watches):
            handle = self._schedule(parent, recursive=False)
            if handle is None:
                complete = False
            else:
                self._parent_watches[parent] = handle
        for parent in set(self._parent_watches) - wanted_parents:
            self._unschedule(self._parent_watches.pop(parent))
        self.complete = complete

    def _check_roots(self) -> None:
        """Watch afresh every root that is no longer the directory its watch follows; called
        with the lock held. A workspace moved away and made again sends its skills roots'
        watches no event, and the skill set would trust them for good."""
        replaced = [root for root, identity in self._root_ids.items() if directory_identity(root) != identity]
        if not replaced:
            return
        for root in replaced:
            self._unschedule(self._root_watches.pop(root))
            self._root_ids.pop(root)
        self._sync_watches()
        self._pending.extend(replaced)
        if self._deadline is None:
            self._deadline = time.monotonic() + self.debounce_s

    def _unschedule(self, handle: Any) -> None:
        try:
            self._observer.unschedule(handle)
        except (KeyError, OSError):
            pass

    # ------------------------------------------------------------------ events

    def _relevant(self, path: str, is_directory: bool) -> bool:
        name = os.path.basename(path)
        if name == SKILL_FILE:
            return True
        parent = os.path.dirname(path)
        if path in self.roots:
            return True
        if is_directory and parent in self.roots:
            return name not in IGNORED_DIRS
        # a waited-for root (or one of its parents) appearing
        return any(r == path or r.startswith(path + os.sep) for r in self.roots)

    def _event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _RELEVANT:
            return
        if event.event_type == "modified":
            if event.is_directory:
                return  # entries added or removed arrive as their own created/deleted events
            path = _as_str(event.src_path)
            sig = sig_of(path)
            if path in self._sigs and self._sigs[path] == sig:
                return  # attributes only (atime, mode): the content did not change
            self._sigs[path] = sig
        paths = [_as_str(event.src_path)]
        dest = getattr(event, "dest_path", "")
        if dest:
            paths.append(_as_str(dest))
        hit = [p for p in paths if self._relevant(p, event.is_directory)]
        if not hit:
            return
        with self._cv:
            if self._stopping:
                return
            if any(p in self.roots or any(r.startswith(p + os.sep) for r in self.roots) for p in hit):
                self._sync_watches()
            self._pending.extend(hit)
            if self._deadline is None:
                # the window opens at the first event of a burst and is not pushed back by
                # later ones, so a steady stream of writes cannot starve a reload
                self._deadline = time.monotonic() + self.debounce_s
                self._cv.notify_all()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stopping and self._deadline is None:
                    if not self._cv.wait(ROOT_CHECK_S):
                        self._check_roots()
                if self._stopping:
                    return
                assert self._deadline is not None
                delay = self._deadline - time.monotonic()
                if delay > 0:
                    self._cv.wait(delay)
                    continue
                paths = list(dict.fromkeys(self._pending))
                self._pending.clear()
                self._deadline = None
            try:
                self.on_change(paths)
            except Exception:  # a listener's bug must not kill the watcher
                log.exception("skills: reload listener failed")


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: SkillWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher._event(event)


def _nearest_existing_parent(path: str) -> str | None:
    current = os.path.dirname(path)
    while current and not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return current or None
