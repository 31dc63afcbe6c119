"""Keyword matching that ignores case and accents in every script, whatever the server's locale.

PostgreSQL's ``'simple'`` configuration lower-cases a word with the database's ctype. Under
the ``C`` locale (``soulframe db start``, and many hosted servers) that is ASCII letters
only: "Übermäßig", "Ärger" and "Москва" keep their capitals, so a search for "übermäßig"
or "москва" missed them. No configuration drops accents either, while SQLite's
``unicode61`` does ("Muller" finds "Müller"), and so do the core's snippets and term
coverage (:func:`soulframe.kit.fold_diacritics`). So the folding is done here, in Python,
the same way on both sides: each written word whose folded form (lower-cased, accents
dropped) is not the lexeme the server makes of it is added to the chunk's ``grams``, and
each query term is folded before it is matched. ASCII words are left to the server, which
lower-cases them in every locale.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from soulframe.kit import MARKS, fold_diacritics

#: the words :func:`soulframe.kit.raw_words` finds, as written (it lower-cases them)
_WORD = re.compile(r"(?:[^\W_]|[" + re.escape(MARKS) + r"])+")
_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def server_lowers_all(conn: Any) -> bool:
    """Whether the database lower-cases letters beyond ASCII (its ctype is not ``C``)."""
    row = conn.execute("SELECT lower('ÄΣД') = 'äσд'").fetchone()
    return bool(row and row[0])


def fold(word: str) -> str:
    """A word or query term as the index matches it: lower-cased, accents dropped, NFC."""
    return fold_diacritics(word.lower())


def folded_words(text: str, *, lowers_all: bool) -> str:
    """The folded forms of ``text``'s words that the server's own lexemes lack,
    space-separated (``""`` for ASCII text, whose lexemes are already folded)."""
    if text.isascii():
        return ""
    # words are found in NFC: in decomposed text (as macOS writes it) a combining accent
    # is no letter and would cut "Müller" in two; the server keeps such a word as written,
    # so its folded form is always added
    nfc = unicodedata.normalize("NFC", text)
    out: dict[str, None] = {}
    for word in _WORD.findall(nfc):
        if word.isascii():
            continue
        made = word.lower() if lowers_all else word.translate(_ASCII_UPPER)
        folded = fold(word)
        if folded != made or (nfc != text and word not in text):
            out[folded] = None
    return " ".join(out)


def index_extra(text: str, *, lowers_all: bool) -> str:
    """What a chunk's ``grams`` column holds: the character pairs of its unspaced runs
    (:func:`soulframe.kit.index_grams`) and its folded words."""
    from soulframe.kit import index_grams

    return " ".join(p for p in (index_grams(text), folded_words(text, lowers_all=lowers_all)) if p)
