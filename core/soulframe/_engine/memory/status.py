"""What ``memory status`` reports: files, chunks, provider, model, vector backend, stale
and skipped files, and the store's health."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model import TracksRecalls
from .results import MemoryStatus, SkippedFile
from .sync import _skip_reason

if TYPE_CHECKING:
    from .files import MemoryFile
    from .indexview import IndexView

def status(index: IndexView, *, deep: bool = False, sync: bool = False,
           files: Sequence[MemoryFile] | None = None) -> MemoryStatus:
    """Files, chunks, provider, model, dimensions, vector backend, stale files and health.
    ``files``: what :meth:`IndexView.files` just returned, for a caller that needs the walk
    too (the inspector's timeline): a second walk of 20,000 files is a second of CPU."""
    index.check_enabled()
    if sync:
        index.sync()
        files = None  # the sync may have found what the given walk did not
    store = index.store
    found = list(files) if files is not None else index.files()
    stored = store.files()
    stale: list[str] = []
    skipped = [SkippedFile(p, r) for p, r in index.skipped_paths]
    model = index.model_key()
    max_bytes = int(index.config.get("memory.max_file_bytes"))
    for mf in found:
        old = stored.get(mf.path)
        try:
            # the walk's own stat, as a sync compares it: a second stat of each of 20,000
            # files is a second walk
            st = mf.stat or mf.abspath.stat()
        except OSError:
            continue
        if old is None:
            # a file a sync skips (too big, binary) is not "stale": indexing again
            # would skip it again; say why instead
            reason = _skip_reason(mf.abspath, st.st_size, max_bytes)
            if reason is not None:
                skipped.append(SkippedFile(mf.path, reason))
                continue
        if old is None or old.mtime_ns != st.st_mtime_ns or old.size != st.st_size or (
            model is not None and old.model != model
        ):
            stale.append(mf.path)
    stale += sorted(set(stored) - {f.path for f in found})
    stats = store.stats()
    provider = index.embedder
    recalled = None
    if deep:
        recalled = tuple(index.most_recalled(10)) if isinstance(store, TracksRecalls) else ()
    return MemoryStatus(
        agent=index.agent.id,
        state_key=index.agent.state_key,
        workspace=str(index.agent.root),
        store=store.name,
        location=store.location,
        files=len(found),
        indexed_files=stats.files,
        chunks=stats.chunks,
        embedded_chunks=stats.embedded_chunks,
        provider=provider.name if provider is not None else None,
        model=provider.model_id if provider is not None else None,
        dimensions=provider.dimensions if provider is not None else None,
        index_dimensions=stats.dimensions,
        mode="hybrid" if provider is not None else "keyword-only",
        notice=None if provider is not None else index.embedder_problem,
        vector_backend=stats.vector_backend,
        text_backend=stats.text_backend,
        fusion=str(index.config.get("memory.fusion")),
        stale_files=tuple(stale),
        skipped_files=tuple(skipped),
        cached_embeddings=stats.cached_embeddings,
        schema_version=stats.schema_version,
        bytes=stats.bytes,
        problems=tuple(store.check(deep=deep)),
        most_recalled=recalled,
    )
