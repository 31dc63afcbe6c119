"""What the memory index hands back: the report of a sync, the results of a search, an
excerpt of a file, and the warning and error memory raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ..model import RecallStat, SearchHit, SoulframeError, SoulframeWarning


class MemoryWarning(SoulframeWarning):
    """A memory file was skipped or repaired, or search ran keyword-only."""


class MemoryDisabledError(SoulframeError):
    pass


@attrs.define
class SyncReport:
    """What one sync did (also passed to the ``memory_indexed`` hook)."""

    #: the memory files the sync looked at: every one for a walk, the named ones for
    #: ``MemoryIndex.sync_paths`` (what a watcher's event or soulframe's own write named)
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
    #: (files done, files to read) of the sync another process was running, when this one
    #: was skipped for it (a search does not wait): the index may not hold everything yet
    indexing_elsewhere: tuple[int, int] | None = None

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
    when semantic search was not available (never silent); ``focused`` is the question as
    the vector channel also embedded it, without the names most chunks hold
    (``memory.query_focus``), or ``None`` when it embedded the question as asked only.
    """

    def __init__(self, hits: Sequence[SearchHit] = (), *, query: str = "", mode: str = "hybrid",
                 notice: str | None = None, terms: Sequence[str] = (),
                 focused: str | None = None) -> None:
        super().__init__(hits)
        self.query = query
        self.mode = mode
        self.notice = notice
        self.terms = list(terms)
        self.focused = focused

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "notice": self.notice,
            "focused": self.focused,
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


@attrs.frozen
class SkippedFile:
    """A memory file the index leaves out, and why (too big, binary, a link leading astray)."""

    path: str
    reason: str


@attrs.frozen
class MemoryStatus:
    """What ``memory status`` reports (``MemoryIndex.status()``): the files, the index the
    store keeps, the provider and how search runs, stale and skipped files, the store's
    health. ``to_dict()`` is the ``--json`` shape."""

    agent: str
    #: the name the index is kept under: the id, plus a path hash for another workspace
    state_key: str
    workspace: str
    store: str
    location: str
    files: int
    #: from the store's ``stats()``
    indexed_files: int | None
    chunks: int | None
    embedded_chunks: int | None
    provider: str | None
    model: str | None
    dimensions: int | None
    index_dimensions: int | None
    mode: str
    notice: str | None
    vector_backend: str | None
    text_backend: str | None
    fusion: str
    stale_files: tuple[str, ...]
    skipped_files: tuple[SkippedFile, ...]
    cached_embeddings: int | None
    schema_version: int | None
    bytes: int | None
    problems: tuple[str, ...]
    #: the most recalled entries (``deep`` only, and when the store tracks recalls)
    most_recalled: tuple[RecallStat, ...] | None = None

    @property
    def health(self) -> str:
        return "ok" if not self.problems else "problems"

    def to_dict(self) -> dict[str, Any]:
        values = attrs.asdict(self, recurse=False)
        recalled = values.pop("most_recalled")
        out: dict[str, Any] = {}
        for key, value in values.items():
            if key == "problems":
                out["health"] = self.health
            if key == "skipped_files":
                value = [{"path": s.path, "reason": s.reason} for s in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        if recalled is not None:
            out["most_recalled"] = [r.to_dict() for r in recalled]
        return out
