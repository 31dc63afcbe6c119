"""What syncing the memory files keeps between syncs, owned in one place: :class:`Syncer`.

:class:`~soulframe._engine.memory.index.MemoryIndex` holds one (``index.syncer``); the sync
itself (:mod:`.sync`) takes the lock through it, asks it which warnings were already given
and hands it what the walk saw, and a search asks it whether anything may have changed."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import AgentLike
    from .files import MemoryFile
    from .freshness import Snapshot


class Syncer:
    """The cross-process sync lock (and how deep this thread holds it), the warnings given
    once per process, and what the last full sync saw (:mod:`.freshness`)."""

    def __init__(self, agent: AgentLike) -> None:
        self.agent = agent
        #: nested syncs of this index (a rebuild's sync): only the outermost takes the lock
        self._depth = 0
        #: (path, mtime, size) of files warned about: once per version of a file
        self._warned: set[tuple[str, int, int]] = set()
        #: (path, why) of paths the walk left out or narrowed: once per process
        self._warned_paths: set[tuple[str, str]] = set()
        #: what the last full sync saw; None: the next search walks
        self._snapshot: Snapshot | None = None
        #: the directories the last walk saw, with their mtimes
        self._walked_dirs: dict[str, int] = {}
        #: whether the last walk met a symlink or a hard link (None: no walk yet)
        self._walked_links: bool | None = None
        #: the lock file while this process holds it (it says how far the sync got)
        self._fd: int | None = None
        self._told_at = 0.0

    @contextlib.contextmanager
    def lock(self, *, blocking: bool, wait_s: float = 0.0) -> Iterator[bool]:
        """Hold the agent's sync lock file (``<state_dir>/memory/<agent>.sync.lock``):
        yields False when ``blocking`` is off and another process holds it (after trying
        for ``wait_s`` seconds)."""
        if self._depth:
            self._depth += 1
            try:
                yield True
            finally:
                self._depth -= 1
            return
        from ..workspace import ensure_private_dir, lock_fd, unlock_fd

        lock_dir = ensure_private_dir(self.agent.state_dir / "memory")
        fd = os.open(lock_dir / f"{self.agent.state_key}.sync.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + wait_s
            while not lock_fd(fd, blocking=blocking):
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.05)
            self._depth = 1
            self._fd, self._told_at = fd, 0.0
            try:
                yield True
            finally:
                self._depth = 0
                self._fd = None
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                unlock_fd(fd)
        finally:
            os.close(fd)

    def indexing(self, done: int, total: int) -> None:
        """How far this process's sync got, written into the lock file it holds (twice a
        second at most) for a search in another process to tell its user."""
        now = time.monotonic()
        if self._fd is None or (now - self._told_at < 0.5 and done < total):
            return
        self._told_at = now
        data = f"{os.getpid()} {done} {total}\n".encode() if done < total else b""
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
            os.lseek(self._fd, 0, os.SEEK_SET)  # not pwrite: Windows has none
            os.write(self._fd, data)

    def indexing_elsewhere(self) -> tuple[int, int] | None:
        """(files done, files to read) of the sync that holds the lock now (another
        process's, or another agent object's), as its lock file says; None when it says
        nothing (no sync, or one that reads no file)."""
        path = self.agent.state_dir / "memory" / f"{self.agent.state_key}.sync.lock"
        try:
            _pid, done, total = path.read_text(encoding="ascii").split()
            return (int(done), int(total)) if int(done) < int(total) else None
        except (OSError, ValueError):  # no file, or a line being rewritten
            return None

    def first_path_warning(self, path: str, why: str) -> bool:
        """Whether a path left out of the walk (``why``) is told now: once per process,
        not at every search."""
        if (path, why) in self._warned_paths:
            return False
        self._warned_paths.add((path, why))
        return True

    def first_file_warning(self, path: str, mtime_ns: int, size: int) -> bool:
        """Whether a problem with this version of a file is told now (once per version)."""
        key = (path, mtime_ns, size)
        if key in self._warned:
            return False
        self._warned.add(key)
        return True

    def walked(self, dirs: dict[str, int], *, links: bool = True) -> None:
        """The directories a walk of the memory files just saw, and whether it met a link."""
        self._walked_dirs = dirs
        self._walked_links = links

    @property
    def plain_tree(self) -> bool:
        """Whether the last walk found every memory file under its own name alone (no
        symlink, no hard link): then a change to a file changes that path's record only,
        and syncing the paths that changed is a whole sync."""
        return self._walked_links is False

    def synced(self, found: Iterable[MemoryFile], started_ns: int) -> None:
        """A full sync that started at ``started_ns`` indexed ``found``."""
        from .freshness import Snapshot

        self._snapshot = Snapshot.after_walk(self._walked_dirs, found, started_ns)

    def unchanged(self, rescan_s: float) -> bool:
        """Whether nothing can have changed since the last full sync (:mod:`.freshness`)."""
        return self._snapshot is not None and self._snapshot.unchanged(rescan_s)

    def forget(self) -> None:
        """The files were just written here: the next search syncs first."""
        self._snapshot = None
