"""Long-term memory: the :class:`MemoryIndex` front (:mod:`.index`) over discovery of the
memory files (:mod:`.files`), chunking (:mod:`.chunking`), search (:mod:`.querying`,
:mod:`.fusion`), per-user memory (:mod:`.users`), watching (:mod:`.watch`) and evaluation
(:mod:`.evaluation`). Storage is the selected store plugin's; embeddings the selected
provider's."""

from __future__ import annotations

from .index import MemoryIndex
from .results import MemoryDisabledError, MemoryExcerpt, MemoryWarning, SearchResults, SyncReport

__all__ = [
    "MemoryDisabledError", "MemoryExcerpt", "MemoryIndex", "MemoryWarning", "SearchResults", "SyncReport",
]
