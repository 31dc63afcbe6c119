"""Where a prompt's text is cut, and the markers that say it was.

Cuts keep every character whole (:func:`soulframe.kit.is_safe_cut`): the kept text shows
the same characters the file did, just fewer of them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from soulframe.kit import safe_cut_after, safe_cut_before

_HEADING_NL = re.compile(r"\n[ \t]{0,3}(#{1,6})[ \t]+([^\n]+)")
# an XML-style tag (a comment or a declaration is not one: a letter follows "<" or "</")
_TAG = re.compile(r"<(/?)([A-Za-z_][\w.-]*)(?:\s[^<>]*)?>")
_FENCE = re.compile(r"\n[ \t]*(?:```|~~~)")


def marker(name: str) -> str:
    """The truncation marker of seed 000 §2, on a line of its own."""
    return f"\n[...truncated, read {name} for full content...]\n"


def close_blocks(text: str, n: int) -> tuple[int, str]:
    """Where to cut ``text`` at or before ``n``, and what must follow the kept head so that
    every block it opened is closed. A section is cut by keeping its head, and a
    ``<context_file>`` or ``<available_skills>`` block left open would hold everything after
    it in the prompt (soulframe's own later sections, the note on what was cut) as if it
    were the file's text.

    Only a tag closed later in ``text`` opens a block (one named in a sentence, as the
    preamble's "use <context_file> content", does not); a cut inside a tag moves before it.
    File text reaches a section neutralised, so its look-alikes of soulframe's tags are no
    longer tags here.

    :returns: ``(cut, closing)``: the closing tags, innermost first, each on a line of its
        own; empty when the head leaves nothing open.
    """
    tags = list(_TAG.finditer(text))
    cut = n
    for m in tags:
        if m.start() < cut < m.end():
            cut = m.start()
            break
    opened: list[tuple[int, str]] = []
    pairs: list[tuple[int, int, str]] = []  # (opening tag's start, closing tag's start, name)
    for m in tags:
        slash, name = m.groups()
        if not slash:
            opened.append((m.start(), name))
            continue
        for j in range(len(opened) - 1, -1, -1):  # the latest open tag of that name
            if opened[j][1] == name:
                pairs.append((opened[j][0], m.start(), name))
                del opened[j:]
                break
    left_open = sorted((start, name) for start, close, name in pairs if start < cut <= close)
    return cut, "".join(f"</{name}>\n" for _, name in reversed(left_open))


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
    h = safe_cut_before(text, head)
    t0 = safe_cut_after(text, len(text) - tail) if tail > 0 else len(text)
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


_OPENS = re.compile(r'^<(context_file|internal_config|system_context) name="([^"]+)">$')
_TRUNCATED = "[...truncated"


def file_lines(text: str) -> Callable[[int], str | None]:
    """For a section that shows several files each in its wrapper block, where a line of the
    section is: ``TOOLS.md line 12`` inside a file (counted from the file's first line, so
    ``context_read`` finds it), ``in TOOLS.md`` after the file's own truncation marker (the
    lines there no longer count from the top), None for a line outside every file (the
    file's own ``## TOOLS.md`` heading says where it is)."""
    where: list[str | None] = [None]  # 1-based
    tag = name = ""
    first, cut = 0, False
    for n, line in enumerate(text.split("\n"), 1):
        opened = _OPENS.match(line)
        if opened:
            tag, name, first, cut = opened.group(1), opened.group(2), n, False
            where.append(None)
        elif name and line == f"</{tag}>":
            name = ""
            where.append(None)
        else:
            if name and line.startswith(_TRUNCATED):
                cut = True
            where.append(None if not name else f"in {name}" if cut else f"{name} line {n - first}")
    return lambda n: where[n] if 0 < n < len(where) else None


def toc_block(entries: list[tuple[int, str]], budget: int,
              where: Callable[[int], str | None] | None = None) -> str:
    """A table of contents ``## Heading (line 120)``, one per line, at most ``budget``
    chars: shallower headings are kept first, and what does not fit is counted.
    ``where`` says where a line is when the text is not one file (see :func:`file_lines`)."""
    if not entries or budget <= 0:
        return ""

    def label(n: int, h: str) -> str:
        if where is None:
            return f"{h} (line {n})\n"
        at = where(n)
        return f"{h} ({at})\n" if at else f"{h}\n"

    lines = [label(n, h) for n, h in entries]
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
