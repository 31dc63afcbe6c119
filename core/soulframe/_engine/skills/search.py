"""Skill search: BM25 exactly as seed 000 §10, fused 0.3/0.7 with embeddings (§11).

Imported only when a search runs (it needs numpy), never by a prompt build.

The seed's BM25 is Okapi's term-frequency part (k1, b, |d|/avgdl) with the IDF
``log((N - df + 0.5) / (df + 0.5) + 1)``, always positive (classic Okapi's IDF goes negative
for a term in more than half the documents). It is computed here from document frequencies
directly: no library computes exactly this IDF, and the index is a few dozen lines. Scoring
goes through per-term postings (the docs containing the term and their precomputed term
score), so a query touches only the documents that match it: ~0.1 ms at 5,000 skills, where
:meth:`SeedBM25.get_scores` walks every document for every term.
"""

from __future__ import annotations

import logging
import math
import threading
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ..model import Skill, SkillHit, SoulframeError
from ..textsplit import fold_diacritics, has_unspaced, query_words, text_words
from .loader import SkillWarning

if TYPE_CHECKING:
    import numpy.typing as npt

    from .skillset import SkillSet, Snapshot

def _keep(token: str) -> bool:
    # seed 000 §10 drops 1-character tokens; one Chinese or Japanese character is a word
    return len(token) > 1 or has_unspaced(token)


def tokenize(text: str) -> list[str]:
    """Seed 000 §10: lowercase, non-alphanumerics become spaces, drop 1-character tokens;
    Chinese, Japanese, Korean and Thai runs become their character pairs and characters,
    as memory search splits them (:func:`soulframe._engine.textsplit.text_words`)."""
    return [t for t in text_words(text) if _keep(t)]


def tokenize_query(query: str) -> list[str]:
    """A query's tokens: as :func:`tokenize`, but an unspaced run gives its pairs only
    (:func:`soulframe._engine.textsplit.query_words`), as a memory query does."""
    return [t for t in query_words(query) if _keep(t)]


def seed_idf(n_docs: int, df: int) -> float:
    """``log((N - df + 0.5) / (df + 0.5) + 1)`` (seed 000 §10)."""
    return math.log((n_docs - df + 0.5) / (df + 0.5) + 1)


class SeedBM25:
    """The seed's BM25 over a tokenised corpus, with postings for scoring only matching
    documents."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        if not corpus:
            raise ValueError("SeedBM25 needs at least one document")
        self.k1 = k1
        self.b = b
        self.corpus_size = len(corpus)
        #: term -> its count, one mapping per document
        self.doc_freqs: list[Counter[str]] = [Counter(doc) for doc in corpus]
        self.doc_len: list[int] = [len(doc) for doc in corpus]
        self.avgdl = sum(self.doc_len) / self.corpus_size
        # document frequency: in how many documents each term occurs
        df: Counter[str] = Counter()
        for freqs in self.doc_freqs:
            df.update(freqs.keys())
        self.idf: dict[str, float] = {w: seed_idf(self.corpus_size, n) for w, n in df.items()}
        self._postings = self._build_postings()

    def _build_postings(self) -> dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]]:
        # one flat (term, doc, tf) table scored in a single vectorised pass, then cut into
        # per-term slices: a Python loop per term would cost ~0.3 s at 5,000 skills
        vocab: dict[str, int] = {}
        terms: list[int] = []
        docs: list[int] = []
        tfs: list[int] = []
        for i, freqs in enumerate(self.doc_freqs):
            for word, tf in freqs.items():
                terms.append(vocab.setdefault(word, len(vocab)))
                docs.append(i)
                tfs.append(tf)
        if not vocab:
            return {}
        t = np.asarray(terms, dtype=np.intp)
        d = np.asarray(docs, dtype=np.intp)
        tf_arr = np.asarray(tfs, dtype=np.float64)
        idf = np.asarray([self.idf[w] for w in vocab], dtype=np.float64)
        doc_len = np.asarray(self.doc_len, dtype=np.float64)
        # the same expression, in the same order, as get_scores
        part = idf[t] * (tf_arr * (self.k1 + 1) / (
            tf_arr + self.k1 * (1 - self.b + self.b * doc_len[d] / self.avgdl)))
        order = np.argsort(t, kind="stable")
        t, d, part = t[order], d[order], part[order]
        bounds = np.flatnonzero(np.diff(t)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [t.size]))
        words = list(vocab)
        return {
            words[int(t[a])]: (d[a:b], part[a:b])
            for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
        }

    def ceiling(self, query: Sequence[str]) -> float:
        """An upper bound of any document's score for ``query``: each term's
        ``IDF * (k1 + 1)`` (its term-frequency factor tends to ``k1 + 1``), a term no skill
        contains counted at the IDF of ``df = 0``. Dividing by it puts a score in 0..1 as
        "the share of the query a document matches", whatever the other documents do."""
        unseen = seed_idf(self.corpus_size, 0)
        return sum((self.idf.get(t, unseen)) * (self.k1 + 1) for t in query) or 1.0

    def scores(self, query: Sequence[str]) -> npt.NDArray[np.float64]:
        """One score per document (0 where no query term occurs); equals :meth:`get_scores`."""
        score = np.zeros(self.corpus_size, dtype=np.float64)
        for term in query:
            posting = self._postings.get(term)
            if posting is not None:
                score[posting[0]] += posting[1]
        return score

    def get_scores(self, query: Sequence[str]) -> npt.NDArray[np.float64]:
        """The formula applied document by document, every term against every document:
        the slow reference that :meth:`scores` must equal."""
        score = np.zeros(self.corpus_size, dtype=np.float64)
        for i, (freqs, dl) in enumerate(zip(self.doc_freqs, self.doc_len, strict=True)):
            for term in query:
                tf = freqs.get(term, 0)
                if tf:
                    score[i] += self.idf[term] * (tf * (self.k1 + 1) / (
                        tf + self.k1 * (1 - self.b + self.b * dl / self.avgdl)))
        return score


def search_text(skill: Skill) -> str:
    """What BM25 indexes for a skill: its name, description and body headings."""
    return " ".join((skill.name, skill.description, *skill.headings))


def embedding_text(skill: Skill) -> str:
    """What is embedded for a skill (and cached by its hash)."""
    return f"{skill.name}: {skill.description}"


@attrs.frozen
class Ranked:
    index: int
    score: float
    text_score: float | None
    vector_score: float | None


class SkillIndex:
    """The BM25 index (and, when embeddings are on, the vectors) of one skill snapshot."""

    def __init__(self, skills: Sequence[Skill], *, k1: float, b: float) -> None:
        self.skills = list(skills)
        corpus = [tokenize(search_text(s)) for s in self.skills]
        self.bm25: SeedBM25 | None = SeedBM25(corpus, k1=k1, b=b) if corpus else None
        self._accented = _accented_by_plain_spelling(self.bm25.idf) if self.bm25 else {}
        self.vectors: npt.NDArray[np.float32] | None = None
        self.model_id: str | None = None

    def attach_vectors(self, vectors: Any, model_id: str) -> None:
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(self.skills):
            raise ValueError(f"expected {len(self.skills)} skill vectors, got shape {arr.shape}")
        self.vectors = arr
        self.model_id = model_id

    def query_terms(self, query: str) -> list[str]:
        """``query``'s tokens, a word typed without its accents ("rediger") taken as the
        skills write it ("rédiger") when no skill has it as typed - as memory search
        matches it. A word typed with accents stays as written (Vietnamese tones tell
        words apart)."""
        out = []
        for t in tokenize_query(query):
            if self.bm25 is not None and t not in self.bm25.idf and fold_diacritics(t) == t:
                t = self._accented.get(t, t)
            out.append(t)
        return out

    def bm25_scores(self, query: str) -> npt.NDArray[np.float64]:
        if self.bm25 is None:
            return np.zeros(0, dtype=np.float64)
        return self.bm25.scores(self.query_terms(query))

    def search(
        self,
        query: str,
        k: int,
        *,
        query_vector: Any = None,
        text_weight: float = 0.3,
        vector_weight: float = 0.7,
    ) -> list[Ranked]:
        """The top ``k`` skills for ``query``.

        Keyword only: raw BM25 scores, documents with no query term left out. Hybrid (a
        query vector and skill vectors): BM25 normalised to 0..1 by the query's ceiling
        (:meth:`SeedBM25.ceiling`), cosine clamped to 0..1, fused ``text_weight * bm25 +
        vector_weight * cosine``; when BM25 matches nothing the cosine is used alone
        (weights renormalised to 1, seed 000 §15). Ties go to the skill that sorts first by
        name.

        Why the ceiling and not the best score: dividing by the best score turns a skill
        that matches one incidental word of a long query ("it" in "will it rain tomorrow")
        into a perfect 1.0 keyword match, and 0.3 of that outweighs real semantic
        similarity. On 20 paraphrased queries over 17 skills with the offline MiniLM model
        (tests/benchmarks/bench_skills.py) recall@1 was 13/20 normalising by the best
        score, 19/20 by the ceiling, 19/20 cosine alone and 8/20 BM25 alone.
        """
        if not self.skills or k <= 0:
            return []
        raw = self.bm25_scores(query)
        if query_vector is None or self.vectors is None:
            hits = np.flatnonzero(raw > 0)
            order = _top(raw, hits, k)
            return [Ranked(int(i), float(raw[i]), float(raw[i]), None) for i in order]
        q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        cosine = np.clip(self.vectors @ q, 0.0, 1.0).astype(np.float64)
        best = float(raw.max()) if raw.size else 0.0
        if best > 0:
            assert self.bm25 is not None
            text = raw / self.bm25.ceiling(self.query_terms(query))
            fused = text_weight * text + vector_weight * cosine
        else:
            text = raw
            fused = cosine
        candidates = np.flatnonzero(fused > 0)
        order = _top(fused, candidates, k)
        return [
            Ranked(int(i), float(fused[i]), float(text[i]) if raw[i] > 0 else None, float(cosine[i]))
            for i in order
        ]


def _accented_by_plain_spelling(idf: dict[str, float]) -> dict[str, str]:
    """Each indexed word that has accents, by its spelling without them; of two that
    share one ("côte", "côté"), the one more skills use (the lower IDF), then the first
    in sort order."""
    out: dict[str, str] = {}
    for word in sorted(idf):
        plain = fold_diacritics(word)
        if plain != word and (plain not in out or idf[word] < idf[out[plain]]):
            out[plain] = word
    return out


def _top(scores: npt.NDArray[np.float64], candidates: npt.NDArray[np.intp], k: int) -> list[int]:
    """The best ``k`` candidate indices, by score then index (the name order)."""
    if candidates.size > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        cutoff = scores[candidates[part]].min()
        # keep every candidate tied with the k-th so the tie-break by name is exact
        candidates = candidates[scores[candidates] >= cutoff]
    ranked = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
    return ranked[:k]


log = logging.getLogger("soulframe.skills")


# --------------------------------------------------------------------------- a skill set's search


class SkillSearch:
    """What the search of one skill set keeps between searches: the index of the current
    snapshot, which model's vectors it holds, where skill vectors are cached, the model's
    calibration background and whether the embedder failed. A :class:`SkillSet` holds one
    (``skills.searcher``, made at the first search: this module imports numpy)."""

    def __init__(self, skills: SkillSet, lock: threading.RLock) -> None:
        self.skills = skills
        #: the skill set's own lock: the index is built once per snapshot version
        self._lock = lock
        self._index: tuple[int, SkillIndex] | None = None
        self._vectors_for: tuple[int, str] | None = None
        #: where skill vectors are cached: the store's embedding cache, else memory
        self._backend: Any = None
        self._embedder_error: str | None = None
        #: skills.search: (model key, its calibration background), for skills.min_score
        self._background: tuple[str, Any] | None = None

    @property
    def last_index(self) -> SkillIndex | None:
        """The index the last search used (None before the first)."""
        return None if self._index is None else self._index[1]

    def index_for(self, snap: Snapshot) -> SkillIndex:
        """The search index of ``snap`` (built once per version)."""
        with self._lock:
            if self._index is None or self._index[0] != snap.version:
                self._index = (snap.version, SkillIndex(
                    snap.skills,
                    k1=float(self.skills.config.get("skills.bm25_k1")),
                    b=float(self.skills.config.get("skills.bm25_b")),
                ))
                self._vectors_for = None
            return self._index[1]

    def _embedder(self) -> Any:
        if self._embedder_error is not None:
            return None
        try:
            return self.skills.agent.embedder
        except SoulframeError as exc:
            # skill search keeps working on keywords; the user is told once
            self._embedder_error = str(exc)
            warnings.warn(f"skill search runs keyword-only: {exc}", SkillWarning, stacklevel=3)
            return None

    def _attach_vectors(self, index: SkillIndex, snap: Snapshot, embedder: Any) -> bool:
        model_id = str(embedder.model_id or embedder.name)
        if self._vectors_for == (snap.version, model_id) and index.vectors is not None:
            return True
        from ..embedding import EmbeddingCache

        try:
            cache = EmbeddingCache(self._cache_backend())
            vectors = cache.embed_documents(embedder, [embedding_text(s) for s in snap.skills])
            index.attach_vectors(vectors, model_id)
        except SoulframeError as exc:
            warnings.warn(f"skill embeddings failed; keyword-only this time: {exc}",
                          SkillWarning, stacklevel=3)
            return False
        self._vectors_for = (snap.version, model_id)
        return True

    def _cache_backend(self) -> Any:
        """The store's embedding cache (so skill vectors survive restarts), else memory."""
        backend = self._backend
        if backend is not None:
            return backend
        from ..embedding import CacheBackend, InMemoryCacheBackend

        backend = InMemoryCacheBackend()
        try:
            store = self.skills.agent.store
            if isinstance(store, CacheBackend):
                backend = store
        except (SoulframeError, ImportError, OSError) as exc:
            log.debug("skills: no store for the embedding cache (%s); caching in memory", exc)
        self._backend = backend
        return backend

    def _above_floor(self, embedder: Any, ranked: list[Ranked]) -> list[Ranked]:
        """Drop the skills that only the vector channel found, weakly: every skill has *some*
        cosine with any query, so without a floor an unrelated skill is returned for every
        question (the README's "open a pull request" gave heartbeat-checklist at 0.11). The
        cosine is calibrated against the model's background as memory's is
        (:mod:`soulframe._engine.memory.calibration`), so ``skills.min_score`` means the same for every
        model. The evidence is the same fusion as the score, with the calibrated cosine in place
        of the raw one, so an incidental word match ("the", "in") does not keep a skill either.
        The scores returned are unchanged."""
        config = self.skills.config
        floor = float(config.get("skills.min_score"))
        if floor <= 0 or not ranked:
            return ranked
        background = self._background_of(embedder)
        tw = float(config.get("skills.text_weight"))
        vw = float(config.get("skills.vector_weight"))

        def evidence(r: Ranked) -> float:
            calibrated: float = background.calibrate(r.vector_score or 0.0)
            if r.text_score is None:  # no query word matched: the weights renormalise to 1
                return calibrated
            return (tw * r.text_score + vw * calibrated) / (tw + vw)

        return [r for r in ranked if evidence(r) >= floor]

    def _background_of(self, embedder: Any) -> Any:
        """The model's background, shared with memory search through the store's meta table
        when there is a store (measured once per model), else measured once per skill set."""
        from ..embedding import InMemoryCacheBackend
        from ..memory.calibration import Calibrator, measure_background

        key = f"{embedder.name}:{embedder.model_id}:{embedder.dimensions}"  # as the memory index's
        if self._background is not None and self._background[0] == key:
            return self._background[1]
        backend = self._cache_backend()
        if isinstance(backend, InMemoryCacheBackend):
            found = measure_background(embedder)
        else:
            found = Calibrator().background(embedder, key, backend)
        self._background = (key, found)
        return found

    def search(self, query: str, k: int | None = None, *, semantic: bool | None = None) -> list[SkillHit]:
        """The best skills for ``query``: BM25 (seed 000 §10), fused 0.3/0.7 with cosine
        similarity when an embedding provider is available (§11). ``k`` defaults to
        ``skills.max_results`` (5). ``semantic=False`` forces keyword-only."""
        skills = self.skills
        snap = skills.snapshot()
        k = int(skills.config.get("skills.max_results")) if k is None else int(k)
        if not snap.skills or k <= 0 or not query.strip():
            return []
        index = self.index_for(snap)
        query_vector = None
        if semantic is not False:
            embedder = self._embedder()
            if embedder is not None and self._attach_vectors(index, snap, embedder):
                try:
                    query_vector = embedder.embed_query(query)
                except SoulframeError as exc:
                    warnings.warn(f"query embedding failed; keyword-only: {exc}", SkillWarning,
                                  stacklevel=2)
        ranked = index.search(
            query, k, query_vector=query_vector,
            text_weight=float(skills.config.get("skills.text_weight")),
            vector_weight=float(skills.config.get("skills.vector_weight")),
        )
        if query_vector is not None:
            ranked = self._above_floor(embedder, ranked)
        hits = []
        for r in ranked:
            s = index.skills[r.index]
            hits.append(SkillHit(
                name=s.name, description=s.description, location=str(s.path), tier=s.tier,
                tier_name=s.tier_name, score=r.score, text_score=r.text_score,
                vector_score=r.vector_score,
            ))
        return hits
