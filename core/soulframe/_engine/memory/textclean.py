"""Control characters in memory and context files: kept out by writers, contained by the
indexer.

One NUL byte makes a Markdown file look binary to every tool that sniffs for it, and other
C0 control characters (backspace, escape, form feed ...) are never meant in a note: they
only hide or garble text in a terminal or a prompt. Writers drop them (tab, newline and
carriage return stay) before the write-time safety check, so what is checked is what is
written (:func:`strip_controls`). A file that has one anyway (a hand edit, an older
version, a crash's NUL padding) loses that line to the index, never the whole file
(:func:`blank_nul_lines`); only a file that is mostly not text is skipped as binary
(:func:`looks_binary`). Stdlib only.
"""

from __future__ import annotations

import re

#: C0 controls but tab, newline and carriage return; DEL
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def strip_controls(text: str) -> str:
    """``text`` without NUL and the other control characters (see the module docstring)."""
    return _CONTROLS.sub("", text)


SNIFF = 8192


def has_controls(text: str) -> bool:
    return _CONTROLS.search(text) is not None


BINARY = "binary file (mostly lines that are not text)"
#: C0 controls that never occur in a text line (tab, carriage return, form feed and escape do)
_NOT_TEXT = bytes(c for c in range(32) if c not in (9, 10, 12, 13, 27))


def _is_text_line(line: bytes) -> bool:
    if any(c in line for c in _NOT_TEXT):
        return False
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def looks_binary(data: bytes) -> bool:
    """A file whose non-empty lines are mostly not text (NUL or other control bytes,
    invalid UTF-8) in its first ``SNIFF`` bytes: an image or an archive named
    ``.md``. One bad line in a Markdown file (a stray NUL, a crash's NUL padding) does not
    make it binary: that line is skipped, not the file (:func:`blank_nul_lines`)."""
    lines = [ln for ln in data[:SNIFF].split(b"\n") if ln.strip()]
    bad = sum(1 for ln in lines if not _is_text_line(ln))
    return bad * 2 > len(lines)


def blank_nul_lines(data: bytes) -> tuple[bytes, list[int]]:
    """``data`` with every line holding a NUL byte emptied (so the other lines keep their
    numbers, and citations stay right), and those line numbers."""
    lines = data.split(b"\n")
    bad = [n for n, ln in enumerate(lines, 1) if b"\x00" in ln]
    for n in bad:
        lines[n - 1] = b""
    return b"\n".join(lines), bad


def line_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    more = f" and {len(numbers) - 5} more" if len(numbers) > 5 else ""
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{more}"


__all__ = ["BINARY", "blank_nul_lines", "has_controls", "line_list", "looks_binary", "strip_controls"]
