"""The ``lines`` chunker's algorithm: splitting a memory file into chunks (seed 000 §14).

Rules, in order of precedence:

* a chunk never exceeds ``max_chars`` characters (newlines between lines included);
* once a chunk holds at least half of ``max_chars``, a blank line ends it (paragraph breaks
  are the preferred cut);
* a line that would push the chunk over the limit starts a new chunk (forced cut);
* a single line longer than ``max_chars`` is split into pieces that all carry that line's
  number, cut at a space where there is one in the second half of the piece, else after a
  punctuation mark, never inside a character as a reader sees one (:func:`split_long_line`);
* every chunk keeps the 1-based, inclusive ``start_line``/``end_line`` of the text it holds;
  blank lines at a chunk's edges are dropped so a citation points at text, not whitespace.
"""

from __future__ import annotations

import re
import unicodedata

import attrs
from soulframe.kit import UNSPACED_CLASS, is_safe_cut, safe_cut_before

_UNSPACED = re.compile(UNSPACED_CLASS)


@attrs.frozen
class TextChunk:
    start_line: int
    end_line: int
    text: str


def split_long_line(line: str, max_chars: int) -> list[str]:
    """Cut one over-long line into pieces of at most ``max_chars``: at a space when one
    falls in the second half of a piece (so words stay whole where they can), else after
    a punctuation mark there (Chinese and Japanese have no spaces, but have 。 and ，),
    else where no character as a reader sees one is split. A cut inside a run of Chinese,
    Japanese, Korean or Thai repeats the character before it at the start of the next
    piece: the index holds such runs as character pairs, and the pair across the cut
    (perhaps a whole word) must be in one of the pieces."""
    pieces: list[str] = []
    rest = line
    while len(rest) > max_chars:
        cut = rest.rfind(" ", max_chars // 2, max_chars)
        again = 0
        if cut <= 0:
            cut = _punctuation_cut(rest, max_chars)
        if cut <= 0:
            cut = safe_cut_before(rest, max_chars)
            if cut <= max_chars // 2:
                cut = max_chars  # a pathological run of marks: cut it anyway
            elif _UNSPACED.match(rest[cut - 1]) and _UNSPACED.match(rest[cut]):
                again = cut - safe_cut_before(rest, cut - 1)
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut - again:].lstrip(" ")
    if rest.strip():
        pieces.append(rest)
    return [p for p in pieces if p.strip()]


def _punctuation_cut(text: str, max_chars: int) -> int:
    """Just after the last punctuation mark in the second half of ``text[:max_chars]``, or 0."""
    for i in range(max_chars - 1, max_chars // 2, -1):
        if unicodedata.category(text[i]).startswith("P") and is_safe_cut(text, i + 1):
            return i + 1
    return 0


def chunk_text(text: str, max_chars: int = 1000) -> list[TextChunk]:
    """Split ``text`` into :class:`TextChunk` objects following the rules above."""
    if max_chars < 2:
        raise ValueError(f"memory.chunk_max_chars = {max_chars} — expected at least 2")
    chunks: list[TextChunk] = []
    buf: list[tuple[int, str]] = []  # (line number, line) of the chunk being built
    size = 0  # chars in buf including the newlines between lines
    half = max_chars // 2

    def flush() -> None:
        nonlocal buf, size
        while buf and not buf[0][1].strip():
            buf.pop(0)
        while buf and not buf[-1][1].strip():
            buf.pop()
        if buf:
            chunks.append(TextChunk(buf[0][0], buf[-1][0], "\n".join(line for _, line in buf)))
        buf = []
        size = 0

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            if size >= half:
                flush()
                continue
            if buf:
                buf.append((lineno, ""))
                size += 1
            continue
        if len(line) > max_chars:
            flush()
            for piece in split_long_line(line, max_chars):
                chunks.append(TextChunk(lineno, lineno, piece))
            continue
        added = len(line) + (1 if buf else 0)
        if size + added > max_chars:
            flush()
            added = len(line)
        buf.append((lineno, line))
        size += added
    flush()
    return chunks
