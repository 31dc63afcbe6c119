"""A vector hit is scored with its whole chunk as well as its best passage
(``memory.chunk_context``, soulframe._engine.memory.chunkcontext), with the real offline
model: a conversation about a thing outranks a passing remark that happens to be worded like
the question; remembered notes (list items) are scored by their own passage alone."""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path

import pytest
from recall_support import indexed

pytestmark = pytest.mark.model

# Ben's weekly hike is a whole conversation that never says "hike"; another day, a passing
# remark about a cousin is worded almost like the question
HIKE = """# 2026-03-01

Ana: Are you still doing your Sunday thing?
Ben: Every single week, rain or shine.
Ana: Which trail this time?
Ben: The ridge loop above the reservoir, about fourteen kilometres.
Ana: Take poles, it gets muddy near the summit.
Ben: Boots and poles are already by the door.
"""
REMARK = """# 2026-03-02

Ana: How was work?
Ben: Long. I mostly answered emails.
Ana: Did you eat?
Ben: Just toast, I'll cook later.
Ana: My cousin does mountain walks every single week, rain or shine.
Ben: Ha, good for her.
"""
SMALL_TALK = """# 2026-03-03

Ben: Any plans for the weekend?
Ana: Groceries and laundry, exciting stuff.
Ben: We could go to the market on Saturday.
Ana: Sure, if it doesn't rain.
"""
QUESTIONS = ("How often does Ben go hiking?", "How often does Ben go for a hike?")


def _workspace(root: Path) -> Path:
    (root / "memory").mkdir(parents=True)
    for day, text in (("2026-03-01", HIKE), ("2026-03-02", REMARK), ("2026-03-03", SMALL_TALK)):
        (root / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_conversation_about_it_outranks_a_remark_worded_like_the_question(
    tmp_path: Path, question: str
) -> None:
    ws = _workspace(tmp_path / "ws")
    tops = {}
    for weight in (None, 0):  # the default, then the best passage alone
        overrides = {} if weight is None else {"memory.chunk_context": weight}
        agent = indexed(ws, tmp_path / "state", **overrides)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hits = agent.memory.search(question)
        agent.close()
        tops[weight] = hits[0].path if hits else None
    assert tops[None] == "memory/2026-03-01.md", tops
    # what the default changes: scored by its best passage alone, the remark wins
    assert tops[0] == "memory/2026-03-02.md", tops


def test_remembered_notes_are_scored_by_their_own_passage(tmp_path: Path) -> None:
    """A day's remembered notes (list items) score exactly as without the chunk's context:
    averaged with the other notes of the day, a paraphrase of one would lose it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    scores = {}
    for weight in (None, 0):
        overrides = {} if weight is None else {"memory.chunk_context": weight}
        agent = indexed(ws, tmp_path / f"state-{weight}", **overrides)
        if weight is None:
            day = dt.datetime(2026, 10, 7, 9, 0)
            for i, note in enumerate(("Flight to Lisbon departs 14 March at 07:40 from Gatwick",
                                      "Watered the plants on the balcony",
                                      "Lent the ladder to Tom next door, he will return it Sunday")):
                agent.memory.append_daily(note, when=day + dt.timedelta(minutes=i))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hits = agent.memory.search("when is the trip to Portugal", channels="vector", min_score=0)
        agent.close()
        scores[weight] = [(h.path, round(h.score, 6)) for h in hits]
    assert scores[None] and scores[None] == scores[0]
