"""Measuring memory search: recall@k and MRR per channel on golden queries.

The golden file is JSON lines, one query per line::

    {"id": "q1", "query": "what colour is the car?", "kind": "paraphrase",
     "relevant": [{"path": "MEMORY.md", "contains": "Subaru Crosstrek"}]}

A hit is relevant to an entry when it comes from ``path`` and its lines contain
``contains`` (case-insensitive), or, when the entry names its evidence ``line`` (1-based),
when the hit's lines cover that line. ``recall@k`` is the share of a query's relevant
entries found in the top k, averaged over queries; ``MRR`` is the mean of 1 / rank of the
first relevant hit (0 when none is in the top k).

A query with ``"relevant": []`` is one memory cannot answer: it is left out of recall and
counted in ``unrelated_returned``, the share of such queries that returned anything (it
should be 0). ``false_no_results`` is the share of answerable queries whose right passage is
that channel's top candidate (at ``min_score`` 0) but which returned nothing at all with the
``min_score``: an agent that asks and gets nothing concludes it never knew.
``context_chars`` is the mean number of characters of the hits returned (their cited
lines), what reading them costs a prompt.

Each channel is measured twice: as users get it (``memory.min_score`` applied to that
channel's own scores: ``keyword``, ``vector``, ``hybrid``) and as a pure ranking
(``min_score`` 0: ``keyword@0``, ``vector@0``, ``hybrid@0``).

A golden file may keep a held-apart half: each query's ``split`` (``tune`` or ``held``;
``all`` when absent). ``by_split`` then gives, per split, the same ``recall@k``,
``unrelated_returned`` and (for the channels with ``min_score``) ``false_no_results`` and
``top_right``, each over that split's own queries (``None`` where the split has none to
count), so the half used to choose settings and the half never looked at are reported side
by side.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import SoulframeError

if TYPE_CHECKING:
    from .index import MemoryIndex

CHANNELS: tuple[str, ...] = ("keyword", "vector", "hybrid")


def load_golden(path: str | Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SoulframeError(f"{path}: not valid UTF-8 (near byte {exc.start:,}): a question file is "
                             "UTF-8 JSON Lines, one question per line") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SoulframeError(f"{path} line {lineno}: invalid JSON: {exc.msg}") from exc
        problem = _question_problem(item)
        if problem:
            raise SoulframeError(f"{path} line {lineno}: {problem}; expected "
                                 '{"id": ..., "query": ..., "relevant": [{"path": ..., "contains": ...}]}')
        for rel in item["relevant"]:
            if not isinstance(rel, dict) or "path" not in rel:
                raise SoulframeError(f"{path} line {lineno}: each relevant entry needs a path")
            if "line" in rel and (not isinstance(rel["line"], int) or rel["line"] < 1):
                raise SoulframeError(f"{path} line {lineno}: relevant line must be a line number (1 or more)")
        out.append(item)
    if not out:
        raise SoulframeError(f"{path}: no queries")
    return out


def _question_problem(item: Any) -> str | None:
    """What is wrong with one question of a golden file, naming the key (a misspelt
    ``relevent`` said only what was expected, not what was amiss)."""
    if not isinstance(item, dict):
        return f"a JSON {type(item).__name__}, not an object"
    for key in ("query", "relevant"):
        if key not in item:
            return f"no {key!r} key (the line has: {', '.join(map(repr, item)) or 'nothing'})"
    if not isinstance(item["query"], str) or not item["query"].strip():
        return "'query' must be a non-empty string"
    if not isinstance(item["relevant"], list):
        return "'relevant' must be a list"
    return None


def _hit_text(memory: MemoryIndex, path: str, start: int, end: int, cache: dict[str, list[str]]) -> str:
    if path not in cache:
        cache[path] = memory.get(path).text.splitlines()
    return "\n".join(cache[path][start - 1 : end])


def rank_metrics(
    memory: MemoryIndex, query: dict[str, Any], hits: Sequence[Any], k: int, cache: dict[str, list[str]]
) -> tuple[float, int | None, list[float]]:
    """(recall@k, rank of the first relevant hit or None, recall at 1..k)."""
    relevant = query["relevant"]
    found: set[int] = set()
    first: int | None = None
    per_rank: list[float] = []
    if not relevant:
        return 0.0, None, [0.0] * k
    for rank, h in enumerate(hits[:k], 1):
        text = _hit_text(memory, h.path, h.start_line, h.end_line, cache).lower()
        for i, rel in enumerate(relevant):
            if h.path != rel["path"]:
                continue
            line = rel.get("line")
            if (h.start_line <= line <= h.end_line) if isinstance(line, int) else (
                    str(rel.get("contains", "")).lower() in text):
                found.add(i)
                if first is None:
                    first = rank
        per_rank.append(len(found) / len(relevant))
    while len(per_rank) < k:
        per_rank.append(per_rank[-1] if per_rank else 0.0)
    return per_rank[k - 1] if per_rank else 0.0, first, per_rank


def evaluate(
    memory: MemoryIndex, queries: Sequence[dict[str, Any]], k: int = 6,
    channels: Sequence[str] = CHANNELS, *, ranking_only: bool = True,
) -> dict[str, Any]:
    """Metrics for keyword, vector and hybrid, with and without the min score (see the
    module docstring); ``recall@k_by_kind`` per ``kind``, and ``recall@k_by_split`` and
    ``by_split`` (every rate per split) per ``split`` (a golden file may keep a held-apart
    half). ``ranking_only=False`` leaves out the runs at min score 0 (``hybrid@0`` ...)
    and the rates that compare with them (``false_no_results``, ``top_right``): half the
    searches, for a caller that reads only the channels as users get them."""
    runs: dict[str, dict[str, Any]] = {}
    for c in channels:
        if c == "vector" and memory.embedder is None:
            continue
        runs[c] = {"channels": c, "min_score": None}
    for c in list(runs) if ranking_only else ():
        runs[f"{c}@0"] = {"channels": c, "min_score": 0.0}
    cache: dict[str, list[str]] = {}
    result: dict[str, Any] = {"queries": len(queries), "k": k, "channels": {}, "per_query": []}
    per_query: dict[str, dict[str, Any]] = {str(q.get("id", i)): {"query": q["query"], "kind": q.get("kind")}
                                            for i, q in enumerate(queries)}
    answerable = [q for q in queries if q["relevant"]]
    n = max(1, len(answerable))
    unanswerable = len(queries) - len(answerable)
    split_of = {str(q.get("id", i)): str(q.get("split", "all")) for i, q in enumerate(queries)}
    split_answerable: dict[str, int] = {}
    split_unanswerable: dict[str, int] = {}
    for q in queries:
        counts = split_answerable if q["relevant"] else split_unanswerable
        counts[str(q.get("split", "all"))] = counts.get(str(q.get("split", "all")), 0) + 1
    splits = sorted(set(split_of.values()))
    for name, opts in runs.items():
        r1 = r3 = rk = mrr = 0.0
        chars = 0
        returned_unrelated = 0
        by_kind: dict[str, list[float]] = {}
        by_split: dict[str, list[float]] = {}
        unrelated_by_split: dict[str, int] = {}
        for i, q in enumerate(queries):
            hits = memory.search(q["query"], k, sync=False, track=False, **opts)
            chars += sum(len(_hit_text(memory, h.path, h.start_line, h.end_line, cache)) for h in hits[:k])
            per_query[str(q.get("id", i))][f"{name}:returned"] = len(hits)
            if not q["relevant"]:
                returned_unrelated += bool(hits)
                split = str(q.get("split", "all"))
                unrelated_by_split[split] = unrelated_by_split.get(split, 0) + bool(hits)
                continue
            recall, first, per_rank = rank_metrics(memory, q, hits, k, cache)
            r1 += per_rank[0]
            r3 += per_rank[min(2, k - 1)]
            rk += recall
            mrr += 1.0 / first if first else 0.0
            by_kind.setdefault(str(q.get("kind", "-")), []).append(recall)
            by_split.setdefault(str(q.get("split", "all")), []).append(recall)
            per_query[str(q.get("id", i))][name] = first
        result["channels"][name] = {
            "recall@1": r1 / n, "recall@3": r3 / n, "recall@k": rk / n, "mrr": mrr / n,
            "recall@k_by_kind": {kd: sum(v) / len(v) for kd, v in sorted(by_kind.items())},
            "recall@k_by_split": {sp: sum(v) / len(v) for sp, v in sorted(by_split.items())},
            "context_chars": chars / max(1, len(queries)),
            "unrelated_returned": returned_unrelated / unanswerable if unanswerable else None,
            "by_split": {
                sp: {
                    "recall@k": sum(by_split[sp]) / len(by_split[sp]) if by_split.get(sp) else None,
                    "unrelated_returned": (unrelated_by_split.get(sp, 0) / split_unanswerable[sp]
                                           if split_unanswerable.get(sp) else None),
                } for sp in splits
            },
        }
    for name in [c for c in runs if not c.endswith("@0")] if ranking_only else ():
        top_right = [qid for qid, row in per_query.items() if row.get(f"{name}@0") == 1]
        empty = [qid for qid in top_right if per_query[qid].get(f"{name}:returned") == 0]
        m = result["channels"][name]
        m["false_no_results"] = len(empty) / n
        m["top_right"] = len(top_right) / n
        for sp in splits:
            m_sp = split_answerable.get(sp, 0)
            m["by_split"][sp]["false_no_results"] = sum(split_of[q] == sp for q in empty) / m_sp if m_sp else None
            m["by_split"][sp]["top_right"] = sum(split_of[q] == sp for q in top_right) / m_sp if m_sp else None
    result["per_query"] = [{"id": qid, **row} for qid, row in per_query.items()]
    result["notice"] = memory.embedder_problem
    return result


def markdown_table(result: dict[str, Any], channels: Sequence[str] = ("keyword", "vector", "hybrid")) -> str:
    """The metrics of :func:`evaluate` as a Markdown table (docs/memory.md is generated
    from this by tests/core/memory/test_recall.py)."""
    k = result["k"]
    rows = [f"| channel | recall@1 | recall@3 | recall@{k} | MRR |", "|---|---|---|---|---|"]
    for name in channels:
        m = result["channels"].get(name)
        if m is None:
            continue
        rows.append(f"| {name} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | {m['recall@k']:.3f} | {m['mrr']:.3f} |")
    return "\n".join(rows) + "\n"
