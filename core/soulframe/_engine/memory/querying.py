"""Turning a natural-language question into keyword terms, and finding where in a chunk
those terms are (for snippets).

A question such as "what did we decide about the lease?" must not become an AND of every
word (no chunk contains "what", "did" and "we" next to "lease"). Terms are the words of the
query, lower-cased, with English stopwords and one-letter words dropped; the store matches
chunks containing ANY of them and BM25 ranks chunks with more (and rarer) terms higher.
Chinese, Japanese, Korean and Thai runs become character pairs (:mod:`soulframe._engine.textsplit`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ..graphemes import safe_cut_after, safe_cut_before
from ..textsplit import (
    emoji,
    emoji_shown,
    fold_diacritics,
    has_unspaced,
    query_words,
    search_spelling,
    spelt_otherwise,
    stem,
    text_words,
)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS: frozenset[str] = frozenset("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can cannot could couldn't did didn't do does doesn't doing don't
down during each few for from further had hadn't has hasn't have haven't having he her here hers
herself him himself his how i if in into is isn't it its itself just let me more most mustn't my
myself no nor not of off on once only or other ought our ours ourselves out over own same she
should shouldn't so some such than that the their theirs them themselves then there these they
this those through to too under until up very was wasn't we were weren't what when where which
while who whom why will with won't would wouldn't you your yours yourself yourselves
s t d ll m re ve also ever get got say said tell told know knew remember recall anything
something thing things much many please ok okay yes yeah hey hi
talk talked talking mention mentioned mentions share shared speak spoke
""".split())


def words(text: str) -> list[str]:
    """Lower-cased words (letters and digits; punctuation and ``_`` split words, as FTS5's
    ``unicode61`` tokenizer does); a run of Chinese, Japanese, Korean or Thai also gives its
    character pairs and characters (:func:`soulframe._engine.textsplit.text_words`)."""
    return text_words(text)


def query_terms(query: str) -> list[str]:
    """The keyword terms of a query: its words minus stopwords and one-letter words, in
    order, then its emoji (👍🏽 as 👍, :func:`~soulframe._engine.textsplit.emoji`), without
    repeats. A query made only of stopwords keeps its words (so searching for "who" still
    finds "who")."""
    nfc = unicodedata.normalize("NFC", query)  # as the index holds text
    all_words = query_words(nfc)
    # one character of Chinese or Japanese is a word (猫, 雨); one Latin letter is not
    terms = [w for w in all_words
             if w not in STOPWORDS and (len(w) > 1 or w.isdigit() or has_unspaced(w))]
    pictures = emoji(nfc)
    if not terms and not pictures:
        terms = [w for w in all_words if w]
    terms += pictures
    seen: set[str] = set()
    out = []
    for t in terms:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def best_lines(text: str, terms: list[str]) -> tuple[int, int]:
    """The 0-based line range of ``text`` that holds the most query terms: the best line,
    widened to a neighbour when that adds terms. ``(-1, -1)`` when no term occurs."""
    if not terms:
        return (-1, -1)
    if spelt_otherwise(text) or any(spelt_otherwise(t) for t in terms):
        # as fusion._coverage: the plain spelling of Greek, Arabic, ß ... (it keeps every
        # line break), else the words as written
        spelt = _best_lines(search_spelling(text), [search_spelling(t) for t in terms])
        return spelt if spelt != (-1, -1) else _best_lines(text, terms)
    return _best_lines(text, terms)


def _best_lines(text: str, terms: list[str]) -> tuple[int, int]:
    if text.isascii():
        terms = [fold_diacritics(t) for t in terms]  # "Müller" asked, "Muller" written
    # as fusion._coverage counts them: a term typed without accents matches the words with
    # their accents dropped ("Muller" is "Müller"), one typed with them the words as written
    plain = {t for t in terms if t.isascii()}
    pictures = {t for t in terms if not t.isascii() and emoji(t) == [t]}
    marked = {t for t in terms if not t.isascii()} - pictures
    plain_stems = {stem(t) for t in plain}
    marked_stems = {stem(t) for t in marked}
    lines = text.split("\n")
    scores = []
    for line in lines:
        # every word a term or a term's stem matches holds that stem as it stands in the
        # lower-cased line; an ASCII line holding none scores nothing (most lines of a hit
        # do not: splitting each into words was most of a search's snippet work)
        if line.isascii():
            lower = line.lower()
            if not any(s in lower for s in plain_stems):
                scores.append((0, 0))
                continue
        # the query's own words first: a stem only stands in for a missing word ("apin0x19q"
        # and "apin0x11q" share the stem "apin0", but only one of them was asked for)
        exact, stems = _line_score(line, plain, marked, plain_stems, marked_stems)
        if pictures:  # an emoji is no word: it counts where the line shows it
            exact += len(pictures.intersection(emoji_shown(line)))
        scores.append((exact, stems))
    best = max(range(len(lines)), key=lambda i: (scores[i], -i)) if lines else -1
    if best < 0 or scores[best] == (0, 0):
        return (-1, -1)
    return (best, best)


def _line_score(
    line: str, plain: set[str], marked: set[str], plain_stems: set[str], marked_stems: set[str],
) -> tuple[int, int]:
    """(terms, term stems) among the words of ``line``: plain terms against its words with
    accents dropped, marked terms against its words as written."""
    ws = set(words(line))
    folded = set(words(fold_diacritics(line))) if plain and not line.isascii() else ws
    exact = len(folded & plain) + (len(ws & marked) if marked else 0)
    stems = len({stem(w) for w in folded} & plain_stems)
    if marked:
        stems += len({stem(w) for w in ws} & marked_stems)
    return (exact, stems)


def snippet(
    text: str, terms: list[str], max_chars: int = 320, focus: int | None = None,
    prefer_focus: bool = False,
) -> tuple[str, int]:
    """A passage of ``text`` centred on where the terms are, at most ``max_chars`` long.

    Returns the snippet and the 0-based offset of its first line within ``text``. Without a
    term match, the snippet starts at line ``focus`` (0-based: where the vector channel
    found the closest passage), else at the first line that is not a heading (not the
    chunk's first line, which is often a ``#`` title). With ``prefer_focus`` the line
    ``focus`` wins over the term match (the caller weighed both channels already).
    """
    lines = text.split("\n")
    if prefer_focus and focus is not None and 0 <= focus < len(lines):
        first = focus  # the caller weighed the term match already: no need to find it again
    else:
        first, _ = best_lines(text, terms)
        if first < 0 and focus is not None and 0 <= focus < len(lines):
            first = focus
    if first < 0:
        first = next(
            (i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), 0
        )
    size = len(lines[first])
    lo, hi = first, first
    # one line of context before the match (often the bullet's lead-in), then the rest of
    # the paragraph after it, as far as max_chars allows
    # (not when the match is a list item of its own: the item before is another entry)
    if lo - 1 >= 0 and lines[lo - 1].strip() and not lines[lo - 1].lstrip().startswith("#") \
            and not lines[lo].lstrip().startswith(("- ", "* ", "+ ")) \
            and size + len(lines[lo - 1]) + 1 <= max_chars // 2:
        lo -= 1
        size += len(lines[lo]) + 1
    while hi + 1 < len(lines) and lines[hi + 1].strip() and size + len(lines[hi + 1]) + 1 <= max_chars:
        hi += 1
        size += len(lines[hi]) + 1
    body = "\n".join(lines[lo : hi + 1]).strip()
    if len(body) > max_chars:
        # one long line: centre the window on the first matching word
        stems = {stem(t) for t in terms}
        lower = body.lower()
        pos = _word_position(lower, lambda w: w in terms)
        if pos < 0:  # a character pair of an unspaced script sits inside a longer run, an emoji anywhere
            pos = min((lower.find(t) for t in terms if (has_unspaced(t) or emoji(t) == [t]) and t in lower),
                      default=-1)
        if pos < 0:
            pos = _word_position(lower, lambda w: stem(w) in stems)
        pos = max(pos, 0)
        # a cut never leaves a combining mark, a joined emoji's part or a skin tone alone
        start = safe_cut_after(body, max(0, min(pos - max_chars // 3, len(body) - max_chars)))
        end = safe_cut_before(body, min(len(body), start + max_chars))
        body = ("…" if start else "") + body[start:end].strip() + ("…" if end < len(body) else "")
    return body, lo


def _word_position(lower: str, matches: Callable[[str], bool]) -> int:
    """Where in ``lower`` the first whole word for which ``matches`` holds starts, or -1."""
    for m in _WORD.finditer(lower):
        if matches(m.group(0)):
            return m.start()
    return -1
