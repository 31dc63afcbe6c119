"""Memory search in Chinese, Japanese, Korean and Vietnamese (English as the control), on
tests/data/multilingual_eval: substring and short-word questions with no model at all,
paraphrases with the multilingual model; per language and per channel, on the tuning half
and the held-apart half. The figures in docs/memory.md ("Memory in other languages") are
generated here."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from recall_support import check_docs, regenerates_identically
from soulframe.agent import Agent
from soulframe.config import load_config
from soulframe.memory.evaluation import evaluate, load_golden

DATA = Path(__file__).parent / "data" / "multilingual_eval"
LANGS = ("zh", "ja", "ko", "vi", "en")
K = 5


def golden() -> list[dict[str, Any]]:
    return load_golden(DATA / "golden.jsonl")


def test_the_set_is_well_formed() -> None:
    """Ten facts a language, five in each half, three questions each; a substring or short
    question is copied from its note, and every note is in the log the golden names."""
    qs = golden()
    assert len({q["id"] for q in qs}) == len(qs) == 150
    for lang in LANGS:
        mine = [q for q in qs if q["lang"] == lang]
        assert len(mine) == 30
        for split in ("tune", "held"):
            assert sum(q["split"] == split for q in mine) == 15
    for q in qs:
        note = q["relevant"][0]["contains"]
        assert note in (DATA / "workspace" / q["relevant"][0]["path"]).read_text(encoding="utf-8")
        if q["kind"] != "paraphrase":
            assert q["query"] in note, q["id"]


def test_the_generator_is_deterministic(tmp_path: Path) -> None:
    assert regenerates_identically(DATA, tmp_path)


def _agent(state: Path, provider: str) -> Agent:
    config = load_config(search=False, workspace=DATA / "workspace",
                         overrides={"state_dir": str(state), "embedding.provider": provider})
    agent = Agent(config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.sync()
    return agent


def _by_language(agent: Agent, channels: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    qs = golden()
    return {lang: evaluate(agent.memory, [q for q in qs if q["lang"] == lang], k=K, channels=channels)
            for lang in LANGS}


def _recall(result: dict[str, Any], channel: str, kinds: tuple[str, ...], split: str | None = None) -> float:
    rows = [r for r in result["per_query"] if r["kind"] in kinds
            and (split is None or r["id"] in _split_ids(split))]
    return sum(1 for r in rows if r.get(channel) is not None) / len(rows)


def _split_ids(split: str) -> set[str]:
    return {q["id"] for q in golden() if q["split"] == split}


@pytest.fixture(scope="module")
def keyword_only(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    agent = _agent(tmp_path_factory.mktemp("ml-none"), "none")
    try:
        return _by_language(agent, ("keyword",))
    finally:
        agent.close()


def test_substring_and_short_words_are_found_in_every_language_without_a_model(
        keyword_only: dict[str, dict[str, Any]]) -> None:
    """recall@5 >= 0.95 overall and >= 0.9 per language, default settings, no model (a
    whole-sentence tokenizer found none of the Chinese or Japanese short words)."""
    per = {lang: _recall(keyword_only[lang], "keyword", ("substring", "short")) for lang in LANGS}
    overall = sum(per.values()) / len(per)
    assert overall >= 0.95, per
    assert all(v >= 0.9 for v in per.values()), per
    for split in ("tune", "held"):  # the half never looked at holds too
        assert all(_recall(keyword_only[lang], "keyword", ("substring", "short"), split) >= 0.9
                   for lang in LANGS)


def _multilingual_available() -> str | None:
    from soulframe_embeddings.multilingual import locate

    engine = locate()
    return None if engine.found else engine.problem


@pytest.fixture(scope="module")
def with_model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    problem = _multilingual_available()
    if problem:
        pytest.skip(f"the multilingual model is not installed here: {problem}")
    agent = _agent(tmp_path_factory.mktemp("ml-e5"), "multilingual")
    try:
        assert agent.memory.embedder is not None and agent.memory.embedder.name == "multilingual"
        return _by_language(agent, ("keyword", "vector", "hybrid"))
    finally:
        agent.close()


def test_paraphrases_are_found_with_the_multilingual_model(with_model: dict[str, dict[str, Any]]) -> None:
    """recall@5 >= 0.7 on the held-apart half's paraphrases (the multilingual model, hybrid
    search at default settings), and no worse on substrings and short words than keyword
    search alone."""
    held = [_recall(with_model[lang], "hybrid", ("paraphrase",), "held") for lang in LANGS]
    assert sum(held) / len(held) >= 0.7, held
    for lang in LANGS:
        assert _recall(with_model[lang], "hybrid", ("substring", "short")) >= 0.9, lang


def _table(keyword_only: dict[str, dict[str, Any]], with_model: dict[str, dict[str, Any]]) -> str:
    rows = ["| language | question | keyword, no model | vector (multilingual) | hybrid (multilingual) "
            "| hybrid, held half |", "|---|---|---|---|---|---|"]
    for lang in LANGS:
        for kind in ("substring", "short", "paraphrase"):
            rows.append(
                f"| {lang} | {kind} | {_recall(keyword_only[lang], 'keyword', (kind,)):.2f} "
                f"| {_recall(with_model[lang], 'vector', (kind,)):.2f} "
                f"| {_recall(with_model[lang], 'hybrid', (kind,)):.2f} "
                f"| {_recall(with_model[lang], 'hybrid', (kind,), 'held'):.2f} |")
    return "\n".join(rows) + "\n"


def test_docs_report_the_measured_figures(keyword_only: dict[str, dict[str, Any]],
                                          with_model: dict[str, dict[str, Any]]) -> None:
    check_docs("multilingual-eval", _table(keyword_only, with_model))


#: questions about things the logs never mention, one set per language
UNRELATED = {
    "zh": ["水的沸点是多少度", "谁写了红楼梦", "怎么配置防火墙"],
    "ja": ["富士山の高さは何メートル", "量子コンピュータの仕組み", "源氏物語の作者は誰"],
    "ko": ["지구에서 달까지 거리는", "조선 왕조는 언제 시작했나", "파이썬으로 정렬하는 방법"],
    "vi": ["thủ đô của nước Úc là gì", "ai phát minh ra điện thoại", "cách giải phương trình bậc hai"],
    "en": ["what is the boiling point of mercury", "who wrote Pride and Prejudice",
           "how do I compile a Rust program"],
}


@pytest.mark.skip(reason="not done: the calibration probes (soulframe.memory.calibration) are English, "
                         "and multilingual-e5's background is higher in other languages: 10 of these 15 "
                         "unrelated questions (all Chinese and Vietnamese ones) still return notes at the "
                         "default min_score (docs/embeddings.md)")
def test_unrelated_questions_in_every_language_return_nothing_with_the_multilingual_model(
        tmp_path: Path) -> None:
    problem = _multilingual_available()
    if problem:
        pytest.skip(problem)
    agent = _agent(tmp_path, "multilingual")
    try:
        returned = {q: len(agent.memory.search(q, K, sync=False, track=False))
                    for qs in UNRELATED.values() for q in qs}
    finally:
        agent.close()
    assert sum(1 for n in returned.values() if n) <= 1, returned
