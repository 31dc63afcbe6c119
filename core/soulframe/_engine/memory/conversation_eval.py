"""Measuring memory search on long conversations (``soulframe memory eval --conversations``).

Each conversation (:mod:`soulframe._engine.memory.conversations`) is written as a workspace of
daily logs, indexed with the caller's configuration and plugins (its own index, never the
user's), and every question goes through :meth:`MemoryIndex.search` exactly as ``memory
search`` runs it (a main session, ``memory.min_score`` applied, no recall tracking).

Per channel, per category and overall, averaged over the questions that have at least one
resolvable evidence turn:

``recall@k``
    the share of a question's evidence turns whose line lies inside the line range of one
    of the top k hits;
``all@k``
    the share of questions whose every evidence turn is inside the top k;
``mrr``
    the mean of 1 / rank of the first hit holding an evidence turn (0 when none does);
``context_chars``
    the characters of the lines the top k hits cite, what reading them costs a prompt.

Also: the index time (and how many passages were embedded or came from the cache), query
latency p50/p95 per channel, and how many evidence ids named no turn or were malformed (they
are skipped and counted, never guessed).
"""

from __future__ import annotations

import re
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .conversations import Conversation, Evidence, turn_ids, write_workspace

if TYPE_CHECKING:
    from ..config import Config

CHANNELS: tuple[str, ...] = ("hybrid", "keyword", "vector")
#: called with (conversation name, what is happening, done, total)
Progress = Callable[[str, str, int, int], None]


def evaluate_conversations(
    config: Config,
    conversations: Sequence[Conversation],
    workdir: Path,
    *,
    k: int = 6,
    channels: Sequence[str] = CHANNELS,
    progress: Progress | None = None,
    embedder: Any = None,
    per_question: bool = False,
) -> dict[str, Any]:
    """Index each conversation under ``workdir/<name>`` and score its questions (see the
    module docstring). ``embedder`` shares one loaded model across the conversations (by
    default the first conversation's agent loads it and the others reuse it). A ``workdir``
    kept from an earlier run keeps its indexes and their embedding cache: text embedded
    before is not embedded again."""
    from ..agent import Agent
    from ..model import Session

    sums: dict[str, dict[str, dict[str, list[float]]]] = {c: {} for c in channels}
    latency: dict[str, list[float]] = {c: [] for c in channels}
    convs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    totals = {"questions": 0, "unresolved_evidence": 0, "skipped_questions": 0}
    notice: str | None = None
    for conv in conversations:
        root = workdir / re.sub(r"[^\w.-]+", "_", conv.name)
        ws, state = root / "workspace", root / "state"
        where = write_workspace(conv, ws)
        cfg = config.evolve(state_dir=str(state), store__path=str(state / "index.sqlite"))
        agent = Agent.open(ws, config=cfg)
        if embedder is not None:
            agent.__dict__["embedder"] = embedder
        try:
            if progress is not None:
                progress(conv.name, "indexing", 0, 1)
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # force: settings that change chunks or passages take effect on a kept index
                report = agent.memory.sync(force=True)
            seconds = time.perf_counter() - started
            if embedder is None:
                embedder = agent.memory.embedder
            notice = notice or agent.memory.embedder_problem
            lines = {p: (ws / p).read_text(encoding="utf-8").split("\n") for p in {e.path for e in where.values()}}
            info: dict[str, Any] = {"name": conv.name, "format": conv.format, "sessions": len(conv.sessions),
                    "turns": sum(len(s.turns) for s in conv.sessions), "questions": len(conv.questions),
                    "index_seconds": round(seconds, 3), "chunks": report.chunks,
                    "embedded": report.embedded, "cached": report.cached,
                    "unresolved_evidence": 0, "skipped_questions": 0}
            for qi, q in enumerate(conv.questions):
                if progress is not None:
                    progress(conv.name, "questions", qi, len(conv.questions))
                ids, bad = turn_ids(q.evidence)
                found = sorted({where[i] for i in ids if i in where}, key=lambda e: (e.path, e.line))
                info["unresolved_evidence"] += bad + sum(1 for i in ids if i not in where)
                if not found:
                    info["skipped_questions"] += 1
                    continue
                row: dict[str, Any] = {"conversation": conv.name, "question": q.question,
                                       "category": q.category, "evidence": len(found)}
                for ch in channels:
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        hits = agent.memory.search(q.question, k, Session.main(), channels=ch,
                                                   sync=False, track=False)
                    latency[ch].append(time.perf_counter() - t)
                    m = score(hits[:k], found, lines)
                    row[ch] = m
                    for key in ("all", q.category):
                        acc = sums[ch].setdefault(key, {"n": [], "recall": [], "all": [], "mrr": [], "chars": []})
                        acc["n"].append(1)
                        for name in ("recall", "all", "mrr", "chars"):
                            acc[name].append(m[name])
                if per_question:
                    rows.append(row)
            if progress is not None:
                progress(conv.name, "questions", len(conv.questions), len(conv.questions))
        finally:
            agent.close()
        totals["questions"] += len(conv.questions)
        totals["unresolved_evidence"] += info["unresolved_evidence"]
        totals["skipped_questions"] += info["skipped_questions"]
        convs.append(info)
    result: dict[str, Any] = {
        "k": k, "conversations": convs, **totals,
        "scored": totals["questions"] - totals["skipped_questions"],
        "index_seconds": round(sum(c["index_seconds"] for c in convs), 3),
        "settings": {key: config.get(key) for key in (
            "embedding.provider", "memory.fusion", "memory.calibration", "memory.min_score",
            "memory.chunk_max_chars", "memory.embed_window_chars", "memory.chunker", "memory.reranker")},
        "channels": {}, "notice": notice,
    }
    for ch in channels:
        by = {key: _mean(acc) for key, acc in sums[ch].items()}
        overall = by.pop("all", _mean({}))
        ms = sorted(x * 1000 for x in latency[ch])
        result["channels"][ch] = {
            "overall": overall, "by_category": dict(sorted(by.items())),
            "latency_ms": {"p50": round(_pct(ms, 50), 2), "p95": round(_pct(ms, 95), 2)},
        }
    if per_question:
        result["per_question"] = rows
    return result


def score(hits: Sequence[Any], evidence: Sequence[Evidence], lines: dict[str, list[str]]) -> dict[str, float]:
    """recall, all, reciprocal rank and cited characters of one question's hits."""
    got: set[Evidence] = set()
    first = 0
    chars = 0
    for rank, h in enumerate(hits, 1):
        inside = {e for e in evidence if e.path == h.path and h.start_line <= e.line <= h.end_line}
        if inside and not first:
            first = rank
        got |= inside
        text = lines.get(h.path)
        chars += len("\n".join(text[h.start_line - 1 : h.end_line])) if text else len(h.snippet)
    n = len(evidence)
    return {"recall": len(got) / n, "all": float(len(got) == n), "mrr": 1.0 / first if first else 0.0,
            "chars": float(chars)}


def _mean(acc: dict[str, list[float]]) -> dict[str, Any]:
    n = len(acc.get("n", []))
    if not n:
        return {"questions": 0, "recall@k": None, "all@k": None, "mrr": None, "context_chars": None}
    return {"questions": n, "recall@k": statistics.fmean(acc["recall"]), "all@k": statistics.fmean(acc["all"]),
            "mrr": statistics.fmean(acc["mrr"]), "context_chars": statistics.fmean(acc["chars"])}


def _pct(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    i = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[i]


def table(result: dict[str, Any]) -> str:
    """The result as a plain-text table: per channel, overall and per category."""
    k = result["k"]
    cats = sorted({c for m in result["channels"].values() for c in m["by_category"]})
    head = f"{'channel':8} {'category':12} {'n':>5} {f'R@{k}':>6} {f'all@{k}':>6} {'MRR':>6} {'chars':>6}"
    out = [head]
    for ch, m in result["channels"].items():
        for label, row in (("all", m["overall"]), *((c, m["by_category"].get(c)) for c in cats)):
            if not row or not row["questions"]:
                continue
            out.append(f"{ch:8} {label:12} {row['questions']:5d} {row['recall@k']:6.3f} {row['all@k']:6.3f} "
                       f"{row['mrr']:6.3f} {row['context_chars']:6.0f}")
    lat = "; ".join(f"{ch} p50 {m['latency_ms']['p50']:.0f} ms, p95 {m['latency_ms']['p95']:.0f} ms"
                    for ch, m in result["channels"].items())
    embedded = sum(c["embedded"] for c in result["conversations"])
    cached = sum(c["cached"] for c in result["conversations"])
    out.append(f"{len(result['conversations'])} conversation(s), {result['scored']} of {result['questions']} "
               f"questions scored ({result['skipped_questions']} without resolvable evidence); "
               f"{result['unresolved_evidence']} evidence id(s) unresolved")
    out.append(f"indexing {result['index_seconds']:.1f} s ({embedded} passages embedded, {cached} from cache); "
               f"query latency: {lat}")
    return "\n".join(out) + "\n"
