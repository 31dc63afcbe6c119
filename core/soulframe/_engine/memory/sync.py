"""Bringing the index up to date with the memory files: discovery, the fast path on
mtime+size, hashing, chunking (the selected chunker), embedding in passages (cached by text
hash) and one transaction per file. The lock and what a sync keeps between syncs belong to
the index's :class:`~soulframe._engine.memory.syncer.Syncer`.

Embedding granularity (passages, one vector each; the chunk's vector score is its best
passage's): see :mod:`soulframe._engine.memory.passages`. Template boilerplate and routine status
lines are blanked before chunking (:mod:`soulframe._engine.memory.noise`).
"""

from __future__ import annotations

import os
import stat
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..model import ChunkInput, FileRecord, FindsFiles, MovesRecalls, RebuildsWhenCorrupt
from .files import MemoryFile, day_of, is_memory_path, real_path
from .freshness import RACY_NS
from .hashing import bytes_hash, text_hash
from .noise import without_noise
from .passages import passage_windows
from .results import MemoryWarning, SyncReport
from .textclean import BINARY, blank_nul_lines, line_list, looks_binary

if TYPE_CHECKING:
    from ..model import EmbeddingProvider
    from .indexview import IndexView

BINARY_SNIFF = 8192


#: the store's note of when the last sync that read files and wrote the index started and
#: ended (``time.time_ns()``)
READ_STARTED_KEY = "read_started_ns"

#: windows embedded per provider call (the provider batches further by embedding.batch_size)
EMBED_GROUP = 256


def named_files(index: IndexView, paths: Iterable[str]) -> list[MemoryFile] | None:
    """The memory files at ``paths`` (workspace-relative, forward slashes; a path that is
    not a memory file, or no longer exists, is left out), or ``None`` when only a walk can
    say what changed: no walk yet in this process, or one that met a link (a change reaches
    other names too), a named file that is a link or a hard link, a path under
    ``memory.extra_paths`` or the saved sessions (their own rules), a second spelling of
    ``MEMORY.md``. Privacy is the walk's (:meth:`Discovery.privacy`)."""
    if not index.syncer.plain_tree:
        return None
    discovery = index.discovery
    root = discovery.root
    out: list[MemoryFile] = []
    for rel in sorted(set(paths)):
        if not discovery.is_memory_path(rel):
            continue  # SOUL.md, a skill: not memory
        if not is_memory_path(rel) or "<" in rel or ">" in rel:
            return None
        full = root / rel
        try:
            st = full.lstat()
        except FileNotFoundError:
            continue  # gone: the sync removes its record
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or real_path(full) != full:
            return None
        if "/" not in rel and discovery.root_memory() != full:
            return None  # memory.md beside MEMORY.md: the walk says which one counts
        private = discovery.privacy(rel)
        if private is None:
            return None
        out.append(MemoryFile(rel, full, private, day_of(rel) if rel.startswith("memory/") else None, st))
    return out


def sync_files(index: IndexView, *, force: bool, progress: Callable[[int, int], None] | None,
               named: Sequence[str] | None = None) -> SyncReport:
    """Bring the index up to date: every memory file (a walk), or with ``named`` only those
    paths (what a file watcher's events or soulframe's own write name), each read and
    hashed whatever its stat says; the caller checked :func:`named_files` first."""
    started = time.perf_counter()
    started_ns = time.time_ns()
    report = SyncReport()
    store = index.store
    if isinstance(store, RebuildsWhenCorrupt) and store.recovered_from is not None:
        recovered = store.recovered_from
        report.recovered_from = str(recovered)
        report.warnings.append(
            f"the memory index was corrupted: moved to {recovered}; rebuilt from the Markdown files"
        )
        store.recovered_from = None
    provider = index.embedder
    model = index.model_key()
    report.model = model
    previous_model = store.get_meta("embedding_model")
    if model is not None and previous_model != model:
        if previous_model is not None:
            report.model_changed = (previous_model, model)
            report.warnings.append(
                f"embedding model changed from {previous_model} to {model}: re-embedding "
                "every chunk"
            )
        store.set_meta("embedding_model", model)

    from .pipeline import INDEXED_TEXT_KEY, chunk, chunker_signature, indexed_text_signature

    cutter = chunker_signature(index.agent)
    synced_before = store.get_meta("chunker") is not None
    if store.get_meta("chunker") != cutter:
        # another chunker (or chunk size) cut the stored chunks: cut every file again
        force = force or synced_before
        store.set_meta("chunker", cutter)
    made = indexed_text_signature()
    if store.get_meta(INDEXED_TEXT_KEY) != made:
        if synced_before:
            # an older release made the stored text (unmasked secrets, other normalisation):
            # cut every file again; unchanged chunks are embedded from the cache. Noted only
            # once every file is done, so an interrupted sync does it again.
            force = True
        else:  # a new index: every chunk is made this way, a killed first sync's too
            store.set_meta(INDEXED_TEXT_KEY, made)
    if force:
        named = None  # every file is cut again: a walk, not the files an event named
    if named is None:
        found = index.files()
        for path, why in index.skipped_paths:  # links astray, loops, names that are not UTF-8
            report.skipped.append((path, why))
            if index.syncer.first_path_warning(path, why):  # once per process, not every search
                report.warnings.append(f"{path}: skipped: {why}")
        for path, why in index.narrowed_paths:  # hard links kept private
            if index.syncer.first_path_warning(path, why):
                report.warnings.append(f"{path}: {why}")
    else:
        found = named_files(index, named) or []
    report.files = len(found)
    if named is not None and isinstance(store, FindsFiles):
        stored = store.files_named(sorted(set(named)))
    else:
        stored = store.files()
    # Timestamps are coarse: an edit in the clock tick of the last read leaves mtime and
    # size as they were (same-size edits within one tick), so the fast path does not trust
    # an mtime from the time of the last sync that wrote the index (two seconds either
    # side): it is hashed again. One dated later than that sync is clock skew, not a read
    # racing a write.
    racy = _racy_window(store.get_meta(READ_STARTED_KEY))
    read_any = touched = False
    #: content hash -> paths new to the index in this sync (a renamed file is one of them)
    appeared: dict[str, list[str]] = {}
    max_bytes = int(index.config.get("memory.max_file_bytes"))
    pending: list[tuple[FileRecord, list[Any], bool]] = []  # (record, chunks, is_new)
    pending_windows = 0
    total = len(found)

    def flush_pending() -> None:
        nonlocal pending, pending_windows
        if not pending:
            return
        embed_and_write(index, pending, provider, model, report)
        pending = []
        pending_windows = 0

    for i, mf in enumerate(found):
        st = mf.stat  # discovery's: one stat per file for a sync that finds nothing changed
        if st is None:
            try:
                st = mf.abspath.stat()
            except OSError:
                continue  # vanished between discovery and now; next sync removes it
        old = stored.get(mf.path)
        expected_model = model if provider is not None else (old.model if old else None)
        same_stat = old is not None and old.mtime_ns == st.st_mtime_ns and old.size == st.st_size
        recheck = False
        if (
            not force and named is None and old is not None and same_stat and old.private == mf.private
            and old.model == expected_model
        ):
            # a named path was named because it changed: its stat is not trusted (a
            # same-size rewrite in one clock tick keeps both), it is hashed
            # chmod leaves the mtime alone: a file its owner may no longer read is read (and
            # fails) rather than trusted, so its old text does not stay searchable
            if not (racy[0] <= old.mtime_ns <= racy[1]) and st.st_mode & stat.S_IRUSR:
                report.unchanged += 1
                continue
            recheck = True  # the hash says whether it changed
        if progress is not None and not recheck:  # a no-change sync shows nothing
            progress(i, total)
        if st.st_size > max_bytes:
            _skip(index, report, mf.path, st, f"larger than memory.max_file_bytes ({st.st_size:,} > {max_bytes:,} bytes)")
            continue
        try:
            data = _read_stable(mf.abspath)
        except FileNotFoundError:
            continue  # vanished between discovery and now; next sync removes it
        except OSError as exc:  # made unreadable: its old chunks go, and the user is told
            _skip(index, report, mf.path, st, unreadable(exc))
            continue
        read_any = True
        if b"\x00" in data:
            if looks_binary(data):
                _skip(index, report, mf.path, st, BINARY)
                continue
            data, bad = blank_nul_lines(data)
            _warn(index, report, mf.path, st, f"{mf.path}: {line_list(bad)} skipped: NUL bytes (the rest "
                  "of the file is indexed; remove the NUL bytes to index the line)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            _warn(index, report, mf.path, st,
                       f"{mf.path}: invalid UTF-8 at byte {exc.start}; indexed with the bad "
                       "bytes replaced (U+FFFD) — fix the file's encoding")
        text = text.lstrip("\ufeff")
        digest = bytes_hash(data)
        record = FileRecord(
            path=mf.path, hash=digest, mtime_ns=st.st_mtime_ns, size=st.st_size,
            private=mf.private, day=mf.day, model=expected_model,
        )
        if (
            not force and old is not None and old.hash == digest and old.private == mf.private
            and old.model == expected_model
        ):
            if not same_stat:
                store.touch_file(record)
                touched = True
            report.unchanged += 1
            continue
        # a chunk of headings alone (a template's empty sections) holds no memory
        chunks = [c for c in chunk(index.agent, without_noise(text), mf.path)
                  if any(ln.strip() and not ln.lstrip().startswith("#") for ln in c.text.split("\n"))]
        if old is None:
            appeared.setdefault(digest, []).append(mf.path)
        pending.append((record, chunks, old is None))
        pending_windows += len(chunks)
        if pending_windows >= EMBED_GROUP:
            flush_pending()
    flush_pending()

    gone = sorted((set(stored) if named is None else set(named) & set(stored)) - {f.path for f in found})
    vanished = list(gone)
    # files skipped this time (too big, binary) must not keep stale chunks either
    gone += [p for p, _ in report.skipped if p in stored and p not in gone]
    if gone:
        store.remove_files(gone)
        report.removed = gone
        # a file gone and one new with the same bytes: renamed (`memory prune`, an `mv`);
        # its entries' recall counts go along, so consolidation still sees them
        moves = [(p, appeared[stored[p].hash].pop()) for p in vanished if appeared.get(stored[p].hash)]
        if moves and isinstance(store, MovesRecalls):
            store.move_recalls(moves)
    if store.get_meta(INDEXED_TEXT_KEY) != made:
        store.set_meta(INDEXED_TEXT_KEY, made)
    if progress is not None:
        progress(total, total)
    if read_any and (touched or report.changed_anything):
        # only a sync that writes anyway notes it: a search that found nothing changed must
        # not queue behind another process's write lock for it (the files it re-read are
        # simply re-read next time too)
        # a sync of a few paths widens the note instead of replacing it: the files the
        # last walk read in its clock tick stay untrusted until the next walk
        since = started_ns if named is None else _noted_start(store.get_meta(READ_STARTED_KEY), started_ns)
        store.set_meta(READ_STARTED_KEY, f"{since} {time.time_ns()}")
    if named is None:
        index.syncer.synced(found, started_ns)
    report.seconds = time.perf_counter() - started
    for w in report.warnings:
        warnings.warn(w, MemoryWarning, stacklevel=3)
    return report


def _noted_start(noted: str | None, started_ns: int) -> int:
    """The start in a :data:`READ_STARTED_KEY` note, or ``started_ns`` when there is none."""
    try:
        return min(int((noted or "").split()[0]), started_ns)
    except (IndexError, ValueError):
        return started_ns


def _racy_window(noted: str | None) -> tuple[int, int]:
    """The mtimes (ns) the fast path does not trust: those within two seconds of the last
    sync that read files and wrote the index (``"<started> <ended>"``,
    :data:`READ_STARTED_KEY`); nothing for an index that has no such note (made before it
    was kept)."""
    parts = (noted or "").split()
    try:
        started = int(parts[0])
        ended = int(parts[1]) if len(parts) > 1 else started
    except (IndexError, ValueError):
        return (1, 0)  # an empty window
    return (started - RACY_NS, ended + RACY_NS)


def _skip(index: IndexView, report: SyncReport, path: str, st: os.stat_result, reason: str) -> None:
    report.skipped.append((path, reason))
    _warn(index, report, path, st, f"{path}: skipped: {reason}")


def _warn(index: IndexView, report: SyncReport, path: str, st: os.stat_result, message: str) -> None:
    if index.syncer.first_file_warning(path, st.st_mtime_ns, st.st_size):
        report.warnings.append(message)


def embed_and_write(index: IndexView, pending: list[tuple[FileRecord, list[Any], bool]],
    provider: EmbeddingProvider | None,
    model: str | None,
    report: SyncReport,
) -> None:
    """Embed the chunks of ``pending`` documents and write each document in one
    transaction (``Store.replace_file``): the path every indexer shares — the agent's
    files here, a user's memory documents in :class:`~soulframe._engine.memory.users.UserMemory`.

    ``pending`` holds ``(record, chunks, is_new)`` per document, ``chunks`` from the
    selected chunker (:func:`soulframe._engine.memory.pipeline.chunk`). Vectors come from the embedding cache where
    the text was embedded before; ``report`` counts what was embedded, cached, added and
    changed. An embedding failure indexes the documents keyword-only (``model=None``, so
    the next sync retries) and is added to ``report.warnings``.
    """
    from ..embedding import EmbeddingCache, EmbeddingError

    vectors_for: list[list[tuple[Any, ...]]] = [[() for _ in chunks] for _, chunks, _ in pending]
    if provider is not None:
        windows: list[str] = []
        owners: list[tuple[int, int]] = []
        for fi, (_rec, chunks, _new) in enumerate(pending):
            for ci, ch in enumerate(chunks):
                for w in passage_windows(index.config, ch.text, provider):
                    windows.append(w)
                    owners.append((fi, ci))
        try:
            cache = EmbeddingCache(index.store)
            mat = cache.embed_documents(provider, windows)
            report.embedded += cache.stats.misses
            report.cached += cache.stats.hits
            grouped: dict[tuple[int, int], list[Any]] = {}
            for row, owner in enumerate(owners):
                grouped.setdefault(owner, []).append(mat[row])
            for (fi, ci), vecs in grouped.items():
                vectors_for[fi][ci] = tuple(vecs)
        except EmbeddingError as exc:
            report.warnings.append(
                f"embedding failed ({exc}); {len(pending)} file(s) indexed keyword-only "
                "until the next sync"
            )
            pending = [(attrs.evolve(r, model=None), c, n) for r, c, n in pending]
    for fi, (record, chunks, is_new) in enumerate(pending):
        inputs = [
            ChunkInput(ch.start_line, ch.end_line, ch.text, text_hash(ch.text), vectors_for[fi][ci])
            for ci, ch in enumerate(chunks)
        ]
        index.store.replace_file(record, inputs)
        (report.added if is_new else report.changed).append(record.path)
        report.chunks += len(inputs)


def unreadable(exc: OSError) -> str:
    """Why a file that cannot be read is skipped."""
    return f"cannot be read ({exc.strerror or exc}); check its permissions"


def _skip_reason(path: Path, size: int, max_bytes: int) -> str | None:
    """Why a sync skips this file (the same tests as :meth:`MemoryIndex._sync`), or None."""
    if size > max_bytes:
        return f"larger than memory.max_file_bytes ({size:,} > {max_bytes:,} bytes)"
    try:
        with open(path, "rb") as fh:
            head = fh.read(BINARY_SNIFF)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return unreadable(exc)
    return BINARY if b"\x00" in head and looks_binary(head) else None


def _read_stable(path: Path, attempts: int = 3) -> bytes:
    """Read a file whose size and mtime did not change while it was read (a writer
    mid-append would otherwise leave half a line in the index until the next change).
    An ``OSError`` (the file gone, or unreadable) is the caller's to tell."""
    for _ in range(attempts):
        before = path.stat()
        data = path.read_bytes()
        after = path.stat()
        if (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size):
            return data
        time.sleep(0.01)
    return data
