"""Where text may be cut, and the markers that say it was.

A cut never splits a UTF-16 surrogate pair (which a Python ``str`` can hold when it came
from JSON or ``surrogatepass``), a CRLF, or a base character from the combining marks,
variation selectors, skin-tone modifiers or zero-width joins that follow it, a Korean
syllable spelled in conjoining jamo (ᄒ+ᅡ+ᆫ), a flag (two regional indicators), an Indic
conjunct (क्ष) or a Thai or Lao vowel sign (the grapheme-cluster rules of Unicode UAX #29 that apply to prompt text):
the kept text shows the same characters the file did, just fewer of them.
"""

from __future__ import annotations

import bisect
import re
import unicodedata

#: how far a cut may move to reach a safe boundary (a pathological run of combining marks
#: longer than this is cut anyway, between two marks, which is still valid text)
MAX_SHIFT = 32

_HEADING_NL = re.compile(r"\n[ \t]{0,3}(#{1,6})[ \t]+([^\n]+)")
_FENCE = re.compile(r"\n[ \t]*(?:```|~~~)")


def marker(name: str) -> str:
    """The truncation marker of seed 000 §2, on a line of its own."""
    return f"\n[...truncated, read {name} for full content...]\n"


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


def head_end(text: str, n: int) -> int:
    """The largest safe cut ``<= n``: ``text[:head_end(text, n)]`` is at most ``n`` chars."""
    i = max(0, min(n, len(text)))
    j = i
    while j > 0 and i - j < MAX_SHIFT and not is_safe_cut(text, j):
        j -= 1
    if is_safe_cut(text, j):
        return j
    # give up on the grapheme, but never on a surrogate pair
    return i if _pair_safe(text, i) else i - 1


def tail_start(text: str, n: int) -> int:
    """The smallest safe cut ``>= n``: ``text[tail_start(text, n):]`` is at most
    ``len(text) - n`` chars."""
    i = max(0, min(n, len(text)))
    j = i
    while j < len(text) and j - i < MAX_SHIFT and not is_safe_cut(text, j):
        j += 1
    if is_safe_cut(text, j):
        return j
    return i if _pair_safe(text, i) else i + 1


def head_tail(
    text: str, limit: int, name: str, head_ratio: float = 0.7, tail_ratio: float = 0.2,
    *, min_keep: int = 16,
) -> tuple[str, int, int] | None:
    """Cut ``text`` to at most ``limit`` chars: a head, the marker, a tail.

    :returns: ``(new_text, head_chars, tail_chars)``; the text unchanged (and
        ``(len, 0)``) when it already fits; ``None`` when ``limit`` cannot hold the marker
        and ``min_keep`` characters of content (the caller drops the file, and says so).
    """
    if len(text) <= limit:
        return text, len(text), 0
    mark = marker(name)
    hr = max(0.0, head_ratio)
    tr = max(0.0, tail_ratio)
    if hr + tr == 0:
        hr = 1.0
    head = int(limit * hr)
    tail = int(limit * tr)
    if head + tail + len(mark) > limit:
        avail = limit - len(mark)
        if avail < min_keep:
            return None
        head = int(avail * hr / (hr + tr))
        tail = int(avail * tr / (hr + tr))
    h = head_end(text, head)
    t0 = tail_start(text, len(text) - tail) if tail > 0 else len(text)
    t0 = max(t0, h)
    return text[:h] + mark + text[t0:], h, len(text) - t0


def headings(text: str, start: int = 0) -> list[tuple[int, str]]:
    """Markdown ATX headings at or after char offset ``start``: (1-based line, heading),
    code fences skipped. Regex scans anchored on a literal newline (fast), not a Python loop
    per line: files can be megabytes."""
    padded = "\n" + text  # every line now starts after a "\n"; offsets shift by one
    fences = [m.start() for m in _FENCE.finditer(padded)]
    out: list[tuple[int, str]] = []
    line, counted = 1, 0
    for m in _HEADING_NL.finditer(padded, max(0, start)):
        pos = m.start()  # the newline before the heading, i.e. the heading's offset in text
        if bisect.bisect_left(fences, pos) % 2:  # an odd number of fences before: inside one
            continue
        line += text.count("\n", counted, pos)
        counted = pos
        title = m.group(2).strip().rstrip("#").rstrip()
        if title:
            out.append((line, f"{m.group(1)} {title}"))
    return out


def toc_block(entries: list[tuple[int, str]], budget: int) -> str:
    """A table of contents ``## Heading (line 120)``, one per line, at most ``budget``
    chars: shallower headings are kept first, and what does not fit is counted."""
    if not entries or budget <= 0:
        return ""
    lines = [f"{h} (line {n})\n" for n, h in entries]
    depths = [len(h) - len(h.lstrip("#")) for _, h in entries]

    def more(left_out: int) -> str:
        return f"(+{left_out} more headings)\n" if left_out else ""

    # the deepest level that fits whole, with a count of the deeper headings left out
    for depth in sorted(set(depths), reverse=True):
        chosen = [i for i in range(len(entries)) if depths[i] <= depth]
        size = sum(len(lines[i]) for i in chosen) + len(more(len(entries) - len(chosen)))
        if size <= budget:
            return "".join(lines[i] for i in chosen) + more(len(entries) - len(chosen))
    # not even the top level fits: as many top-level headings as the budget holds, in order
    top = min(depths)
    out: list[str] = []
    used = 0
    for i in range(len(entries)):
        if depths[i] != top:
            continue
        reserve = len(more(len(entries) - len(out) - 1))
        if used + len(lines[i]) + reserve > budget:
            break
        out.append(lines[i])
        used += len(lines[i])
    if not out:
        return ""
    return "".join(out) + more(len(entries) - len(out))
