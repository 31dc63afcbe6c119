"""Where text may be cut without splitting a character as a reader sees one.

A cut never splits a UTF-16 surrogate pair (which a Python ``str`` can hold when it came
from JSON or ``surrogatepass``), a CRLF, or a base character from the combining marks,
variation selectors, skin-tone modifiers or zero-width joins that follow it, a Korean
syllable spelled in conjoining jamo (ᄒ+ᅡ+ᆫ), a flag (two regional indicators), an Indic
conjunct (क्ष) or a Thai or Lao vowel sign: the grapheme-cluster rules of Unicode UAX #29
that apply to prompt and memory text. Truncating a prompt, cutting a long memory line into
chunks and cutting a snippet all ask here.
"""

from __future__ import annotations

import unicodedata

#: how far a cut may move to reach a safe boundary (a pathological run of combining marks
#: longer than this is cut anyway, between two marks, which is still valid text)
MAX_SHIFT = 32


def _high(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _low(ch: str) -> bool:
    return "\udc00" <= ch <= "\udfff"


def _attaches(ch: str) -> bool:
    """``ch`` belongs to the character before it."""
    o = ord(ch)
    if o == 0x200D or 0xFE00 <= o <= 0xFE0F or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F:
        return True
    if 0xE0100 <= o <= 0xE01EF:  # variation selectors supplement
        return True
    if o < 0x300:
        return False
    if o in (0x0E33, 0x0EB3):  # Thai and Lao SARA AM: spacing marks of the letter before
        return True
    return unicodedata.category(ch) in ("Mn", "Me", "Mc")


def _jamo(ch: str) -> str:
    """The Hangul syllable type of ``ch`` (UAX #29): "L", "V", "T", "LV"/"LVT" as "S", or ""."""
    o = ord(ch)
    if 0x1100 <= o <= 0x115F or 0xA960 <= o <= 0xA97C:
        return "L"
    if 0x1160 <= o <= 0x11A7 or 0xD7B0 <= o <= 0xD7C6:
        return "V"
    if 0x11A8 <= o <= 0x11FF or 0xD7CB <= o <= 0xD7FB:
        return "T"
    if 0xAC00 <= o <= 0xD7A3:
        return "S"
    return ""


def _regional(ch: str) -> bool:
    return "🇦" <= ch <= "🇿"


def _joins_hangul(prev: str, ch: str) -> bool:
    a, b = _jamo(prev), _jamo(ch)
    if not a or not b:
        return False
    if a == "L":
        return b in ("L", "V", "S")
    return b in ("V", "T") if a in ("V", "S") else b == "T"  # after T only T


def is_safe_cut(text: str, i: int) -> bool:
    """Cutting between ``text[i-1]`` and ``text[i]`` keeps every character whole."""
    if i <= 0 or i >= len(text):
        return True
    prev, ch = text[i - 1], text[i]
    if _high(prev) and _low(ch):
        return False
    if prev == "\r" and ch == "\n":
        return False
    if prev == "\u200d":
        return False
    if _joins_hangul(prev, ch):
        return False
    if "\u0900" <= prev <= "\u0dff" and unicodedata.combining(prev) == 9 \
            and unicodedata.category(ch) == "Lo":  # an Indic conjunct: letter, virama, letter
        return False
    if _regional(prev) and _regional(ch):
        # flags pair up from the start of a run of regional indicators
        run = 0
        while i - run - 1 >= 0 and _regional(text[i - run - 1]):
            run += 1
        return run % 2 == 0
    return not _attaches(ch)


def _pair_safe(text: str, i: int) -> bool:
    return not (0 < i < len(text) and _high(text[i - 1]) and _low(text[i]))


def safe_cut_before(text: str, n: int) -> int:
    """The largest safe cut ``<= n``: ``text[:safe_cut_before(text, n)]`` is at most ``n`` chars."""
    i = max(0, min(n, len(text)))
    j = i
    while j > 0 and i - j < MAX_SHIFT and not is_safe_cut(text, j):
        j -= 1
    if is_safe_cut(text, j):
        return j
    # give up on the grapheme, but never on a surrogate pair
    return i if _pair_safe(text, i) else i - 1


def safe_cut_after(text: str, n: int) -> int:
    """The smallest safe cut ``>= n``: ``text[safe_cut_after(text, n):]`` is at most
    ``len(text) - n`` chars."""
    i = max(0, min(n, len(text)))
    j = i
    while j < len(text) and j - i < MAX_SHIFT and not is_safe_cut(text, j):
        j += 1
    if is_safe_cut(text, j):
        return j
    return i if _pair_safe(text, i) else i + 1


def display_width(text: str) -> int:
    """The terminal columns ``text`` takes, as wcwidth counts them: two for a wide or
    full-width character (Chinese, Japanese, Korean, most emoji), none for a mark drawn on
    the character before it, a joiner, a skin tone or a Korean vowel or final jamo, one
    for the rest (a Devanagari vowel sign that takes its own space included)."""
    width = 0
    for ch in text:
        o = ord(ch)
        if unicodedata.category(ch) in ("Mn", "Me", "Cf") or 0x1F3FB <= o <= 0x1F3FF or 0x1160 <= o <= 0x11FF:
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def pad_columns(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns (``str.ljust`` counts
    characters, so a column of Chinese names would not line up)."""
    return text + " " * max(0, columns - display_width(text))


def clip_columns(text: str, columns: int) -> str:
    """``text`` in at most ``columns`` terminal columns: cut where a character as a
    reader sees it ends, then "…"."""
    if display_width(text) <= columns:
        return text
    width = 0
    for i, ch in enumerate(text):
        width += display_width(ch)
        if width > columns - 1:
            return text[: safe_cut_before(text, i)].rstrip() + "…"
    return text
