"""The vector channel embeds a question with and without the names most chunks hold
(``memory.query_focus``, :mod:`soulframe._engine.memory.focus`): in a chat with Kate, "What
countries has Kate visited?" must find the turns about countries, not every turn that says
"Kate". With the real offline model, real SQLite and real files."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from recall_support import indexed
from soulframe import CommonWords, Session
from soulframe._engine.memory.focus import MIN_CHUNKS, question_names, without_common_names

SMALL_TALK = [
    "Elise: Morning Kate! How did you sleep?", "Kate: Not bad, a bit tired though.",
    "Elise: What about you, Kate, any plans tonight?", "Kate: Probably just a quiet evening.",
    "Elise: Haha, classic Kate.", "Kate: I know, I know.", "Elise: Talk later Kate!",
    "Kate: Work was busy again today.", "Elise: Same here, it never stops.",
    "Elise: Kate, did you see the game last night?", "Kate: No, I fell asleep early.",
    "Elise: Kate you have to try that new bakery.", "Kate: Maybe this weekend.",
    "Elise: Good night Kate.", "Kate: Night!",
]
MEXICO = "Kate: Last spring I finally made it to Mexico and spent a week in Cancun."
BALI = "Kate: Bali was the most beautiful place I have ever been to."


def chat(root: Path, days: int = 40) -> Path:
    """``days`` daily logs of a chat between Kate and Elise: "Kate" in every one, two turns
    about places Kate has been."""
    rng = random.Random(3)
    mem = root / "memory"
    mem.mkdir(parents=True)
    for d in range(days):
        lines = rng.sample(SMALL_TALK, 9)
        if d == 11:
            lines.insert(4, MEXICO)
        if d == 26:
            lines.insert(3, BALI)
        (mem / f"2026-{3 + d // 28:02d}-{1 + d % 28:02d}.md").write_text(
            f"# Day {d + 1}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return chat(tmp_path_factory.mktemp("focus") / "ws")


def texts(agent: Any, hits: Any) -> list[str]:
    return [agent.memory.get(h.path, h.start_line, h.end_line - h.start_line + 1).text for h in hits]


@pytest.mark.model
def test_a_name_every_chunk_holds_no_longer_buries_the_answer(workspace: Path, tmp_path: Path) -> None:
    """At the default the two turns about places are the top two hits; with the question
    embedded as asked (``memory.query_focus = 0``), turns that merely say "Kate" outrank
    the one about Mexico."""
    for question in ("What countries has Kate visited?", "Which places has Kate travelled to?"):
        agent = indexed(workspace, tmp_path / "on")
        results = agent.memory.search(question, 6, track=False)
        top = texts(agent, results[:2])
        agent.close()
        assert results.focused == question.replace(" Kate", "")  # said, for whoever wonders why
        assert any(MEXICO in t for t in top) and any(BALI in t for t in top), (question, top)
        agent = indexed(workspace, tmp_path / "off", **{"memory.query_focus": 0})
        results = agent.memory.search(question, 6, track=False)
        top = texts(agent, results[:2])
        agent.close()
        assert not any(MEXICO in t for t in top), (question, top)
        assert results.focused is None


@pytest.mark.model
def test_small_talk_that_says_the_name_no_longer_scores_like_an_answer(workspace: Path, tmp_path: Path) -> None:
    """Nothing here is about rugby: asked as is, every turn that says "Kate" scores like a
    match (above 0.6); with the focus no hit reaches 0.5."""
    question = "What is Kate's favourite rugby team?"
    agent = indexed(workspace, tmp_path / "on")
    focused = agent.memory.search(question, 6, track=False)
    agent.close()
    agent = indexed(workspace, tmp_path / "off", **{"memory.query_focus": 0})
    asked = agent.memory.search(question, 6, track=False)
    agent.close()
    assert all(h.score < 0.5 for h in focused), [h.score for h in focused]
    assert len(asked) == 6 and all(h.score > 0.6 for h in asked), [h.score for h in asked]


@pytest.mark.model
def test_the_mix_keeps_scores_between_the_two_questions(workspace: Path, tmp_path: Path) -> None:
    """The two vectors are mixed without normalising again: a chunk's vector score is the
    mix of its cosines with the question as asked and without the name (0.4 / 0.6), never
    more — normalised, the mix of two close vectors raises every cosine, and unrelated
    questions pass ``min_score``. A chunk scores by its best passage, so the mix of the two
    best passages' cosines is an upper bound, reached where one passage is best for both.
    Raw cosines, no chunk context: the bare channel."""
    question = "Which places has Kate travelled to?"
    raw = {"memory.calibration": "raw", "memory.chunk_context": 0, "memory.min_score": 0}
    scores = {}
    for name, weight in (("mixed", 0.6), ("asked", 0.0), ("focused", 1.0)):
        agent = indexed(workspace, tmp_path / name, **raw, **{"memory.query_focus": weight})
        hits = agent.memory.search(question, 40, channels="vector", track=False)
        scores[name] = {(h.path, h.start_line): h.vector_score for h in hits}
        agent.close()
    assert len(scores["mixed"]) >= 30
    reached = 0
    for key, s in scores["mixed"].items():
        bound = 0.4 * scores["asked"][key] + 0.6 * scores["focused"][key]
        assert s <= bound + 1e-5, (key, s, bound)
        reached += s >= bound - 1e-5
    assert reached >= len(scores["mixed"]) // 2, reached


@pytest.mark.model
def test_a_rare_name_keeps_the_question_as_asked(workspace: Path, tmp_path: Path) -> None:
    """"Cancun" is in one chunk of forty: the question is embedded as asked, so the
    results are exactly those with the focus off."""
    rare = "Was the week in Cancun worth it?"
    agent = indexed(workspace, tmp_path / "a")
    on = [(h.path, h.score) for h in agent.memory.search(rare, 6, track=False)]
    agent.close()
    agent = indexed(workspace, tmp_path / "b", **{"memory.query_focus": 0})
    off = [(h.path, h.score) for h in agent.memory.search(rare, 6, track=False)]
    agent.close()
    assert on == off


def test_names_are_capitalised_words_inside_a_sentence() -> None:
    assert question_names("What countries has Kate visited?") == ["kate"]
    assert question_names("Did Fahim like 2666 by Roberto Bolaño? Did Akib?") == ["fahim", "roberto", "bolaño", "akib"]
    assert question_names("Kate? What did I tell Elise's brother") == ["elise"]  # first words, "I"
    assert question_names("what did kate say") == []  # typed in lower case: embedded as asked
    assert question_names("小明去了哪些国家？") == []  # no capitals: embedded as asked
    assert question_names("¿Qué países visitó Ana?") == ["ana"]


def test_without_common_names_drops_the_name_and_its_possessive() -> None:
    common = CommonWords(40, frozenset({"kate", "elise"}))
    assert without_common_names("What are Kate's hobbies, and does Elise share them?", common) == \
        "What are hobbies, and does share them?"
    assert without_common_names("Where is Daniel's new home?", common) is None  # not common
    assert without_common_names("Elise?", CommonWords(40, frozenset({"elise"}))) is None  # nothing left
    few = CommonWords(MIN_CHUNKS - 1, frozenset({"kate"}))
    assert without_common_names("What has Kate visited?", few) is None  # too few chunks to tell


@pytest.mark.model
def test_only_the_chunks_a_session_sees_are_counted(workspace: Path, tmp_path: Path) -> None:
    """The owner's main session counts private files too; a group chat, and a private chat
    with someone other than the owner, count public chunks only (the store's own
    visibility rules: StoreContract.test_common_words_count_only_the_chunks_a_search_sees)."""
    agent = indexed(workspace, tmp_path / "s")
    store = agent.memory.store
    asked: list[tuple[bool, Any]] = []
    real = store.common_words

    def recording(words: Any, share: float, *, include_private: bool, scope: Any = None) -> Any:
        asked.append((include_private, scope))
        return real(words, share, include_private=include_private, scope=scope)

    store.common_words = recording
    try:
        agent.memory.search("What countries has Kate visited?", 6, Session.main(), track=False)
        agent.memory.search("What countries has Kate visited?", 6, Session.group(channel="g1"), track=False)
        agent.memory.search("What countries has Kate visited?", 6, Session.main(user_id="stranger"),
                            track=False)
    finally:
        del store.common_words
        agent.close()
    assert asked == [(True, None), (False, None), (False, "stranger")], asked


@pytest.mark.model
def test_memory_search_json_says_what_the_vector_channel_also_embedded(workspace: Path, tmp_path: Path) -> None:
    """``soulframe memory search --json``: every row carries ``focused``, the question as
    the vector channel also embedded it (null when it embedded the question as asked)."""
    import json
    import shutil

    from soulframe.testing import make_agent

    ws = tmp_path / "ws"
    agent = make_agent(ws)
    agent.close()
    for f in (workspace / "memory").iterdir():
        shutil.copy(f, ws / "memory" / f.name)
    from click.testing import CliRunner
    from soulframe.cli import build_cli

    runner = CliRunner()
    out = runner.invoke(build_cli(), ["-w", str(ws), "memory", "search", "What countries has Kate visited?", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert rows and {r["focused"] for r in rows} == {"What countries has visited?"}
    assert any(MEXICO in r["snippet"] or "Mexico" in r["snippet"] for r in rows[:2]), rows[:2]
