"""What the memory package's own modules (sync, search, reading, journal, status, ...) use of
the memory index: :class:`IndexView`.

:class:`~soulframe._engine.memory.index.MemoryIndex` is a small front that delegates to those
modules; the state they keep between calls belongs to the collaborators it holds
(:class:`~.syncer.Syncer`, :class:`~.searcher.Searcher`), never to attributes they set on
the index. Typing them against this protocol, not the class, keeps index.py
and the modules it delegates to apart, even for the type checker, and names in one place
every attribute they reach for."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from ..model import (
        AgentLike,
        EmbeddingProvider,
        FileRecord,
        MemoryLike,
        RecallStat,
        Settings,
        Store,
    )
    from .files import Discovery, MemoryFile
    from .results import SyncReport
    from .searcher import Searcher
    from .syncer import Syncer


class IndexView(Protocol):
    """The memory index, with the parts and state its modules share."""

    agent: AgentLike
    config: Settings
    skipped_paths: list[tuple[str, str]]
    narrowed_paths: list[tuple[str, str]]
    follows_changes: bool
    progress: Callable[[int, int], None] | None
    syncer: Syncer
    searcher: Searcher

    @property
    def store(self) -> Store: ...

    @property
    def discovery(self) -> Discovery: ...

    @property
    def embedder(self) -> EmbeddingProvider | None: ...

    @property
    def embedder_problem(self) -> str | None: ...

    def model_key(self) -> str | None: ...

    def files(self) -> list[MemoryFile]: ...

    def sync(
        self, *, force: bool = False, progress: Callable[[int, int], None] | None = None,
        blocking: bool = True,
    ) -> SyncReport: ...

    def sync_if_stale(self) -> SyncReport: ...

    def changed(self) -> None: ...

    def check_enabled(self) -> None: ...

    def most_recalled(self, limit: int = 10) -> list[RecallStat]: ...

    @property
    def last_sync(self) -> SyncReport | None: ...

    def embed_and_write(
        self, pending: list[tuple[FileRecord, list[Any], bool]], provider: EmbeddingProvider | None,
        model: str | None, report: SyncReport,
    ) -> None: ...


def index_of(memory: MemoryLike) -> IndexView:
    """``agent.memory`` as the memory modules see it. The engine's agent always holds a
    :class:`~soulframe._engine.memory.index.MemoryIndex`, which is an :class:`IndexView`; the
    public :class:`~soulframe._engine.model.AgentLike` promises only :class:`MemoryLike`."""
    return cast("IndexView", memory)
