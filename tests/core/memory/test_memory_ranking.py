"""What a user sees of a ranking, with the real offline model: the snippet shows the
passage that matched; a remembered note is found on its own among twenty of the same day;
scores keep their spread (none above 1, no ties at the top); words only in a heading are
found by meaning too."""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path
from typing import Any

import pytest
from recall_support import indexed

pytestmark = pytest.mark.model

NOTES = [
    ("Flight to Lisbon departs 14 March at 07:40 from Gatwick", "when is the trip to Portugal"),
    ("The plumber is coming on Friday morning to fix the leaking boiler", "who is repairing the heating"),
    ("Mum's birthday dinner is booked at Rosa's trattoria for eight people", "where are we celebrating my mother"),
    ("Renewed the car insurance with Admiral, 412 pounds a year", "how much does covering the vehicle cost"),
    ("Lily's school play is on the 3rd, she plays the wolf", "what role does my daughter have on stage"),
    ("Switched the broadband to a fibre plan, 900 megabits", "how fast is the internet now"),
    ("Dr Okafor moved the knee appointment to 3 December", "when is the orthopaedic visit"),
    ("Lent the ladder to Tom next door, he will return it Sunday", "who has borrowed our steps"),
    ("Paid the council tax for the whole year in one go", "did we settle the local authority bill"),
    ("Started learning Portuguese on Tuesday evenings at the library", "which language course am I taking"),
]
FILLER = [
    "Chatted about chess and coffee; nothing to remember",
    "Watered the plants on the balcony",
    "Tidied the garage shelves a little",
    "Listened to a podcast about bread",
    "Walked around the park before lunch",
    "Made soup with the leftover vegetables",
    "Sorted the recycling into the new bins",
    "Read a few pages of a crime novel",
    "Tried a new route for the evening run",
    "Cleaned the windows in the front room",
]


def _quiet() -> Any:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


@pytest.mark.parametrize("order", ["mixed", "notes first"])
def test_twenty_notes_of_one_day_each_found_by_a_paraphrase(tmp_path: Path, order: str) -> None:
    """`memory remember` twenty times in a day, then ask in other words: each note is in
    the top 3, its text in the snippet, at the default min_score. With the notes first,
    "when is the trip to Portugal" showed "Started learning Portuguese": the line shared a
    five-letter stem with the question, which the keyword channel had not matched at all."""
    ws = tmp_path / "ws"
    ws.mkdir()
    agent = indexed(ws, tmp_path / "state")
    day = dt.datetime(2026, 10, 7, 9, 0)
    if order == "mixed":
        notes = [n for pair in zip(FILLER, (n for n, _ in NOTES), strict=True) for n in pair]
    else:
        notes = [n for n, _ in NOTES] + FILLER
    for i, note in enumerate(notes):
        agent.memory.append_daily(note, when=day + dt.timedelta(minutes=i))
    ctx = _quiet()
    misses = []
    for note, question in NOTES:
        hits = agent.memory.search(question)
        top = [h.snippet for h in hits[:3]]
        if not any(note in s for s in top):
            misses.append((question, top))
    ctx.__exit__(None, None, None)
    agent.close()
    assert not misses, misses


def test_the_snippet_shows_the_passage_that_matched(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    lines = [f"- {FILLER[0]}, note {i}." for i in range(190, 196)]
    lines.insert(3, f"- {NOTES[0][0]}")
    (ws / "memory" / "2026-10-07.md").write_text("# 2026-10-07\n\n" + "\n".join(lines) + "\n")
    agent = indexed(ws, tmp_path / "state")
    ctx = _quiet()
    hits = agent.memory.search("when is the trip to Portugal")
    ctx.__exit__(None, None, None)
    agent.close()
    assert hits and hits[0].snippet.startswith(f"- {NOTES[0][0]}"), hits[0].snippet


def test_scores_keep_their_spread(tmp_path: Path) -> None:
    """Near-identical notes on many days: every score under 1, no two hits tied, the
    closest first; ties between equal scores go to the newer log."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    variants = ["Flight to Lisbon departs 14 March at 07:40 from Gatwick",
                "Flight to Lisbon leaves 14 March at 07:40 from Gatwick airport",
                "Our flight to Lisbon departs on 14 March, 07:40, Gatwick",
                "The Lisbon flight departs 14 March 07:40 from Gatwick",
                "Flight to Lisbon on 14 March at 07:40, from Gatwick North",
                "Booked: flight to Lisbon, departs 14 March 07:40 from Gatwick",
                "Flight to Lisbon departs 14 March at 07:40 from London Gatwick"]
    for i, v in enumerate(variants):
        (ws / "memory" / f"2026-10-{i + 1:02d}.md").write_text(f"# 2026-10-{i + 1:02d}\n\n- {v}\n")
    (ws / "memory" / "2026-10-20.md").write_text(f"# 2026-10-20\n\n- {variants[0]}\n")
    agent = indexed(ws, tmp_path / "state")
    ctx = _quiet()
    hits = agent.memory.search("flight to Lisbon departs 14 March at 07:40 from Gatwick", k=8)
    ctx.__exit__(None, None, None)
    agent.close()
    scores = [h.score for h in hits]
    assert len(hits) == 8
    assert all(0 < s < 1 for s in scores), scores
    assert scores == sorted(scores, reverse=True)
    # the two identical notes tie, and the newer log comes first
    paths = [h.path for h in hits]
    a, b = paths.index("memory/2026-10-20.md"), paths.index("memory/2026-10-01.md")
    assert hits[a].score == hits[b].score and b == a + 1, [(h.path, h.score) for h in hits]
    assert len(set(scores)) >= 6, scores


def test_the_user_boost_never_lifts_a_score_above_1() -> None:
    from soulframe._engine.memory.fusion import boost

    assert boost(0.999, 1.2) < 1.0
    assert boost(0.5, 1.2) > 0.5 and boost(0.0, 1.2) == 0.0
    assert boost(0.4, 1.2) < boost(0.5, 1.2)


def test_words_only_in_a_heading_are_found_by_meaning(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory" / "projects").mkdir(parents=True)
    (ws / "memory" / "projects" / "q3.md").write_text(
        "# Projects\n\n## Quarterly budget review\n\nAlice sends the figures by Monday.\n"
        "Bob checks them against last year.\n\n## Garden\n\nPlant the tulip bulbs.\n")
    agent = indexed(ws, tmp_path / "state")
    ctx = _quiet()
    hits = agent.memory.search("quarterly budget review", channels="vector")
    ctx.__exit__(None, None, None)
    agent.close()
    assert hits and hits[0].vector_score is not None and hits[0].vector_score >= 0.35
    assert "Alice sends the figures" in hits[0].snippet


#: days whose words match "Which pet did Maya adopt?" in other senses (a pet peeve, adopting
#: a plan): the keyword channel fills every place with them
WORD_MATCHES = [
    "My pet peeve is people who adopt a new plan every week.",
    "Did the team adopt the budget? My pet project depends on it.",
    "The council will adopt the new parking rules, my pet topic.",
    "We may adopt the four-day week; that's my pet idea.",
    "They voted to adopt the proposal, a pet cause of mine.",
    "My pet theory: the school will adopt uniforms soon.",
    "Will the club adopt my pet suggestion about the logo?",
    "The board did adopt the plan, my pet hate is the delay.",
    "Adopt a calmer tone, said my boss; my pet word is 'fine'.",
    "The city should adopt cycle lanes, it's my pet campaign.",
    "My pet subject at school was history; we adopt a new text.",
    "Will parliament adopt the pet tax? Doubt it.",
]


def _pet_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    for d, line in enumerate(WORD_MATCHES, 1):
        (ws / "memory" / f"2026-03-{d:02d}.md").write_text(
            f"# 2026-03-{d:02d}\n\nOmar: How was your day?\nMaya: {line}\n")
    (ws / "memory" / "2026-03-20.md").write_text(
        "# 2026-03-20\n\nOmar: How was your day?\nMaya: We brought home a beagle puppy from the shelter!\n")
    return ws


def test_the_best_answer_by_meaning_is_shown_among_days_that_only_share_the_words(tmp_path: Path) -> None:
    """Twelve days say "pet" and "adopt" in other senses; the day Maya brought the puppy
    home says neither. By fused score alone all six places went to the word matches; two of
    them are kept for the vector channel's best candidates (memory.vector_share)."""
    ws = _pet_workspace(tmp_path)
    question = "Which pet did Maya adopt?"
    agent = indexed(ws, tmp_path / "state")
    by_score = indexed(ws, tmp_path / "state-by-score", **{"memory.vector_share": 0.0})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hits = agent.memory.search(question)
            alone = by_score.memory.search(question)
        assert "memory/2026-03-20.md" in [h.path for h in hits]
        assert "beagle puppy" in next(h.snippet for h in hits if h.path == "memory/2026-03-20.md")
        assert "memory/2026-03-20.md" not in [h.path for h in alone]  # what the places change
        assert len(hits) == 6 and [h.score for h in hits[:4]] == sorted((h.score for h in hits[:4]), reverse=True)
    finally:
        agent.close()
        by_score.close()
