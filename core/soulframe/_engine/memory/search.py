"""Searching memory: the keyword and vector channels (in parallel), fusion, the re-ranker
seam, the user-scope boost, optional decay and MMR, ``min_score`` and the cut to k; each hit
with its snippet showing the line that matched."""

from __future__ import annotations

import contextlib
import logging
import unicodedata
import warnings
from typing import TYPE_CHECKING, Any

import attrs

from ..model import (
    MAX_QUERY_CHARS,
    CountingStore,
    SearchHit,
    Session,
    SoulframeError,
    StoredChunk,
    TracksRecalls,
)
from .chunkcontext import with_chunk_context
from .fusion import Fused, cosine_lookup, fuse, mmr, ordered, temporal_decay
from .fusion import boost as boosted
from .querying import best_lines, query_terms, snippet
from .results import MemoryWarning, SearchResults

if TYPE_CHECKING:
    from ..model import EmbeddingProvider
    from .indexview import IndexView
    from .widening import Widener

log = logging.getLogger("soulframe.memory")

POOL_MIN = 40


#: candidates each channel contributes before fusion (per requested result)
POOL_FACTOR = 8

#: the vector channel's pool is this many times the keyword channel's. Fusion reads a
#: candidate missing from a channel's pool as scoring 0 there, so a keyword candidate that
#: fell just outside the vector pool lost its (often middling) vector score and sank below
#: candidates found by meaning alone; a larger vector pool gives most keyword candidates
#: their real vector score, for the cost of reading more rows (the scan is the same).
#: Measured on REALTALK's tune half (docs/memory.md): recall@6 0.638 -> 0.643, the same
#: as looking up the exact vector score of every keyword candidate; 4x gained nothing more,
#: and a larger keyword pool nothing at all.
VECTOR_POOL_FACTOR = 2



def search(index: IndexView, query: str,
    k: int | None = None,
    session: Session | None = None,
    *,
    min_score: float | None = None,
    channels: str = "hybrid",
    sync: bool = True,
    track: bool = True,
    history: bool = False,
) -> SearchResults:
    """The body of :meth:`MemoryIndex.search` (see there for the parameters)."""
    index.check_enabled()
    if channels not in ("hybrid", "keyword", "vector"):
        raise ValueError(f"channels = {channels!r} — expected hybrid, keyword or vector")
    k = int(index.config.get("memory.max_results")) if k is None else int(k)
    if k < 1:
        raise SoulframeError(f"memory search: k = {k}: ask for at least one result")
    min_score = float(index.config.get("memory.min_score")) if min_score is None else float(min_score)
    query = (query or "").strip()
    if not query:
        raise SoulframeError("memory search: the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        # a question, not a document: the model reads its first few hundred word pieces
        # anyway, and embedding 100,000 characters held a server's worker for seconds
        raise SoulframeError(f"memory search: the query is {len(query):,} characters; at most "
                             f"{MAX_QUERY_CHARS:,} (ask a question; search for its key words)")
    if not any(ch.isalnum() or unicodedata.category(ch) == "So" for ch in query):
        # "*" or "?": no word for the keyword channel, and the model's vector of a lone
        # punctuation mark is near every text (it scored 0.92 against a daily log)
        raise SoulframeError(f"memory search: {query[:40]!r} has no words to search for")
    private = session is None or session.is_private
    scope = session.user_id if session is not None else None
    from ..agentstore import sees_owner_memory

    # a private session of a user who is not the owner sees their own private memory and
    # the agent's public memory, never the owner's private files (MEMORY.md, ...)
    strangers = private and not sees_owner_memory(index.agent, session)
    elsewhere = None
    if sync:
        # a process whose file watcher syncs after every change (`serve`) need not look;
        # any other checks what could have changed, cheaply (:mod:`.freshness`)
        if not index.follows_changes:
            elsewhere = index.sync_if_stale().indexing_elsewhere
        if scope:
            _sync_user(index, scope)
    terms = query_terms(query)
    pool = max(k * POOL_FACTOR, POOL_MIN) * (2 if strangers else 1)
    store = index.store

    notice: str | None = None
    text_hits: list[StoredChunk] = []
    vector_hits: list[StoredChunk] = []
    qv: Any = None
    provider = index.embedder if channels in ("hybrid", "vector") else None
    # asked of the store before the keyword query starts: both read the same connection
    focused = None if provider is None else _without_common_names(index, query, private and not strangers, scope)
    text_job = None
    if channels in ("hybrid", "keyword"):
        if provider is not None:
            # the channels are independent: SQLite and numpy both release the GIL, so
            # the keyword query runs while the vectors are scanned
            text_job = index.searcher.pool().submit(
                store.search_text, terms, pool, include_private=private, scope=scope)
        else:
            text_hits = store.search_text(terms, pool, include_private=private, scope=scope)
    if channels in ("hybrid", "vector"):
        if provider is None:
            notice = index.embedder_problem
        else:
            from ..embedding import EmbeddingError

            try:
                qv = index.searcher.question_vector(provider, index.model_key(), query, focused,
                                                    float(index.config.get("memory.query_focus")))
                unit_qv, length = qv, 1.0
                if focused:
                    from .focus import unit

                    # a store scores by cosine with a unit vector; the mix's scale is put back
                    unit_qv, length = unit(qv)
                vector_hits = store.search_vector(unit_qv, pool * VECTOR_POOL_FACTOR, include_private=private,
                                                  scope=scope)
                if length != 1.0:
                    vector_hits = [attrs.evolve(h, score=h.score * length) for h in vector_hits]
                vector_hits = with_chunk_context(store, qv, vector_hits,
                                                 float(index.config.get("memory.chunk_context")))
                vector_hits = _calibrated(index, provider, vector_hits, query)
            except EmbeddingError as exc:
                notice = f"the vector channel failed ({exc}); keyword-only for this search"
            finally:
                if text_job is not None:
                    text_hits = text_job.result()
    if strangers:
        text_hits = _not_the_owners(text_hits)
        vector_hits = _not_the_owners(vector_hits)
    if channels == "hybrid":
        mode = "hybrid" if notice is None else "keyword-only"
    else:
        mode = f"{channels}-only"
    if notice and str(index.config.get("embedding.provider")) != "none":
        # switched off on purpose: said in the result and in status, not warned each time
        warnings.warn(notice, MemoryWarning, stacklevel=2)

    fused = fuse(
        text_hits, vector_hits, terms,
        text_weight=float(index.config.get("memory.text_weight")),
        vector_weight=float(index.config.get("memory.vector_weight")),
        method=str(index.config.get("memory.fusion")),
    )
    from .pipeline import rerank

    reranked = rerank(index.agent, query, fused)
    if reranked.notice:
        notice = f"{notice}; {reranked.notice}" if notice else reranked.notice
    if elsewhere is not None:
        busy = (f"another sync is indexing this memory (file {elsewhere[0]:,} of "
                f"{elsewhere[1]:,}): results may miss what it has not reached yet")
        notice = f"{notice}; {busy}" if notice else busy
    fused = _adjust(index, reranked.fused, k, session)
    if channels == "hybrid":
        from .fusion import vector_slots

        fused = vector_slots(fused, k, float(index.config.get("memory.vector_share")))
    fused = _entities_first(index, fused, query)
    fused, older = _supersession(fused, history=history)
    recalls: list[Any] = []
    from .widening import Widener

    widener = Widener(index, int(index.config.get("memory.hit_chars")))
    from .calibration import probe_language

    language = probe_language(query)  # the snippet's focus weighs passages on the vector channel's scale
    cached = None
    if qv is not None and provider is not None:
        # the passages of the candidates likely to become hits, looked up in one query
        cached = _PassageVectors(index, provider)
        cached.prefetch([f.chunk.text for f in fused if f.vector_score is not None
                         and (_passes(f, min_score) or id(f) in older)][:k])
    hits: list[SearchHit] = []
    for f in fused:
        if len(hits) >= k:
            break
        if not (_passes(f, min_score) or id(f) in older):
            continue
        mine: list[Any] = []
        if id(f) in older:  # a superseded entry, asked for: its own line, even inside a hit
            hits.append(_hit(index, f, terms, qv, mine, widener, language, cached))
            continue
        hit = widener.add(_hit(index, f, terms, qv, mine, widener, language, cached))
        if hit is not None:  # None: a better hit already cites all of its lines
            hits.append(hit)
            recalls.extend(mine)
    if track and recalls and index.config.get("memory.recall_tracking"):
        _record_recalls(index, query, recalls)
    return SearchResults(hits, query=query, mode=mode, notice=notice, terms=terms,
                         focused=focused if qv is not None else None)


def _not_the_owners(hits: list[StoredChunk]) -> list[StoredChunk]:
    """``hits`` less the agent's own private chunks (a user's own private chunks stay)."""
    return [h for h in hits if h.scope or not h.private]


def _passes(f: Fused, min_score: float) -> bool:
    """A hit is kept when its fused score reaches ``min_score``, or its calibrated vector
    score does on its own: a paraphrase sharing no word with the question ranks by the
    weighted sum like every hit, but is not dropped for the keyword evidence it cannot
    have (the calibrated scale is what makes ``min_score`` mean the same for every model)."""
    return f.score >= min_score or (f.vector_score is not None and f.vector_score >= min_score)


def _without_common_names(index: IndexView, query: str, include_private: bool,
                          scope: str | None) -> str | None:
    """The question without the names most visible chunks hold, to embed beside it
    (:mod:`.focus`); ``None`` when off, when the store cannot count, or when no name is
    that common. A private session of someone other than the owner counts public chunks
    only: the owner's private files never shape it."""
    if float(index.config.get("memory.query_focus")) <= 0 or not isinstance(index.store, CountingStore):
        return None
    from .focus import question_names, without_common_names

    names = question_names(query)
    if not names:
        return None
    common = index.store.common_words(names, float(index.config.get("memory.common_names")),
                                      include_private=include_private, scope=scope)
    return without_common_names(query, common)


def _calibrated(index: IndexView, provider: EmbeddingProvider, hits: list[StoredChunk],
                query: str) -> list[StoredChunk]:
    """Vector hits with their cosine mapped to the model's calibrated 0..1 scale, against its
    background for the question's language and each hit's (:mod:`soulframe._engine.memory.calibration`),
    unless ``memory.calibration = "raw"``."""
    if not hits or str(index.config.get("memory.calibration")) == "raw":
        return hits
    return index.searcher.calibrator().calibrate(provider, str(index.model_key()), index.store, query, hits)


def _record_recalls(index: IndexView, query: str, recalls: list[Any]) -> None:
    from .recall import query_hash

    store = index.store
    if not isinstance(store, TracksRecalls):
        return
    try:
        store.record_recalls(recalls, query_hash(query), index.agent.now().date().isoformat())
    except Exception as exc:  # counting must never cost the user their search
        log.debug("recall tracking skipped: %s", exc)


def _entities_first(index: IndexView, fused: list[Fused], query: str) -> list[Fused]:
    """A question naming an entity that has a page (``bank/entities/<name>.md``) gets
    that page's facts first."""
    if not fused or not index.config.get("memory.consolidate.entities"):
        return fused
    from .entities import pages_named_in

    named = pages_named_in(index.agent.root, query)
    if not named:
        return fused
    top = max(f.score for f in fused)
    first = [f for f in fused if f.chunk.path in named]
    for n, f in enumerate(first):
        f.score = min(1.0, max(f.score, top) + 1e-3 * (len(first) - n))
    return first + [f for f in fused if f.chunk.path not in named]


def _supersession(fused: list[Fused], *, history: bool) -> tuple[list[Fused], set[int]]:
    """Entries marked superseded (see :mod:`soulframe._engine.memory.supersede`) are blanked out of
    their chunk; with ``history`` each comes back as a hit of its own, ranked below
    every live hit (so below its successor)."""
    import attrs

    from .supersede import is_superseded, is_superseded_chunk, strip_superseded

    out: list[Fused] = []
    old: list[Fused] = []
    older: set[int] = set()
    for f in fused:
        ch = f.chunk
        if not is_superseded_chunk(ch.text):
            out.append(f)
            continue
        live = strip_superseded(ch.text)
        if any(ln.strip() and not ln.lstrip().startswith("#") for ln in live.split("\n")):
            out.append(attrs.evolve(f, chunk=attrs.evolve(ch, text=live)))
        if history:
            for i, ln in enumerate(ch.text.split("\n")):
                if is_superseded(ln):
                    line = ch.start_line + i
                    old.append(attrs.evolve(f, chunk=attrs.evolve(ch, text=ln, start_line=line, end_line=line)))
    if old:
        floor = min((f.score for f in out), default=max(f.score for f in old))
        for n, f in enumerate(sorted(old, key=lambda f: -f.score)):
            # below every live hit; asked for explicitly, so never cut by min_score
            f.score = max(min(f.score, floor) * 0.99 - n * 1e-6, 1e-6)
            older.add(id(f))
        out.extend(sorted(old, key=lambda f: -f.score))
    return out, older


def _sync_user(index: IndexView, user_id: str) -> None:
    """A user's memory documents live in the store, not in the workspace, so the file
    sync above never sees them: a search for a user indexes that user's documents that
    changed (or all of them after ``memory rebuild`` cleared the index, or when another
    app server wrote them). One query when nothing changed."""
    from .users import UserMemory

    try:
        UserMemory(index.agent, user_id).sync()
    except SoulframeError as exc:  # a store without per-user files: nothing to index
        log.debug("no per-user memory for %s: %s", user_id, exc)


def _adjust(index: IndexView, fused: list[Fused], k: int, session: Session | None) -> list[Fused]:
    """The user's own copies boosted over the agent's, then (when configured) temporal
    decay and MMR diversity."""
    boost = float(index.config.get("memory.user_scope_boost"))
    if session is not None and session.user_id and boost != 1.0:
        # a user's own copy of a file wins over the agent's, boosted (seed 000 §15)
        for f in fused:
            if f.chunk.scope:
                f.score = boosted(f.score, boost)
        # a user's copy of a file hides the agent's (seed 000 §15 "user copy wins"); a
        # user's own document of the same name (her daily log of the same day) is no copy:
        # the agent's chunk goes only when hers at that place holds all of its text
        mine: dict[tuple[str, int], list[str]] = {}
        for f in fused:
            if f.chunk.scope:
                mine.setdefault((f.chunk.path, f.chunk.start_line), []).append(_plain(f.chunk.text))
        fused = ordered([f for f in fused if f.chunk.scope or not any(
            _plain(f.chunk.text) in copy for copy in mine.get((f.chunk.path, f.chunk.start_line), ()))])
    if index.config.get("memory.temporal_decay"):
        fused = temporal_decay(fused, index.agent.now().date(), float(index.config.get("memory.half_life_days")))
    if index.config.get("memory.mmr") and len(fused) > 1:
        head = fused[: max(k * 4, 20)]
        vectors = {}
        with contextlib.suppress(Exception):
            vectors = index.store.chunk_vectors([f.chunk.id for f in head])
        fused = mmr(head, len(head), float(index.config.get("memory.mmr_lambda")), cosine_lookup(vectors))
    return fused


def _plain(text: str) -> str:
    """``text`` with its whitespace runs made one space, to tell a copy from another text."""
    return " ".join(text.split())


def _hit(index: IndexView, f: Fused, terms: list[str], qv: Any = None,
         recalls: list[Any] | None = None, files: Widener | None = None,
         language: str = "en", cached: _PassageVectors | None = None) -> SearchHit:
    ch = f.chunk
    # the question's terms weigh a line only where the keyword channel matched the chunk: a
    # word sharing a term's first letters ("Portuguese" for "Portugal") is no match there,
    # and must not pull the snippet off the passage the vector channel found
    weighed = terms if f.text_score is not None else []
    focus = _focus_line(index, ch.text, weighed, qv, language, cached) if qv is not None and f.vector_score is not None else None
    if focus is None:  # the line with the most query terms, looked for only when needed
        first = best_lines(ch.text, terms)[0]
        focus = first if first >= 0 else None
    text, _offset = snippet(ch.text, terms, focus=focus, prefer_focus=True)
    if recalls is not None:
        from ..model import Recall
        from .recall import entry_line

        at = focus if focus is not None else 0
        i = entry_line(ch.text, at)
        line_text = ch.text.split("\n")[i].strip()
        if line_text:
            recalls.append(Recall(ch.path, ch.start_line + i, line_text, float(f.score), ch.scope))
    return SearchHit(
        path=ch.path, start_line=ch.start_line, end_line=ch.end_line,
        score=round(f.score, 6), snippet=text,
        text_score=f.text_score, vector_score=f.vector_score,
        scope="user" if ch.scope else "agent", rerank_score=f.rerank_score,
        provenance=() if ch.scope else _provenance(index, ch.path, ch.start_line, ch.end_line, files),
    )


def _provenance(index: IndexView, path: str, start: int, end: int,
                files: Widener | None = None) -> tuple[str, ...]:
    """The provenance notes on lines ``start``-``end`` of the workspace file (the index holds
    the text without them); nothing when the file cannot be read. ``files``: the search's
    widener, which reads each file once for every hit in it (and for its own widening)."""
    from .provenance import of_lines

    if files is not None:
        lines = files.lines(path)
        return () if lines is None else of_lines(line for line in lines[start - 1:end] if "src:" in line)
    try:
        with open(index.agent.workspace.resolve(path), encoding="utf-8", errors="replace") as fh:
            from itertools import islice

            lines = [line for line in islice(fh, start - 1, end) if "src:" in line]
    except (OSError, SoulframeError):
        return ()
    return of_lines(lines)


class _PassageVectors:
    """The cached vectors of the passages of one search's hits (for :func:`_focus_line`):
    the likely hits' passages are fetched in one query (:meth:`prefetch`), any other
    chunk's when asked for; each chunk's passages are cut and hashed once."""

    def __init__(self, index: IndexView, provider: EmbeddingProvider) -> None:
        self.index = index
        self.provider = provider
        self._windows: dict[str, tuple[list[str], list[str]]] = {}
        self._found: dict[str, Any] = {}
        self._asked: set[str] = set()

    def windows(self, text: str) -> tuple[list[str], list[str]]:
        """The passages of ``text`` and their cache keys."""
        got = self._windows.get(text)
        if got is None:
            from ..embedding import text_hash
            from .passages import passage_windows

            windows = passage_windows(self.index.config, text, self.provider)
            got = self._windows[text] = (windows, [text_hash(w) for w in windows])
        return got

    def prefetch(self, texts: list[str]) -> None:
        with contextlib.suppress(Exception):  # a store without the cache: asked again, per hit
            self._fetch([key for t in texts for key in self.windows(t)[1]])

    def vectors(self, keys: list[str]) -> dict[str, Any]:
        """The cached vectors of ``keys`` (raises what the store's cache raises)."""
        self._fetch(keys)
        return {key: self._found[key] for key in keys if key in self._found}

    def _fetch(self, keys: list[str]) -> None:
        missing = list(dict.fromkeys(key for key in keys if key not in self._asked))
        if missing:
            self._found.update(self.index.store.get_many(self.provider.model_id, missing))
            self._asked.update(missing)


def _focus_line(index: IndexView, text: str, terms: list[str], qv: Any, language: str = "en",
                cached: _PassageVectors | None = None) -> int | None:
    """The 0-based line of ``text`` the snippet should show: the line whose passage is
    closest to the question, weighed with the share of the question's terms the line holds
    (the fusion's own weights), so the snippet shows the best-matching passage whichever
    channel found it. The passages' vectors come from the embedding cache (by model and
    text hash, as indexing stored them): nothing is embedded again."""
    provider = index.embedder
    if provider is None:
        return None
    if cached is None:
        cached = _PassageVectors(index, provider)
    windows, keys = cached.windows(text)
    import numpy as np

    from .fusion import term_coverage

    try:
        found = cached.vectors(keys)
    except Exception:  # a store without the cache: the default snippet will do
        return None
    if not found:  # no passage of this chunk in the cache: nothing to weigh
        return None
    q = np.asarray(qv, dtype=np.float32)
    lines = text.split("\n")
    where: dict[str, list[int]] = {}
    from .passages import plain

    for i, ln in enumerate(lines):
        if ln.strip() and not ln.lstrip().startswith("#"):
            where.setdefault(plain(ln), []).append(i)
    # the background the question was calibrated against (known: the vector channel just used it)
    background = index.searcher.background(str(index.model_key()), language)
    tw = float(index.config.get("memory.text_weight"))
    w = tw / max(tw + float(index.config.get("memory.vector_weight")), 1e-9)
    best, best_score = None, -2.0
    for win, key in zip(windows, keys, strict=True):
        v = found.get(key)
        if v is None:
            continue
        sim = float(np.asarray(v, dtype=np.float32) @ q)
        vs = background.calibrate(sim) if background is not None else sim
        for ln in win.split("\n"):
            for i in where.get(plain(ln), ()):
                s = (1 - w) * vs + w * term_coverage(ln, terms)
                if s > best_score:
                    best, best_score = i, s
    return best
