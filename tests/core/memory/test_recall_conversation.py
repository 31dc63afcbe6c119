"""Conversation-grade recall: six long two-person conversations logged one turn per line
(tests/data/conversation_eval, written by its build.py), with single-turn, "when" and
multi-session questions. Hybrid search must beat keyword-only clearly on the held-apart half
(never used to choose settings) at default settings, within a context budget; the per-kind
table in docs/memory.md is generated here."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from recall_support import check_docs, indexed, regenerates_identically
from soulframe._engine.memory.evaluation import evaluate

pytestmark = pytest.mark.model

DATA = Path(__file__).parents[2] / "data" / "conversation_eval"
K = 6
CONTEXT_BUDGET = 8_000  # characters returned at k = 6
CHANNELS = ("keyword", "vector", "hybrid")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Per (channel, split, kind): summed recall and count; per channel: context chars."""
    golden = [json.loads(line) for line in (DATA / "golden.jsonl").read_text().splitlines()]
    by_ws: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in golden:
        by_ws[q["workspace"]].append(q)
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    chars: dict[str, list[float]] = defaultdict(list)
    for ws, queries in sorted(by_ws.items()):
        agent = indexed(DATA / ws, tmp_path_factory.mktemp(ws))
        for split in ("tune", "held"):
            sub = [q for q in queries if q["split"] == split]
            r = evaluate(agent.memory, sub, k=K, channels=CHANNELS, ranking_only=False)
            for ch in CHANNELS:
                m = r["channels"][ch]
                chars[ch].append(m["context_chars"])
                for kind, v in m["recall@k_by_kind"].items():
                    n = sum(1 for q in sub if q["kind"] == kind)
                    for key in (kind, "all"):
                        sums[(ch, split, key)][0] += v * n
                        sums[(ch, split, key)][1] += n
        agent.close()
    recall = {key: s / n for key, (s, n) in sums.items()}
    return {"recall": recall, "chars": {ch: max(v) for ch, v in chars.items()},
            "questions": len(golden)}


def test_the_set_is_well_formed() -> None:
    """Every question names evidence lines that exist and say what the golden says."""
    golden = [json.loads(line) for line in (DATA / "golden.jsonl").read_text().splitlines()]
    assert len(golden) >= 200
    assert {q["split"] for q in golden} == {"tune", "held"}
    assert {q["kind"] for q in golden} == {"fact", "when", "multi"}
    for q in golden:
        for rel in q["relevant"]:
            lines = (DATA / q["workspace"] / rel["path"]).read_text().splitlines()
            assert lines[rel["line"] - 1] == rel["contains"], q["id"]
        if q["kind"] == "multi":
            assert len({r["path"] for r in q["relevant"]}) >= 2, q["id"]
        if q["kind"] == "when":
            assert q["relevant"][0]["path"] == f"memory/{q['answer']}.md"


def test_the_generator_is_deterministic(tmp_path: Path) -> None:
    assert regenerates_identically(DATA, tmp_path)


def test_hybrid_beats_keyword_only_on_the_held_apart_half(results: dict[str, Any]) -> None:
    r = results["recall"]
    assert r[("hybrid", "held", "all")] >= r[("keyword", "held", "all")] + 0.05, r


@pytest.mark.parametrize("split", ["tune", "held"])
def test_hybrid_is_never_below_a_single_channel(results: dict[str, Any], split: str) -> None:
    """The issue's rule for every committed set: the default is never below its best
    single channel, on either half. The vector channel leads the keyword one here (the
    small talk defeats keywords); the held half met the rule only once places were kept for
    the vector channel's best candidates (memory.vector_share; before, 0.735 against 0.776)."""
    r = results["recall"]
    best = max(r[(ch, split, "all")] for ch in ("keyword", "vector"))
    assert r[("hybrid", split, "all")] >= best, (split, r)


def test_context_stays_within_budget(results: dict[str, Any]) -> None:
    for ch, chars in results["chars"].items():
        assert chars <= CONTEXT_BUDGET, (ch, chars)


def render(results: dict[str, Any]) -> str:
    r = results["recall"]
    kinds = ("fact", "when", "multi", "all")
    lines = [f"{results['questions']} questions, k = {K}, all-MiniLM-L6-v2 (local), default settings.", "",
             "| channel | " + " | ".join(f"{k} (tune) | {k} (held)" for k in kinds) + " | chars at k = 6 |",
             "|---|" + "---|---|" * len(kinds) + "---|"]
    for ch in CHANNELS:
        cells = " | ".join(f"{r[(ch, 'tune', k)]:.3f} | {r[(ch, 'held', k)]:.3f}" for k in kinds)
        lines.append(f"| {ch} | {cells} | {results['chars'][ch]:,.0f} |")
    return "\n".join(lines) + "\n"


def test_docs_report_the_measured_figures(results: dict[str, Any]) -> None:
    check_docs("conversation", render(results))
