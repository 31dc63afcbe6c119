"""Reading a large top-level JSON array one element at a time, so a multi-gigabyte
``conversations.json`` costs the memory of its largest conversation, not of the file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from soulframe import SoulframeError

BLOCK = 1 << 18  # 256 KiB: a few times this is the reader's own peak


class JsonStreamError(SoulframeError):
    """The file is not a JSON array (or breaks off); names the file and the line."""


def iter_array(path: Path, progress: Callable[[int, int], None] | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, element)`` for each element of the JSON array in ``path``; ``line`` is
    where the element starts (for error messages). ``progress(bytes_read, total_bytes)``
    follows the file."""
    total = path.stat().st_size
    with open(path, "rb") as fh:
        if fh.read(4) == b"PK\x03\x04":  # the export as downloaded: said so, not "not UTF-8"
            raise JsonStreamError(f"{path}: a zip archive, not JSON: unzip it and pass the folder it "
                                  "makes (or the conversations.json in it)")
    reader: _Reader | None = None
    try:
        with open(path, encoding="utf-8-sig") as fh:
            reader = _Reader(fh)
            yield from _elements(path, reader, progress, total)
    except UnicodeDecodeError as exc:
        near = (reader.consumed if reader is not None else 0) + exc.start
        raise JsonStreamError(f"{path}: not valid UTF-8 (near byte {near:,}); an export is UTF-8 JSON: "
                              "download it again, or re-save it as UTF-8") from None


def _elements(path: Path, reader: _Reader, progress: Callable[[int, int], None] | None,
              total: int) -> Iterator[tuple[int, Any]]:
    decoder = json.JSONDecoder()
    reader.skip_ws()
    if reader.next_char() != "[":
        raise JsonStreamError(f"{path} line {reader.line}: expected a JSON array ('[')")
    first = True
    while True:
        reader.skip_ws()
        c = reader.peek()
        if c == "]":
            return
        if c == "":
            raise JsonStreamError(f"{path} line {reader.line}: the array is never closed")
        if not first:
            if c != ",":
                raise JsonStreamError(f"{path} line {reader.line}: expected ',' between elements")
            reader.next_char()
            reader.skip_ws()
        first = False
        line = reader.line
        while True:
            try:
                value, end = decoder.raw_decode(reader.buf, reader.pos)
            except json.JSONDecodeError as exc:
                if reader.fill(grow=True):
                    continue
                raise JsonStreamError(f"{path} line {line + exc.lineno - 1}: invalid JSON: {exc.msg}") from exc
            # a number at the very end of the buffer may continue in the next block
            if end == len(reader.buf) and reader.fill(grow=True):
                continue
            break
        reader.advance(end)
        if progress is not None:
            progress(min(reader.consumed, total), total)
        yield line, value


class _Reader:
    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.line = 1
        self.consumed = 0  # characters read so far, close enough to bytes for a progress bar
        self.eof = False

    def fill(self, grow: bool = False) -> bool:
        """Read on. With ``grow`` (an element did not fit), read as much again as is buffered:
        each try parses the element from its start, so blocks of a fixed size would parse
        a large conversation once per block, quadratic in its size; doubling keeps the total
        within about twice its size."""
        if self.eof:
            return False
        block = self.fh.read(max(BLOCK, len(self.buf) - self.pos) if grow else BLOCK)
        if not block:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + block
        self.pos = 0
        self.consumed += len(block.encode("utf-8", "surrogatepass"))
        return True

    def peek(self) -> str:
        if self.pos >= len(self.buf) and not self.fill():
            return ""
        return self.buf[self.pos]

    def next_char(self) -> str:
        c = self.peek()
        if c:
            self.advance(self.pos + 1)
        return c

    def skip_ws(self) -> None:
        while (c := self.peek()) and c in " \t\r\n":
            self.advance(self.pos + 1)

    def advance(self, end: int) -> None:
        self.line += self.buf.count("\n", self.pos, end)
        self.pos = end
