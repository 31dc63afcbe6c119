"""The ``lines`` chunker's algorithm: splitting a memory file into chunks (seed 000 §14).

Rules, in order of precedence:

* a chunk never exceeds ``max_chars`` characters (newlines between lines included);
* once a chunk holds at least half of ``max_chars``, a blank line ends it (paragraph breaks
  are the preferred cut);
* a line that would push the chunk over the limit starts a new chunk (forced cut);
* a single line longer than ``max_chars`` is split into pieces that all carry that line's
  number, cut at a space where there is one in the second half of the piece;
* every chunk keeps the 1-based, inclusive ``start_line``/``end_line`` of the text it holds;
  blank lines at a chunk's edges are dropped so a citation points at text, not whitespace.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class TextChunk:
    start_line: int
    end_line: int
    text: str


def split_long_line(line: str, max_chars: int) -> list[str]:
    """Cut one over-long line into pieces of at most ``max_chars``, at a space when one
    falls in the second half of a piece (so words stay whole where they can)."""
    pieces: list[str] = []
    rest = line
    while len(rest) > max_chars:
        cut = rest.rfind(" ", max_chars // 2, max_chars)
        if cut <= 0:
            cut = max_chars
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip(" ")
    if rest.strip():
        pieces.append(rest)
    return [p for p in pieces if p.strip()]


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
