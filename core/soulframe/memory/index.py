"""The memory index of one agent: sync the Markdown memory files into the store, search
them (keyword + vector, fused), read them, and append to them.

>>> agent.memory.append_daily("Prefers dark-mode screenshots")    # doctest: +SKIP
>>> agent.memory.search("screenshot appearance")[0].citation      # doctest: +SKIP
'memory/2026-11-21.md#L3-L3'

Pipeline (seed 000 §14-15): discover files -> fast path on mtime+size -> SHA-256 (first 16
bytes) -> unchanged: skip -> chunk (<= memory.chunk_max_chars) -> embed through
``agent.embedder``, batched, cached by (model, text hash) in the store -> replace the
file's chunks in ONE transaction. Deleted files' chunks are removed.

Embedding granularity: a chunk is embedded as several passages (its lines, headings left
out, grouped up to ``memory.embed_window_chars``, 160), one vector each; the chunk's vector
score is its best passage's. A passage longer than the model's window
(``provider.max_tokens`` word pieces as ``provider.count_tokens`` counts them; 254 for
MiniLM) is split further at line, word, then character boundaries, so the model always sees
every passage whole: nothing is ever silently truncated. (Measured: best-passage scoring
raised the vector channel's recall@6 from 0.62 to 0.75 on tests/data/memory_eval — see
:func:`passages` and docs/memory.md.)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import os
import re
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..model import ChunkInput, FileRecord, SearchHit, Session, SoulframeError, StoredChunk
from .chunking import bytes_hash, text_hash
from .files import Discovery, MemoryFile
from .fusion import Fused, cosine_lookup, fuse, mmr, temporal_decay
from .querying import best_lines, query_terms, snippet
from .results import MemoryDisabledError, MemoryExcerpt, MemoryWarning, SearchResults, SyncReport

if TYPE_CHECKING:
    from ..agent import Agent
    from ..model import EmbeddingProvider, Store

log = logging.getLogger("soulframe.memory")

#: windows embedded per provider call (the provider batches further by embedding.batch_size)
EMBED_GROUP = 256
#: candidates each channel contributes before fusion (per requested result)
POOL_FACTOR = 8
POOL_MIN = 40
BINARY_SNIFF = 8192


_CITATION = re.compile(r"^(?P<path>.+?)#L(?P<a>\d+)(?:-L?(?P<b>\d+))?$")


# --------------------------------------------------------------------------- the index


class MemoryIndex:
    """The memory of one :class:`~soulframe.Agent` (``agent.memory``)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.config = agent.config
        self._lock = threading.RLock()
        self._warned: set[tuple[str, int, int]] = set()
        self._embedder_checked = False
        self._embedder: EmbeddingProvider | None = None
        self._embedder_problem: str | None = None
        self._last_sync: SyncReport | None = None
        self.progress: Callable[[int, int], None] | None = None
        #: query text -> vector, so repeated searches (eval, a chatty model) embed once
        self._query_vectors: dict[tuple[str | None, str], Any] = {}
        self._sync_depth = 0
        self._executor: Any = None

    # ------------------------------------------------------------------ parts

    def _check_enabled(self) -> None:
        if not self.config.get("memory.enabled"):
            raise MemoryDisabledError(
                "memory is disabled (memory.enabled = false); enable it in soulframe.toml"
            )

    @property
    def store(self) -> Store:
        return self.agent.store

    @property
    def discovery(self) -> Discovery:
        return Discovery(self.agent.workspace, list(self.config.get("memory.extra_paths") or ()))

    @property
    def embedder(self) -> EmbeddingProvider | None:
        """The embedding provider, or ``None`` (then :attr:`embedder_problem` says why)."""
        if not self._embedder_checked:
            from ..embedding import NO_PROVIDER_MESSAGE

            try:
                self._embedder = self.agent.embedder
                if self._embedder is None:
                    off = str(self.config.get("embedding.provider")) == "none"
                    self._embedder_problem = (
                        "semantic search is off (embedding.provider = none): keyword-only"
                        if off else NO_PROVIDER_MESSAGE
                    )
            except SoulframeError as exc:
                self._embedder = None
                self._embedder_problem = f"{exc} — memory search runs keyword-only"
            self._embedder_checked = True
        return self._embedder

    @property
    def embedder_problem(self) -> str | None:
        _ = self.embedder
        return self._embedder_problem

    def model_key(self) -> str | None:
        p = self.embedder
        if p is None:
            return None
        return f"{p.name}:{p.model_id}:{p.dimensions}"

    def files(self) -> list[MemoryFile]:
        """The memory files discovered in the workspace now."""
        return self.discovery.files()

    # ------------------------------------------------------------------ sync

    def sync(
        self,
        *,
        force: bool = False,
        progress: Callable[[int, int], None] | None = None,
        blocking: bool = True,
    ) -> SyncReport:
        """Bring the index up to date with the files. Cheap when nothing changed: a stat
        per file and one query. ``force`` re-reads and re-chunks every file (vectors still
        come from the embedding cache).

        Syncs of one agent are serialised across processes by a lock file
        (``<state_dir>/memory/<agent>.sync.lock``), so two indexers never write an older
        reading of a file over a newer one. With ``blocking=False`` (what a search does)
        a sync that would wait is skipped: the process holding the lock is indexing.
        """
        self._check_enabled()
        with self._lock, self._sync_lock(blocking=blocking) as locked:
            if not locked:
                # another process is indexing this agent right now: it will bring the index
                # up to date; a search must not wait for it
                return self._last_sync or SyncReport()
            report = self._sync(force=force, progress=progress or self.progress)
        self._last_sync = report
        if report.changed_anything or report.recovered_from:
            self.agent.pm.hook.memory_indexed(agent=self.agent, report=report)
        return report

    @contextlib.contextmanager
    def _sync_lock(self, *, blocking: bool) -> Any:
        if self._sync_depth:
            self._sync_depth += 1
            try:
                yield True
            finally:
                self._sync_depth -= 1
            return
        from ..workspace import ensure_private_dir

        lock_dir = ensure_private_dir(self.agent.state_dir / "memory")
        fd = os.open(lock_dir / f"{self.agent.state_key}.sync.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if not _try_lock(fd, blocking=blocking):
                yield False
                return
            self._sync_depth = 1
            try:
                yield True
            finally:
                self._sync_depth = 0
                _unlock(fd)
        finally:
            os.close(fd)

    def _sync(self, *, force: bool, progress: Callable[[int, int], None] | None) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport()
        store = self.store
        recovered = getattr(store, "recovered_from", None)
        if recovered is not None:
            report.recovered_from = str(recovered)
            report.warnings.append(
                f"the memory index was corrupted: moved to {recovered}; rebuilt from the Markdown files"
            )
            with contextlib.suppress(AttributeError):
                store.recovered_from = None  # type: ignore[attr-defined]
        provider = self.embedder
        model = self.model_key()
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

        from .pipeline import chunk, chunker

        cutter = f"{chunker(self.agent).name}:{int(self.config.get('memory.chunk_max_chars'))}"
        if store.get_meta("chunker") != cutter:
            # another chunker (or chunk size) cut the stored chunks: cut every file again
            force = force or store.get_meta("chunker") is not None
            store.set_meta("chunker", cutter)
        found = self.files()
        report.files = len(found)
        stored = store.files()
        max_bytes = int(self.config.get("memory.max_file_bytes"))
        pending: list[tuple[FileRecord, list[Any], bool]] = []  # (record, chunks, is_new)
        pending_windows = 0
        total = len(found)

        def flush_pending() -> None:
            nonlocal pending, pending_windows
            if not pending:
                return
            self.embed_and_write(pending, provider, model, report)
            pending = []
            pending_windows = 0

        for i, mf in enumerate(found):
            if progress is not None:
                progress(i, total)
            try:
                st = mf.abspath.stat()
            except OSError:
                continue  # vanished between discovery and now; next sync removes it
            old = stored.get(mf.path)
            expected_model = model if provider is not None else (old.model if old else None)
            if (
                not force and old is not None and old.mtime_ns == st.st_mtime_ns
                and old.size == st.st_size and old.private == mf.private
                and old.model == expected_model
            ):
                report.unchanged += 1
                continue
            if st.st_size > max_bytes:
                self._skip(report, mf.path, st, f"larger than memory.max_file_bytes ({st.st_size:,} > {max_bytes:,} bytes)")
                continue
            data = _read_stable(mf.abspath)
            if data is None:
                continue
            if b"\x00" in data[:BINARY_SNIFF]:
                self._skip(report, mf.path, st, "binary file (contains NUL bytes)")
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                text = data.decode("utf-8", errors="replace")
                self._warn(report, mf.path, st,
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
                store.touch_file(record)
                report.unchanged += 1
                continue
            chunks = chunk(self.agent, text, mf.path)
            pending.append((record, chunks, old is None))
            pending_windows += len(chunks)
            if pending_windows >= EMBED_GROUP:
                flush_pending()
        flush_pending()

        gone = sorted(set(stored) - {f.path for f in found})
        # files skipped this time (too big, binary) must not keep stale chunks either
        gone += [p for p, _ in report.skipped if p in stored and p not in gone]
        if gone:
            store.remove_files(gone)
            report.removed = gone
        if progress is not None:
            progress(total, total)
        report.seconds = time.perf_counter() - started
        for w in report.warnings:
            warnings.warn(w, MemoryWarning, stacklevel=3)
        return report

    def _skip(self, report: SyncReport, path: str, st: os.stat_result, reason: str) -> None:
        report.skipped.append((path, reason))
        self._warn(report, path, st, f"{path}: skipped: {reason}")

    def _warn(self, report: SyncReport, path: str, st: os.stat_result, message: str) -> None:
        key = (path, st.st_mtime_ns, st.st_size)
        if key in self._warned:
            return
        self._warned.add(key)
        report.warnings.append(message)

    def _windows(self, text: str, provider: EmbeddingProvider) -> list[str]:
        """The passages of a chunk that are embedded (see the module docstring)."""
        target = int(self.config.get("memory.embed_window_chars", 160))
        limit = getattr(provider, "max_tokens", None)
        count = getattr(provider, "count_tokens", None)
        out: list[str] = []
        for passage in passages(text, target):
            if not isinstance(limit, int) or limit <= 0 or len(passage) <= limit:
                # a word piece is at least one character: a text this short always fits
                out.append(passage)
            elif callable(count):
                out.extend(_split_to(passage, count, limit))
            else:  # no tokenizer to ask: assume ~3 characters per token, conservatively
                out.extend(_split_to(passage, lambda s: len(s) // 3 + 1, limit))
        return out

    def embed_and_write(
        self,
        pending: list[tuple[FileRecord, list[Any], bool]],
        provider: EmbeddingProvider | None,
        model: str | None,
        report: SyncReport,
    ) -> None:
        """Embed the chunks of ``pending`` documents and write each document in one
        transaction (``Store.replace_file``): the path every indexer shares — the agent's
        files here, a user's memory documents in :class:`~soulframe.memory.users.UserMemory`.

        ``pending`` holds ``(record, chunks, is_new)`` per document, ``chunks`` from the
        selected chunker (:func:`soulframe.memory.pipeline.chunk`). Vectors come from the embedding cache where
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
                    for w in self._windows(ch.text, provider):
                        windows.append(w)
                        owners.append((fi, ci))
            try:
                cache = EmbeddingCache(self.store)
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
            self.store.replace_file(record, inputs)
            (report.added if is_new else report.changed).append(record.path)
            report.chunks += len(inputs)

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Drop the index and build it again from the files (embeddings come from the cache)."""
        self._check_enabled()
        with self._lock, self._sync_lock(blocking=True):
            self.store.clear()
            return self.sync(force=True, progress=progress)

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        k: int | None = None,
        session: Session | None = None,
        *,
        min_score: float | None = None,
        channels: str = "hybrid",
        sync: bool = True,
    ) -> SearchResults:
        """Search memory. ``session`` decides visibility: only a main, private session (or
        ``None``, the owner calling the API) sees MEMORY.md and other private files.

        :param k: results wanted (default ``memory.max_results``).
        :param min_score: drop hits below this fused score (default ``memory.min_score``).
        :param channels: ``"hybrid"`` (default), ``"keyword"`` or ``"vector"``.
        """
        self._check_enabled()
        if channels not in ("hybrid", "keyword", "vector"):
            raise ValueError(f"channels = {channels!r} — expected hybrid, keyword or vector")
        k = int(self.config.get("memory.max_results")) if k is None else int(k)
        if k < 1:
            raise SoulframeError(f"memory search: k = {k}: ask for at least one result")
        min_score = float(self.config.get("memory.min_score")) if min_score is None else float(min_score)
        query = (query or "").strip()
        if not query:
            raise SoulframeError("memory search: the query is empty")
        private = session is None or session.is_private
        scope = session.user_id if session is not None else None
        if sync:
            self.sync(blocking=False)
            if scope:
                self._sync_user(scope)
        terms = query_terms(query)
        pool = max(k * POOL_FACTOR, POOL_MIN)
        store = self.store

        notice: str | None = None
        text_hits: list[StoredChunk] = []
        vector_hits: list[StoredChunk] = []
        qv: Any = None
        provider = self.embedder if channels in ("hybrid", "vector") else None
        text_job = None
        if channels in ("hybrid", "keyword"):
            if provider is not None:
                # the channels are independent: SQLite and numpy both release the GIL, so
                # the keyword query runs while the vectors are scanned
                text_job = self._pool().submit(
                    store.search_text, terms, pool, include_private=private, scope=scope)
            else:
                text_hits = store.search_text(terms, pool, include_private=private, scope=scope)
        if channels in ("hybrid", "vector"):
            if provider is None:
                notice = self.embedder_problem
            else:
                from ..embedding import EmbeddingError

                try:
                    qv = self._embed_query(provider, query)
                    vector_hits = store.search_vector(qv, pool, include_private=private, scope=scope)
                except EmbeddingError as exc:
                    notice = f"the vector channel failed ({exc}); keyword-only for this search"
                finally:
                    if text_job is not None:
                        text_hits = text_job.result()
        if channels == "hybrid":
            mode = "hybrid" if notice is None else "keyword-only"
        else:
            mode = f"{channels}-only"
        if notice and str(self.config.get("embedding.provider")) != "none":
            # switched off on purpose: said in the result and in status, not warned each time
            warnings.warn(notice, MemoryWarning, stacklevel=2)

        fused = fuse(
            text_hits, vector_hits, terms,
            text_weight=float(self.config.get("memory.text_weight")),
            vector_weight=float(self.config.get("memory.vector_weight")),
            method=str(self.config.get("memory.fusion", "weighted")),
        )
        from .pipeline import rerank

        reranked = rerank(self.agent, query, fused)
        if reranked.notice:
            notice = f"{notice}; {reranked.notice}" if notice else reranked.notice
        fused = self._adjust(reranked.fused, k, session)
        hits = [self._hit(f, terms, qv) for f in [f for f in fused if f.score >= min_score][:k]]
        return SearchResults(hits, query=query, mode=mode, notice=notice, terms=terms)

    def _sync_user(self, user_id: str) -> None:
        """A user's memory documents live in the store, not in the workspace, so the file
        sync above never sees them: a search for a user indexes that user's documents that
        changed (or all of them after ``memory rebuild`` cleared the index, or when another
        app server wrote them). One query when nothing changed."""
        from .users import UserMemory

        try:
            UserMemory(self.agent, user_id).sync()
        except SoulframeError as exc:  # a store without per-user files: nothing to index
            log.debug("no per-user memory for %s: %s", user_id, exc)

    def _pool(self) -> Any:
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="soulframe-memory")
        return self._executor

    def _embed_query(self, provider: EmbeddingProvider, query: str) -> Any:
        key = (self.model_key(), query)
        qv = self._query_vectors.get(key)
        if qv is None:
            qv = provider.embed_query(query)
            if len(self._query_vectors) >= 512:
                self._query_vectors.pop(next(iter(self._query_vectors)))
            self._query_vectors[key] = qv
        return qv

    def _adjust(self, fused: list[Fused], k: int, session: Session | None) -> list[Fused]:
        """The user's own copies boosted over the agent's, then (when configured) temporal
        decay and MMR diversity."""
        boost = float(self.config.get("memory.user_scope_boost"))
        if session is not None and session.user_id and boost != 1.0:
            # a user's own copy of a file wins over the agent's, boosted (seed 000 §15)
            for f in fused:
                if f.chunk.scope:
                    f.score *= boost
            mine = {(f.chunk.path, f.chunk.start_line) for f in fused if f.chunk.scope}
            fused = [f for f in fused if f.chunk.scope or (f.chunk.path, f.chunk.start_line) not in mine]
            fused.sort(key=lambda f: -f.score)
        if self.config.get("memory.temporal_decay"):
            fused = temporal_decay(fused, self._today(), float(self.config.get("memory.half_life_days")))
        if self.config.get("memory.mmr") and len(fused) > 1:
            head = fused[: max(k * 4, 20)]
            vectors = {}
            with contextlib.suppress(Exception):
                vectors = self.store.chunk_vectors([f.chunk.id for f in head])
            fused = mmr(head, len(head), float(self.config.get("memory.mmr_lambda")), cosine_lookup(vectors))
        return fused

    def _hit(self, f: Fused, terms: list[str], qv: Any = None) -> SearchHit:
        ch = f.chunk
        focus = None
        if qv is not None and f.vector_score is not None and best_lines(ch.text, terms)[0] < 0:
            # found by meaning alone: show the passage that matched, not the chunk's start
            focus = self._closest_passage_line(ch.text, qv)
        text, _offset = snippet(ch.text, terms, focus=focus)
        return SearchHit(
            path=ch.path, start_line=ch.start_line, end_line=ch.end_line,
            score=round(f.score, 6), snippet=text,
            text_score=f.text_score, vector_score=f.vector_score,
            scope="user" if ch.scope else "agent", rerank_score=f.rerank_score,
        )

    def _closest_passage_line(self, text: str, qv: Any) -> int | None:
        """The 0-based line of ``text`` where its passage closest to the query vector
        starts. The passages' vectors come from the embedding cache (by model and text
        hash, as indexing stored them): nothing is embedded again."""
        provider = self.embedder
        if provider is None:
            return None
        windows = self._windows(text, provider)
        if len(windows) < 2:
            return None
        import numpy as np

        from ..embedding import text_hash as cache_key

        try:
            found = self.store.get_many(provider.model_id, [cache_key(w) for w in windows])
        except Exception:  # a store without the cache: the default snippet will do
            return None
        q = np.asarray(qv, dtype=np.float32)
        best, best_sim = None, -2.0
        for w in windows:
            v = found.get(cache_key(w))
            if v is not None:
                sim = float(np.asarray(v, dtype=np.float32) @ q)
                if sim > best_sim:
                    best, best_sim = w, sim
        if best is None:
            return None
        head = best.split("\n", 1)[0].strip()
        return next((i for i, ln in enumerate(text.split("\n")) if head and head in ln), None)

    # ------------------------------------------------------------------ get

    def get(
        self,
        path: str,
        from_line: int | None = None,
        lines: int | None = None,
        session: Session | None = None,
    ) -> MemoryExcerpt:
        """Read ``lines`` lines of a memory file from ``from_line`` (1-based). ``path`` may
        be a citation (``memory/2026-08-01.md#L3-L7``). Refuses any path outside the memory
        files, and private files in a session that is not private."""
        self._check_enabled()
        path = (path or "").strip()
        m = _CITATION.match(path)
        if m:
            path = m.group("path")
            a = int(m.group("a"))
            b = int(m.group("b") or a)
            if b < a:
                raise SoulframeError(f"{path}: the line range ends before it starts (L{a}-L{b})")
            from_line = from_line or a
            lines = lines or max(1, b - a + 1)
        if from_line is not None and int(from_line) < 1:
            raise SoulframeError(f"{path}: from line {from_line}: lines are numbered from 1")
        if lines is not None and int(lines) < 1:
            raise SoulframeError(f"{path}: lines = {lines}: read at least one line")
        if path.startswith("./"):
            path = path[2:]
        ws = self.agent.workspace
        full = ws.resolve(path)  # refuses '..', absolute paths, symlinks leaving the workspace
        rel = full.relative_to(ws.root).as_posix()
        known = {f.path: f for f in self.files()}
        mf = known.get(rel)
        if mf is None:
            raise SoulframeError(
                f"{path}: not a memory file (memory_get reads MEMORY.md, memory/**/*.md and "
                "memory.extra_paths)"
            )
        if mf.private and session is not None and not session.is_private:
            raise SoulframeError(
                f"{path}: private memory is only available in a main, private session "
                f"(this is a {session.kind} session)"
            )
        text = mf.abspath.read_bytes().decode("utf-8", errors="replace")
        all_lines = text.splitlines()
        start = int(from_line or 1)
        if start > len(all_lines) and all_lines:
            raise SoulframeError(
                f"{rel} has {len(all_lines)} lines; line {start} is past the end"
            )
        count = len(all_lines) - start + 1 if lines is None else max(0, int(lines))
        end = min(len(all_lines), start + count - 1)
        body = "\n".join(all_lines[start - 1 : end]) if end >= start else ""
        return MemoryExcerpt(rel, start, max(end, start - 1), body, len(all_lines))

    # ------------------------------------------------------------------ writing

    def _today(self) -> _dt.date:
        return self._now().date()

    def _now(self) -> _dt.datetime:
        tz_name = self.agent.spec.timezone or self.config.get("timezone")
        if tz_name:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                return _dt.datetime.now(ZoneInfo(str(tz_name)))
            except ZoneInfoNotFoundError as exc:
                raise SoulframeError(f"timezone = {tz_name!r}: unknown IANA time zone") from exc
        return _dt.datetime.now().astimezone()

    def append_daily(self, text: str, *, when: _dt.datetime | None = None) -> Path:
        """Append ``- text`` to today's log ``memory/YYYY-MM-DD.md`` (agent time zone),
        creating it with a ``# YYYY-MM-DD`` heading. Atomic against concurrent writers:
        lock, append, fsync."""
        self._check_enabled()
        entry = _entry(text)
        day = (when or self._now()).date().isoformat()
        path = self.agent.workspace.resolve(f"memory/{day}.md")
        _append_locked(path, entry, heading=f"# {day}\n\n")
        return path

    def remember(self, text: str, *, curated: bool = False) -> Path:
        """Append to today's log, or with ``curated`` to MEMORY.md (``- text (added
        YYYY-MM-DD)``), the curated long-term memory (seed 003 §5.2), in its ``## Notes``
        section (:mod:`soulframe.memory.curated`)."""
        if not curated:
            return self.append_daily(text)
        self._check_enabled()
        entry = _entry(text)
        day = self._today().isoformat()
        if not entry.rstrip().endswith(")"):
            entry = entry.rstrip("\n") + f" (added {day})\n"
        ws = self.agent.workspace
        existing = self.discovery.root_memory()
        path = existing if existing is not None else ws.resolve("MEMORY.md")
        # under "## Notes", not under whatever heading is last (see memory_curated)
        from .curated import file_note_locked

        file_note_locked(path, entry, heading="# MEMORY.md\n\n")
        return path

    # ------------------------------------------------------------------ status

    def status(self, *, deep: bool = False, sync: bool = False) -> dict[str, Any]:
        """Files, chunks, provider, model, dimensions, vector backend, stale files and health."""
        self._check_enabled()
        if sync:
            self.sync()
        store = self.store
        found = self.files()
        stored = store.files()
        stale: list[str] = []
        skipped: list[dict[str, str]] = []
        model = self.model_key()
        max_bytes = int(self.config.get("memory.max_file_bytes"))
        for mf in found:
            old = stored.get(mf.path)
            try:
                st = mf.abspath.stat()
            except OSError:
                continue
            if old is None:
                # a file a sync skips (too big, binary) is not "stale": indexing again
                # would skip it again; say why instead
                reason = _skip_reason(mf.abspath, st.st_size, max_bytes)
                if reason is not None:
                    skipped.append({"path": mf.path, "reason": reason})
                    continue
            if old is None or old.mtime_ns != st.st_mtime_ns or old.size != st.st_size or (
                model is not None and old.model != model
            ):
                stale.append(mf.path)
        stale += sorted(set(stored) - {f.path for f in found})
        stats = store.stats()
        provider = self.embedder
        problems = store.check(deep=deep)
        out: dict[str, Any] = {
            "agent": self.agent.id,
            "workspace": str(self.agent.root),
            "store": getattr(store, "name", "?"),
            "location": getattr(store, "location", None),
            "files": len(found),
            "indexed_files": stats.get("files"),
            "chunks": stats.get("chunks"),
            "embedded_chunks": stats.get("embedded_chunks"),
            "provider": provider.name if provider is not None else None,
            "model": provider.model_id if provider is not None else None,
            "dimensions": provider.dimensions if provider is not None else None,
            "index_dimensions": stats.get("dimensions"),
            "mode": "hybrid" if provider is not None else "keyword-only",
            "notice": None if provider is not None else self.embedder_problem,
            "vector_backend": stats.get("vector_backend"),
            "text_backend": stats.get("text_backend"),
            "fusion": str(self.config.get("memory.fusion", "weighted")),
            "stale_files": stale,
            "skipped_files": skipped,
            "cached_embeddings": stats.get("cached_embeddings"),
            "schema_version": stats.get("schema_version"),
            "bytes": stats.get("bytes"),
            "health": "ok" if not problems else "problems",
            "problems": problems,
        }
        return out


# --------------------------------------------------------------------------- helpers


def passages(text: str, target_chars: int) -> list[str]:
    """A chunk cut into the passages its vectors are computed from: consecutive lines,
    Markdown headings left out, grouped up to ``target_chars`` (a line is never cut here).

    Measured on tests/data/memory_eval with MiniLM (vector channel alone, recall@6): the
    whole 1,000-char chunk 0.62; single lines 0.76; lines grouped to 160 chars 0.75 with a
    better MRR and ~20 % fewer vectors; 240 chars 0.71; 400 chars 0.71. A long chunk's
    mean meaning blurs the one fact a question is about; a passage keeps it sharp.
    """
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    body = [ln for ln in lines if not ln.startswith("#")] or lines
    groups: list[str] = []
    cur = ""
    for ln in body:
        if cur and len(cur) + 1 + len(ln) > target_chars:
            groups.append(cur)
            cur = ln
        else:
            cur = f"{cur}\n{ln}" if cur else ln
    if cur:
        groups.append(cur)
    return groups or [text]


def _split_to(
    text: str, count: Callable[[str], int], limit: int, seps: tuple[str, ...] = ("\n", " ")
) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` tokens: greedily at line breaks,
    a line that alone is too long at spaces, a word that alone is too long (a URL, base64)
    by characters."""
    if count(text) <= limit:
        return [text]
    if not seps:
        out: list[str] = []
        rest = text
        while rest:
            lo, hi = 1, len(rest)
            while lo < hi:  # the longest prefix that fits
                mid = (lo + hi + 1) // 2
                if count(rest[:mid]) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
            out.append(rest[:lo])
            rest = rest[lo:]
        return out
    sep = seps[0]
    pieces: list[str] = []
    cur: str | None = None
    for part in text.split(sep):
        candidate = part if cur is None else cur + sep + part
        if count(candidate) <= limit:
            cur = candidate
            continue
        if cur is not None:
            pieces.append(cur)
            cur = None
        if count(part) <= limit:
            cur = part
        else:
            pieces.extend(_split_to(part, count, limit, seps[1:]))
    if cur is not None:
        pieces.append(cur)
    return [p for p in pieces if p.strip()] or [text]


def _skip_reason(path: Path, size: int, max_bytes: int) -> str | None:
    """Why a sync skips this file (the same tests as :meth:`MemoryIndex._sync`), or None."""
    if size > max_bytes:
        return f"larger than memory.max_file_bytes ({size:,} > {max_bytes:,} bytes)"
    try:
        with open(path, "rb") as fh:
            head = fh.read(BINARY_SNIFF)
    except OSError:
        return None
    return "binary file (contains NUL bytes)" if b"\x00" in head else None


def _entry(text: str) -> str:
    text = " ".join((text or "").split())  # one entry, one line
    if not text:
        raise SoulframeError("memory remember: the text is empty")
    return f"- {text}\n"


def _read_stable(path: Path, attempts: int = 3) -> bytes | None:
    """Read a file whose size and mtime did not change while it was read (a writer
    mid-append would otherwise leave half a line in the index until the next change)."""
    for _ in range(attempts):
        try:
            before = path.stat()
            data = path.read_bytes()
            after = path.stat()
        except OSError:
            return None
        if (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size):
            return data
        time.sleep(0.01)
    return data


def _append_locked(path: Path, entry: str, *, heading: str) -> None:
    """Append under an exclusive lock, writing ``heading`` first if the file is new/empty,
    then fsync. The file is created 0600 in a 0700 directory."""
    from ..workspace import ensure_private_dir

    ensure_private_dir(path.parent)
    if path.is_symlink():
        raise SoulframeError(f"{path.name}: refusing to append through a symlink")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        _lock(fd)
        try:
            size = os.fstat(fd).st_size
            payload = entry
            if size == 0:
                payload = heading + entry
            else:
                # make sure the entry starts on its own line
                with open(path, "rb") as fh:
                    fh.seek(size - 1)
                    if fh.read(1) != b"\n":
                        payload = "\n" + entry
            os.write(fd, payload.encode("utf-8"))
            os.fsync(fd)
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _lock(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)
    except ImportError:  # Windows: O_APPEND writes of one small entry are atomic enough
        pass


def _try_lock(fd: int, *, blocking: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows: no cross-process sync lock
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
    except ImportError:
        pass
