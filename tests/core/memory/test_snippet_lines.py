"""The line a hit's snippet shows is the line holding the most query terms (then the most
term stems, then the earliest), whatever shortcut finds it: lines that cannot hold a term
are skipped without being split into words, and must lose exactly as before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from soulframe._engine.memory.querying import best_lines, query_terms, stem, words
from soulframe._engine.textsplit import fold_diacritics

VOCAB = ["Screenshots", "screenshot", "dark-mode", "DARK", "appearance", "appear", "lease", "Leases",
         "kayak", "the", "über", "Straße", "猫が好き", "手机", "apin0x19q", "apin0x11q", "42", "a_b", "ΑΣ"]


def reference(text: str, terms: list[str]) -> tuple[int, int]:
    """Every line split into words and scored (the rule, stated plainly): a term typed
    without accents is compared with the words with their accents dropped, one typed with
    them with the words as written (or, in a text without accents, with itself dropped)."""
    if not terms:
        return (-1, -1)
    if text.isascii():
        terms = [fold_diacritics(t) for t in terms]
    scores = []
    for line in text.split("\n"):
        ws, folded = words(line), words(fold_diacritics(line))
        seen = {True: folded, False: ws}  # by whether the term is typed without accents
        found = {t for t in terms if t in seen[t.isascii()]}
        stems = {(t.isascii(), stem(t)) for t in terms
                 if stem(t) in {stem(x) for x in seen[t.isascii()]}}
        scores.append((len(found), len(stems)))
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return (-1, -1) if scores[best] == (0, 0) else (best, best)


line = st.lists(st.sampled_from(VOCAB) | st.text(max_size=8), max_size=8).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(line, min_size=1, max_size=8),
       query=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).map(" ".join))
def test_the_best_line_is_the_one_with_most_terms(lines: list[str], query: str) -> None:
    text = "\n".join(lines)
    terms = query_terms(query)
    assert best_lines(text, terms) == reference(text, terms)


def test_a_term_typed_without_accents_finds_the_line_with_them() -> None:
    text = "nothing here\nlunch at Café Müller\nmore"
    assert best_lines(text, query_terms("muller")) == (1, 1)
    assert best_lines(text, query_terms("cafe muller")) == (1, 1)
    # typed with them, a term matches as written: "má" is not "mà"
    assert best_lines("mà ơi\nnothing", query_terms("má")) == (-1, -1)
    assert best_lines("nothing\nMuller", query_terms("Müller")) == (1, 1)


def test_a_stem_in_another_word_does_not_make_a_line_win() -> None:
    # "lease" sits inside "please" and "released": neither is a word with its stem
    text = "please call back\nthe lease was released\nnothing here"
    assert best_lines(text, query_terms("the lease")) == (1, 1)
    assert best_lines("please call back\nreleased today", query_terms("lease")) == (-1, -1)
