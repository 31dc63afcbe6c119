"""How much of a question a chunk holds (fusion's term coverage): the shortcuts taken for
ASCII text and for text without Chinese, Japanese, Korean or Thai give exactly what the rule
stated on the text's words gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from soulframe._engine.memory.fusion import found_in_words, term_coverage
from soulframe._engine.memory.querying import query_terms

VOCAB = ["Screenshots", "screenshot", "dark-mode", "DARK", "über", "Über", "Straße", "strasse",
         "Müller", "Muller", "e\u0301te", "été", "ΑΣ", "ας", "İstanbul", "istanbul", "Ǆemal",
         "—", "…", "a_b", "42", "x42y", "naïve", "Ωmega", "猫が好き", "ok", "kayak"]

text = st.lists(st.sampled_from(VOCAB) | st.text(max_size=6), max_size=12).map(" ".join)
query = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(text=text, query=query)
def test_the_shortcuts_count_exactly_what_the_words_hold(text: str, query: str) -> None:
    terms = tuple(query_terms(query))
    if not terms:
        return
    from soulframe._engine.memory.fusion import _found

    assert _found(text, terms) == found_in_words(text, terms)
    assert 0.0 <= term_coverage(text, list(terms)) <= 1.0


def test_a_note_with_a_dash_counts_its_words() -> None:
    note = "Flight to Lisbon — departs 14 March at 07:40 from Gatwick"
    assert term_coverage(note, query_terms("when does the Lisbon flight depart")) == 1.0
    assert term_coverage(note, query_terms("Lisbon hotel")) == 0.5
    assert term_coverage("Café Müller — Tuesday", query_terms("muller")) == 1.0
