"""Where text may be cut, and the markers that say it was.

A cut never splits a UTF-16 surrogate pair (which a Python ``str`` can hold when it came
from JSON or ``surrogatepass``), a CRLF, or a base character from the combining marks,
variation selectors, skin-tone modifiers or zero-width joins that follow it: the kept text
shows the same characters the file did, just fewer of them.
"""

from __future__ import annotations

import re
import unicodedata

#: how far a cut may move to reach a safe boundary (a pathological run of combining marks
#: longer than this is cut anyway, between two marks, which is still valid text)
MAX_SHIFT = 32

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


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
    return unicodedata.category(ch) in ("Mn", "Me", "Mc")


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
    code fences skipped."""
    out: list[tuple[int, str]] = []
    in_fence = False
    pos = 0
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and pos >= start:
            m = _HEADING.match(stripped)
            if m:
                out.append((lineno, f"{m.group(1)} {m.group(2)}"))
        pos += len(line)
    return out


def toc_block(entries: list[tuple[int, str]], budget: int) -> str:
    """A table of contents ``## Heading (line 120)``, one per line, at most ``budget``
    chars: shallower headings are kept first, and what does not fit is counted."""
    if not entries or budget <= 0:
        return ""
    lines = [f"{h} (line {n})" for n, h in entries]
    chosen = list(range(len(entries)))
    depth = max(len(h) - len(h.lstrip("#")) for _, h in entries)

    def size(idx: list[int]) -> int:
        extra = len(entries) - len(idx)
        more = len(f"(+{extra} more headings)\n") if extra else 0
        return sum(len(lines[i]) + 1 for i in idx) + more

    while chosen and size(chosen) > budget:
        deepest = [i for i in chosen if len(entries[i][1]) - len(entries[i][1].lstrip("#")) == depth]
        if deepest and depth > 1:
            chosen = [i for i in chosen if i not in set(deepest)]
            depth -= 1
        else:
            chosen = chosen[:-1]
    if not chosen:
        return ""
    extra = len(entries) - len(chosen)
    block = "".join(lines[i] + "\n" for i in chosen)
    if extra:
        block += f"(+{extra} more headings)\n"
    return block
