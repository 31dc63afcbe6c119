"""Whether a search must walk the memory tree first: "is the index fresh", without a walk.

A full sync costs one ``lstat`` per memory file; a search in a 20,000-file workspace must not
pay that on every call. After each sync the index keeps a :class:`Snapshot`:

* the mtime of every directory the walk listed (the root, ``memory/`` and its
  subdirectories, extra paths): creating, deleting or renaming a file — which is how most
  editors save — changes its directory's mtime;
* the (mtime, size, ctime) of the files most likely to be edited in place: the
  :data:`HOT_FILES` most recently changed ones (today's log among them) and ``MEMORY.md``.

A search stats those (a few dozen calls, whatever the workspace's size) and syncs only when
one of them moved, when the snapshot is older than ``memory.rescan_s`` seconds (an in-place
edit of an old file is seen within that interval), or when the last walk saw an mtime too
recent to trust (filesystem timestamps are coarse: a change in the same tick would look like
no change). soulframe's own writes drop the snapshot, so they are searchable at once.
``memory index`` (and any explicit :meth:`MemoryIndex.sync`) always walks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

import attrs

from .files import MemoryFile

#: files checked on every search besides the directories (the most recently changed first)
HOT_FILES = 64
#: an mtime this close to the walk (ns) may hide a change made in the same clock tick
RACY_NS = 2_000_000_000


def _mark(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns)


@attrs.define
class Snapshot:
    dirs: dict[str, int]
    files: dict[str, tuple[int, int, int]]
    taken: float  # time.monotonic() of the walk
    trusted: bool

    @classmethod
    def after_walk(cls, dirs: dict[str, int], found: Iterable[MemoryFile], started_ns: int) -> Snapshot:
        """The snapshot of a walk that started at ``started_ns`` (``time.time_ns()``)."""
        stats = [(mf, mf.stat) for mf in found if mf.stat is not None]
        stats.sort(key=lambda p: p[1].st_mtime_ns, reverse=True)
        hot = {mf.location: _mark(st) for mf, st in stats[:HOT_FILES]}
        for mf, st in stats[HOT_FILES:]:
            if "/" not in mf.path:  # MEMORY.md, the curated memory, always
                hot[mf.location] = _mark(st)
        newest = max([*dirs.values(), *(m for m, _s, _c in hot.values())], default=0)
        return cls(dict(dirs), hot, time.monotonic(), trusted=newest < started_ns - RACY_NS)

    def unchanged(self, max_age_s: float) -> bool:
        """True when nothing this snapshot watches moved and it is young enough."""
        if not self.trusted or time.monotonic() - self.taken > max_age_s:
            return False
        try:
            for path, mtime in self.dirs.items():
                if os.stat(path).st_mtime_ns != mtime:
                    return False
            for path, mark in self.files.items():
                if _mark(os.stat(path)) != mark:
                    return False
        except OSError:
            return False  # something watched is gone: a walk says what
        return True
