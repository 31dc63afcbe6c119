"""Calibrated vector scores: ``memory.min_score`` must not turn the right answer into "no
results" (the right note is the top candidate, yet nothing comes back), and questions about
things memory never held must still return nothing. Measured on tests/data/paraphrase_eval
with the real offline model, on its tuning half and on its held-apart half (never used to
choose settings) side by side; the figures in docs/memory.md are generated here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from recall_support import check_docs, indexed, regenerates_identically
from soulframe._engine.memory.evaluation import evaluate, load_golden

pytestmark = pytest.mark.model

DATA = Path(__file__).parents[2] / "data" / "paraphrase_eval"

SPLITS = ("tune", "held")
#: committed thresholds at default settings, per half: the measured value (docs/memory.md)
#: with one question's margin (1/36 of recall or false "no results", 1/24 of unrelated)
MAX_FALSE_NO_RESULTS = {"tune": {"vector": 0.06, "hybrid": 0.06},
                        "held": {"vector": 0.06, "hybrid": 0.06}}
MIN_RECALL = {"tune": {"keyword": 0.27, "vector": 0.95, "hybrid": 0.95},
              "held": {"keyword": 0.13, "vector": 0.84, "hybrid": 0.84}}
# each remembered note a passage of its own lifted recall@6 from 0.78 / 0.67 to 0.97 / 0.86
# (tune / held) and took false "no results" to 0, at the price of 2 more of the 24 held
# unrelated questions answered (5 instead of 3): docs/memory.md, "Calibrated scores"
MAX_UNRELATED_RETURNED = {"tune": {"keyword": 0.13, "vector": 0.17, "hybrid": 0.17},
                          "held": {"keyword": 0.05, "vector": 0.21, "hybrid": 0.21}}

ISSUE_NOTES = [
    "Tomas keeps his spare house key under the blue flowerpot",
    "The wifi password for the cabin is written inside the pantry door",
    "Dr Okafor moved the knee appointment to 3 December",
    "Lena switched teams and now reports to Marcus",
]
SMALL_TALK = [
    "Lovely weather for a walk today", "Had pasta for dinner again", "The train was late this morning",
    "Watched a film about penguins", "Need to buy more coffee beans", "My neighbour's garden looks great",
    "Tried a new running route", "It rained all afternoon", "The cafe had a new cake", "Finished a puzzle",
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    golden = load_golden(DATA / "golden.jsonl")
    out = {}
    for name, over in (("background", {}), ("raw", {"memory.calibration": "raw"})):
        agent = indexed(DATA / "workspace", tmp_path_factory.mktemp(f"para-{name}"), **over)
        out[name] = evaluate(agent.memory, golden, k=6)
        agent.close()
    return out


def test_the_set_is_well_formed() -> None:
    """Two halves of 36 remembered facts and 24 unrelated questions each; every fact is in
    the log the golden names; no keyword term of the held half's unrelated questions occurs
    in any log (as a word, or by its first five letters: how keyword scores count a term)."""
    from soulframe._engine.memory.fusion import term_coverage
    from soulframe._engine.memory.querying import query_terms

    golden = load_golden(DATA / "golden.jsonl")
    for split in SPLITS:
        half = [q for q in golden if q["split"] == split]
        assert sum(1 for q in half if q["relevant"]) == 36 and sum(1 for q in half if not q["relevant"]) == 24
    assert len({q["id"] for q in golden}) == len(golden)
    logs = sorted((DATA / "workspace" / "memory").glob("*.md"))
    assert len(logs) == 80
    for q in golden:
        for rel in q["relevant"]:
            assert rel["contains"] in (DATA / "workspace" / rel["path"]).read_text(), q["id"]
    text = "\n".join(p.read_text() for p in logs)
    for q in golden:
        if q["split"] == "held" and not q["relevant"]:
            assert term_coverage(text, query_terms(q["query"])) == 0, q


def test_the_generator_is_deterministic(tmp_path: Path) -> None:
    assert regenerates_identically(DATA, tmp_path)


@pytest.mark.parametrize("split", SPLITS)
def test_the_right_note_is_not_dropped_by_min_score(results: dict[str, Any], split: str) -> None:
    m = results["background"]["channels"]
    raw = results["raw"]["channels"]
    for channel, limit in MAX_FALSE_NO_RESULTS[split].items():
        assert m[channel]["by_split"][split]["false_no_results"] <= limit, (channel, m[channel]["by_split"])
        # and calibration is what fixed it: raw cosine under the same min_score lost more
        assert m[channel]["by_split"][split]["false_no_results"] < raw[channel]["by_split"][split]["false_no_results"]


@pytest.mark.parametrize("split", SPLITS)
def test_recall_at_default_settings(results: dict[str, Any], split: str) -> None:
    m = results["background"]["channels"]
    for channel, floor in MIN_RECALL[split].items():
        assert m[channel]["by_split"][split]["recall@k"] >= floor, (channel, m[channel]["by_split"])


@pytest.mark.parametrize("split", SPLITS)
def test_unrelated_questions_return_nothing(results: dict[str, Any], split: str) -> None:
    m = results["background"]["channels"]
    for channel, limit in MAX_UNRELATED_RETURNED[split].items():
        assert m[channel]["by_split"][split]["unrelated_returned"] <= limit, (channel, m[channel]["by_split"])


def test_the_reported_example(tmp_path: Path) -> None:
    """Four notes in today's log and small talk on another day: each paraphrased question
    returns its note first at default settings; questions about other things return nothing."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n" + "".join(f"- {s}, part {i // 10 + 1}\n" for i, s in enumerate(SMALL_TALK * 4)))
    (ws / "memory" / "2026-11-23.md").write_text("# 2026-11-23\n\n" + "".join(f"- {n}\n" for n in ISSUE_NOTES))
    agent = indexed(ws, tmp_path / "state")
    for question, note in (("how do I get into his place if he's away", ISSUE_NOTES[0]),
                           ("when is the orthopaedic visit", ISSUE_NOTES[2]),
                           ("who is her new manager", ISSUE_NOTES[3])):
        hits = agent.memory.search(question)
        assert hits, f"no results for {question!r}"
        assert hits.mode == "hybrid"
        text = agent.memory.get(hits[0].citation).text
        assert note in text, (question, hits[0].citation, text)
    for question in ("what is the capital of Australia", "how do volcanoes form"):
        assert list(agent.memory.search(question)) == [], question
    agent.close()


ZH_NOTES = ["今天早上下雨，路上很堵", "中午吃了牛肉面", "晚上看了一部关于企鹅的电影", "邻居家的花园很漂亮",
            "周末去公园跑步", "咖啡豆快用完了，要再买一些", "火车晚点了二十分钟", "下午一直在下雨"]


def test_a_question_is_calibrated_against_its_own_language(tmp_path: Path) -> None:
    """A Chinese question about nothing in a Chinese memory returns nothing (against the
    English background, the English-only model put every Chinese note far above it), while
    English questions keep the English background under the key it always had."""
    from soulframe._engine.memory.calibration import (
        PROBE_NOTES,
        PROBE_QUESTIONS,
        Background,
        meta_key,
    )

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-11-20.md").write_text("# 2026-11-20\n\n" + "".join(f"- {n}\n" for n in ZH_NOTES),
                                                 encoding="utf-8")
    (ws / "memory" / "2026-11-23.md").write_text("# 2026-11-23\n\n" + "".join(f"- {n}\n" for n in ISSUE_NOTES))
    agent = indexed(ws, tmp_path / "state")
    try:
        assert list(agent.memory.search("量子计算机怎么工作")) == []
        assert agent.memory.search("晚上看了什么电影"), "a Chinese question about a Chinese note"
        assert agent.memory.search("when is the orthopaedic visit")
        key = str(agent.memory.model_key())
        zh = Background.from_json(agent.store.get_meta(meta_key(key, "zh")))
        en = Background.from_json(agent.store.get_meta(f"calibration:{key}"))
        assert zh is not None and en is not None and zh.mean > en.mean + 3 * en.sd
        assert PROBE_QUESTIONS[0] == "when does the bakery open on sundays" and len(PROBE_NOTES) == 20
    finally:
        agent.close()


def test_min_score_means_the_same_scale_for_every_model() -> None:
    """Two models with different cosine scales get the same calibrated score for text that
    stands equally far above each one's background."""
    from soulframe._engine.memory.calibration import Background

    mini = Background(mean=0.06, sd=0.085, pairs=380)
    big = Background(mean=0.30, sd=0.05, pairs=380)
    for z in (0.0, 1.0, 2.1, 4.0):
        assert mini.calibrate(mini.mean + z * mini.sd) == pytest.approx(big.calibrate(big.mean + z * big.sd))
    assert mini.raw_threshold(0.35) != pytest.approx(big.raw_threshold(0.35))
    assert big.calibrate(0.30) == 0.0  # "as similar as unrelated text" scores nothing


def render(results: dict[str, Any]) -> str:
    rows = ["| vector scores | channel | recall@6 (tune) | recall@6 (held) | false \"no results\" (tune) | "
            "false \"no results\" (held) | unrelated answered (tune) | unrelated answered (held) |",
            "|---|---|---|---|---|---|---|---|"]
    for name in ("raw", "background"):
        for ch in ("keyword", "vector", "hybrid"):
            by = results[name]["channels"][ch]["by_split"]
            label = "raw cosine" if name == "raw" else "calibrated (default)"
            cells = [f"{by[sp][key]:.3f}" for key in ("recall@k", "false_no_results", "unrelated_returned")
                     for sp in SPLITS]
            rows.append(f"| {label} | {ch} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def test_docs_report_the_measured_figures(results: dict[str, Any]) -> None:
    check_docs("calibration", render(results))
