"""What the memory index hands back: the report of a sync, the results of a search, an
excerpt of a file, and the warning and error memory raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ..model import SearchHit, SoulframeError


class MemoryWarning(UserWarning):
    """A memory file was skipped or repaired, or search ran keyword-only."""


class MemoryDisabledError(SoulframeError):
    pass


@attrs.define
class SyncReport:
    """What one sync did (also passed to the ``memory_indexed`` hook)."""

    files: int = 0
    added: list[str] = attrs.field(factory=list)
    changed: list[str] = attrs.field(factory=list)
    removed: list[str] = attrs.field(factory=list)
    unchanged: int = 0
    chunks: int = 0
    #: windows embedded by the provider now / served from the embedding cache
    embedded: int = 0
    cached: int = 0
    skipped: list[tuple[str, str]] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    #: (old, new) embedding model when it changed and everything was re-embedded
    model_changed: tuple[str | None, str | None] | None = None
    #: set when the store was corrupted and rebuilt
    recovered_from: str | None = None
    seconds: float = 0.0
    model: str | None = None

    @property
    def changed_anything(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def to_dict(self) -> dict[str, Any]:
        d = attrs.asdict(self)
        d["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        return d


class SearchResults(list[SearchHit]):
    """The hits of one search, best first, plus how the search ran.

    ``mode`` is ``"hybrid"``, ``"keyword-only"`` or ``"vector-only"``; ``notice`` says why
    when semantic search was not available (never silent).
    """

    def __init__(self, hits: Sequence[SearchHit] = (), *, query: str = "", mode: str = "hybrid",
                 notice: str | None = None, terms: Sequence[str] = ()) -> None:
        super().__init__(hits)
        self.query = query
        self.mode = mode
        self.notice = notice
        self.terms = list(terms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "notice": self.notice,
            "results": [h.to_dict() for h in self],
        }


@attrs.frozen
class MemoryExcerpt:
    """Lines of a memory file, from ``memory_get``."""

    path: str
    start_line: int
    end_line: int
    text: str
    total_lines: int

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self) | {"citation": self.citation}
