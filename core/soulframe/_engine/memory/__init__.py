"""Long-term memory: the :class:`MemoryIndex` front (:mod:`.index`) over discovery of the
memory files (:mod:`.files`), content hashes (:mod:`.hashing`; the chunkers are plugins, :mod:`.pipeline`), search (:mod:`.querying`,
:mod:`.fusion`), per-user memory (:mod:`.users`), watching (:mod:`.watch`) and evaluation
(:mod:`.evaluation`). Storage is the selected store plugin's; embeddings the selected
provider's.

Upkeep (docs/memory-upkeep.md): write-time safety and quarantine (:mod:`.safety`), session
capture (:mod:`.sessions`), recall tracking (:mod:`.recall`), superseded facts
(:mod:`.supersede`), consolidation (:mod:`.consolidate`) and entity pages (:mod:`.entities`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import MemoryIndex
    from .results import (
        MemoryDisabledError,
        MemoryExcerpt,
        MemoryWarning,
        SearchResults,
        SyncReport,
    )

__all__ = [
    "MemoryDisabledError", "MemoryExcerpt", "MemoryIndex", "MemoryWarning", "SearchResults", "SyncReport",
]


def __getattr__(name: str) -> Any:
    # loaded on first use: a prompt build imports one small submodule (``.supersede``)
    # without paying for the index, discovery and the results it never touches
    if name == "MemoryIndex":
        from .index import MemoryIndex

        return MemoryIndex
    if name in __all__:
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
