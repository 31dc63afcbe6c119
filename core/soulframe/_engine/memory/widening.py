"""Widening a hit to the lines around it, within a character budget
(``memory.hit_chars``).

A chunk is cut where the chunker found room, not where a conversation's thread ends: the
turn before a matched turn (the question it answers) or after it (the detail that follows)
often lies across the cut. A hit therefore grows from its chunk's lines outward — a line
after, a line before, in turn — as long as the whole stays within ``memory.hit_chars``
characters, never across a Markdown heading (another day's log, another section) and never
into lines an earlier (better) hit already cites, nor into a superseded entry. Its snippet and score are unchanged: only
the cited line range, what an agent reads with ``memory_get``, grows.

Measured on the REALTALK tune half (docs/memory.md): 1,300 characters lifted hybrid
recall@6 from 0.616 to 0.632 at 7,300 characters per question at k = 6 (under the 8,000
budget the issue set); hits re-centred on their best line at 1,000 characters lost recall
(0.601): the chunk's own lines are what scored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ..model import SearchHit, SoulframeError
from .supersede import is_superseded

if TYPE_CHECKING:
    from .indexview import IndexView


class Widener:
    """Widens the hits of one search, best first (see the module): :meth:`add` returns the
    widened hit, or ``None`` when every line of it is already cited by a better hit (it
    would add nothing: the caller takes the next candidate instead)."""

    def __init__(self, index: IndexView, budget: int) -> None:
        self.index = index
        self.budget = budget
        self._files: dict[str, list[str] | None] = {}
        self._taken: dict[str, list[tuple[int, int]]] = {}

    def lines(self, path: str) -> list[str] | None:
        """The lines of the workspace file ``path``, read once per search; ``None`` when it
        is gone or refused."""
        return _lines(self.index, path, self._files)

    def add(self, h: SearchHit) -> SearchHit | None:
        if self.budget <= 0:
            return h
        used = self._taken.setdefault(h.path, [])
        own = range(h.start_line - 1, h.end_line)
        if used and all(any(a <= i <= b for a, b in used) for i in own):
            return None
        lines = None if h.scope == "user" else _lines(self.index, h.path, self._files)
        if lines is None or h.end_line > len(lines):
            used.append((own.start, own.stop - 1))
            return h
        lo, hi = own.start, own.stop - 1
        size = len("\n".join(lines[lo : hi + 1]))

        def free(i: int) -> bool:
            # never into a superseded entry: search hides it (``--history`` shows it apart)
            return 0 <= i < len(lines) and not lines[i].lstrip().startswith("#") \
                and not is_superseded(lines[i]) and not any(a <= i <= b for a, b in used)

        grew = True
        while grew:
            grew = False
            for i in (hi + 1, lo - 1):
                if free(i) and size + len(lines[i]) + 1 <= self.budget:
                    size += len(lines[i]) + 1
                    lo, hi = min(lo, i), max(hi, i)
                    grew = True
        # blank lines at the edges cite nothing
        while lo < own.start and not lines[lo].strip():
            lo += 1
        while hi > own.stop - 1 and not lines[hi].strip():
            hi -= 1
        used.append((lo, hi))
        return attrs.evolve(h, start_line=lo + 1, end_line=hi + 1)


def _lines(index: IndexView, path: str, files: dict[str, list[str] | None]) -> list[str] | None:
    if path not in files:
        try:
            target = index.agent.workspace.resolve(path)
            files[path] = target.read_text(encoding="utf-8", errors="replace").split("\n")
        except (OSError, SoulframeError):  # gone, or refused: the chunk as it is
            files[path] = None
    return files[path]
