"""Where a memory entry came from, written next to it in the Markdown.

An entry soulframe writes ends with a trailing HTML comment, which Markdown renders as
nothing and a person can read and edit::

    - Prefers window seats <!-- src: remember via=cli at=2026-11-26T09:12Z -->
    User: Book the Lisbon flight <!-- src: chatgpt conv=6a1f… msg=aa41… at=2024-03-01T10:00Z -->

The first word is the source (``remember``, ``flush``, ``session``, ``consolidate``,
``chatgpt``, ``claude``, ``claude-code``, ``codex``, ``openclaw``); the rest are
``key=value`` pairs (values without spaces). A line without the comment is a hand-written
entry and stays valid. The comment is cut from the text before chunking, so neither the
full-text index nor the embedding model sees it as content; ``memory get`` returns the lines
as they are, and a search hit lists the provenance of its lines.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping

import attrs

#: a provenance comment; never spans lines, so cutting it keeps every line number
PATTERN = re.compile(r"[ \t]*<!--[ \t]*src:[ \t]*([^\n]*?)[ \t]*-->")
_UNSAFE = re.compile(r"[\s<>]+")


@attrs.frozen
class Provenance:
    source: str
    fields: Mapping[str, str] = attrs.field(factory=dict)

    def render(self) -> str:
        return " ".join([self.source, *(f"{k}={v}" for k, v in self.fields.items())])

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, **self.fields}


def stamp(at: _dt.datetime | None = None) -> str:
    """A compact UTC time for the ``at=`` field: ``2026-11-26T09:12:03Z``."""
    at = at or _dt.datetime.now(_dt.UTC)
    if at.tzinfo is not None:
        at = at.astimezone(_dt.UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def clean(value: object) -> str:
    """A field value as :func:`mark` writes it: no spaces, no ``<``/``>`` or ``--``, which
    would end the comment."""
    text = stamp(value) if isinstance(value, _dt.datetime) else str(value)
    return _UNSAFE.sub("_", text).replace("--", "-")


def mark(source: str, **fields: object) -> str:
    """The comment to append to an entry (with a leading space); ``None`` fields are left
    out and values are made safe (:func:`clean`)."""
    parts = [_UNSAFE.sub("_", source)]
    for k, v in fields.items():
        if v is None or v == "":
            continue
        parts.append(f"{k}={clean(v)}")
    return f" <!-- src: {' '.join(parts)} -->"


def strip(text: str) -> str:
    """``text`` with every provenance comment cut (line breaks kept)."""
    if "src:" not in text:
        return text
    return PATTERN.sub("", text)


def parse(line: str) -> Provenance | None:
    """The provenance written on ``line``, or ``None`` for a hand-written line."""
    m = PATTERN.search(line)
    if not m:
        return None
    words = m.group(1).split()
    if not words:
        return None
    fields: dict[str, str] = {}
    for w in words[1:]:
        k, sep, v = w.partition("=")
        if sep:
            fields[k] = v
    return Provenance(words[0], fields)


def of_lines(lines: Iterable[str]) -> tuple[str, ...]:
    """The distinct provenance notes of ``lines``, in order (rendered)."""
    out: list[str] = []
    for line in lines:
        p = parse(line)
        if p is not None and (r := p.render()) not in out:
            out.append(r)
    return tuple(out)


def mark_new_lines(old: str, new: str, source: str, **fields: object) -> str:
    """``new`` with ``mark(source, **fields)`` on each entry line that ``old`` did not have
    (a tool rewriting a whole file marks only what it added; headings, blank lines and
    lines already marked are left alone)."""
    before = {strip(x).strip() for x in old.splitlines()}
    note = mark(source, **fields)
    out = []
    for line in new.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        bare = body.strip()
        if bare and not bare.startswith(("#", "<!--", "```", "---")) and "src:" not in body \
                and bare not in before:
            line = body + note + line[len(body):]
        out.append(line)
    return "".join(out)


__all__ = ["PATTERN", "Provenance", "clean", "mark", "mark_new_lines", "of_lines", "parse", "stamp", "strip"]
