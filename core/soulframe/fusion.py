"""Merging the keyword and vector channels into one ranking, and the optional re-rankers
(temporal decay, MMR).

Every channel score is normalised to 0..1 before it is weighted (seed 000 §15):

* keyword: BM25 relative to the best keyword hit of this query, damped by how many of the
  query's terms the chunk holds (so a chunk matching one common word of a long question
  does not score like one matching all of it);
* vector: the cosine similarity, clipped to 0..1 (already calibrated: it means the same in
  every query, which is what a ``min_score`` needs).

The fusion methods are measured against each other on ``tests/data/memory_eval`` by
``soulframe memory eval`` and ``tests/test_recall.py``; docs/memory.md has the table. A
chunk found by only one channel gets 0 from the other — when a whole channel returns
nothing (or is off), the other's scores stand alone (weights renormalised).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from .model import StoredChunk
from .querying import stem, words

FUSION_METHODS: tuple[str, ...] = ("weighted", "rrf", "minmax")


@attrs.define
class Fused:
    """One merged candidate (mutable: re-rankers adjust ``score``)."""

    chunk: StoredChunk
    score: float
    text_score: float | None = None
    vector_score: float | None = None


def term_coverage(text: str, terms: Sequence[str]) -> float:
    """Share of the query terms (by crude stem) that occur in ``text``."""
    if not terms:
        return 0.0
    have = {stem(w) for w in words(text)}
    return sum(1 for t in terms if stem(t) in have) / len(terms)


def normalise_text(hits: Sequence[StoredChunk], terms: Sequence[str]) -> dict[int, float]:
    """BM25 -> 0..1: relative to this query's best hit, times the square root of term
    coverage (BM25 alone is unbounded and its scale depends on the corpus)."""
    if not hits:
        return {}
    best = max(h.score for h in hits) or 1.0
    return {
        h.id: (h.score / best) * math.sqrt(term_coverage(h.text, terms)) for h in hits
    }


def normalise_vector(hits: Sequence[StoredChunk]) -> dict[int, float]:
    return {h.id: min(1.0, max(0.0, h.score)) for h in hits}


def _minmax(values: Mapping[int, float]) -> dict[int, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 1e-12:
        return {k: 1.0 for k in values}
    return {k: (v - lo) / (hi - lo) for k, v in values.items()}


def fuse(
    text_hits: Sequence[StoredChunk],
    vector_hits: Sequence[StoredChunk],
    terms: Sequence[str],
    *,
    text_weight: float = 0.3,
    vector_weight: float = 0.7,
    method: str = "weighted",
    rrf_k: int = 60,
) -> list[Fused]:
    """Merge the two channels' hits, best first."""
    if method not in FUSION_METHODS:
        raise ValueError(f"memory.fusion = {method!r} — expected one of {', '.join(FUSION_METHODS)}")
    chunks: dict[int, StoredChunk] = {}
    for h in (*vector_hits, *text_hits):
        chunks.setdefault(h.id, h)
    t = normalise_text(text_hits, terms)
    v = normalise_vector(vector_hits)
    tw, vw = text_weight, vector_weight
    if not text_hits and not vector_hits:
        return []
    if not text_hits:
        tw, vw = 0.0, 1.0
    elif not vector_hits:
        tw, vw = 1.0, 0.0
    else:
        total = tw + vw
        tw, vw = (tw / total, vw / total) if total > 0 else (0.5, 0.5)

    out: list[Fused] = []
    if method == "rrf":
        t_rank = {h.id: i for i, h in enumerate(text_hits)}
        v_rank = {h.id: i for i, h in enumerate(vector_hits)}
        best = (tw + vw) / (rrf_k + 1)
        for cid, ch in chunks.items():
            s = 0.0
            if cid in t_rank:
                s += tw / (rrf_k + 1 + t_rank[cid])
            if cid in v_rank:
                s += vw / (rrf_k + 1 + v_rank[cid])
            out.append(Fused(ch, s / best, t.get(cid), v.get(cid)))
    else:
        if method == "minmax":
            t = _minmax({h.id: h.score for h in text_hits})
            v = _minmax({h.id: h.score for h in vector_hits})
        for cid, ch in chunks.items():
            s = tw * t.get(cid, 0.0) + vw * v.get(cid, 0.0)
            out.append(Fused(ch, s, t.get(cid), v.get(cid)))
    out.sort(key=lambda f: (-f.score, f.chunk.path, f.chunk.start_line))
    return out


def temporal_decay(
    items: list[Fused], today: _dt.date, half_life_days: float
) -> list[Fused]:
    """Multiply the score of a dated daily log's chunk by 0.5 ** (age / half-life).
    MEMORY.md and undated files are evergreen (unchanged)."""
    if half_life_days <= 0:
        return items
    for f in items:
        day = f.chunk.day
        if not day:
            continue
        try:
            age = (today - _dt.date.fromisoformat(day)).days
        except ValueError:
            continue
        if age > 0:
            f.score *= 0.5 ** (age / half_life_days)
    items.sort(key=lambda f: -f.score)
    return items


def mmr(
    items: list[Fused],
    k: int,
    lam: float,
    similarity: Callable[[Fused, Fused], float],
) -> list[Fused]:
    """Maximal marginal relevance: pick ``k`` items trading relevance (``lam``) against
    similarity to those already picked (``1 - lam``). Scores are left unchanged; only the
    order (and which items make the cut) changes."""
    pool = list(items)
    picked: list[Fused] = []
    while pool and len(picked) < k:
        def gain(f: Fused) -> float:
            redundancy = max((similarity(f, p) for p in picked), default=0.0)
            return lam * f.score - (1 - lam) * redundancy

        best = max(pool, key=gain)
        picked.append(best)
        pool.remove(best)
    return picked


def jaccard(a: str, b: str) -> float:
    sa, sb = set(words(a)), set(words(b))
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def cosine_lookup(vectors: Mapping[int, Any]) -> Callable[[Fused, Fused], float]:
    """A similarity for :func:`mmr` from chunk vectors, falling back to word overlap."""

    def sim(x: Fused, y: Fused) -> float:
        vx, vy = vectors.get(x.chunk.id), vectors.get(y.chunk.id)
        if vx is not None and vy is not None:
            return float(vx @ vy)
        return jaccard(x.chunk.text, y.chunk.text)

    return sim
