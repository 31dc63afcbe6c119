"""Superseded facts, marked in the Markdown itself.

A fact that changed is not deleted: its entry is struck through and says what replaced it
and since when, so a person reading MEMORY.md sees the history and soulframe can leave the
old fact out of prompts and searches::

    - ~~Lives in Berlin~~ (superseded by: Lives in Lisbon, 2026-11-20)
    - Lives in Lisbon (added 2026-11-20)

The notation is ``~~old text~~ (superseded`` … ``)``; what follows ``superseded`` is free
(``by: NEW``, a date), so a hand-written ``- ~~Uses Vim~~ (superseded 2026-03)`` counts too.
Search ranks a superseded entry below the rest and shows it only with ``--history``; the
prompt's MEMORY.md leaves it out; consolidation writes it instead of deleting.
"""

from __future__ import annotations

import datetime as _dt
import re

_SUPERSEDED = re.compile(r"~~(?P<old>.+?)~~\s*\(superseded\b(?P<rest>[^)]*)\)", re.IGNORECASE)
_BULLET = re.compile(r"^(?P<lead>\s*(?:[-*+]|\d+[.)])\s+)")


def is_superseded(line: str) -> bool:
    """Whether a line is a superseded entry."""
    return _SUPERSEDED.search(line) is not None


def is_superseded_chunk(text: str) -> bool:
    return "~~" in text and any(is_superseded(ln) for ln in text.split("\n"))


def strip_superseded(text: str) -> str:
    """``text`` with every superseded line blanked (line numbers stay where they were)."""
    return "\n".join("" if is_superseded(ln) else ln for ln in text.split("\n"))


def drop_superseded(text: str) -> str:
    """``text`` without its superseded lines (for the prompt)."""
    return "".join(ln for ln in text.splitlines(keepends=True) if not is_superseded(ln))


def mark_superseded(line: str, by: str, day: _dt.date | str) -> str:
    """``- old`` -> ``- ~~old~~ (superseded by: NEW, YYYY-MM-DD)``."""
    m = _BULLET.match(line)
    lead = m.group("lead") if m else "- "
    body = line[m.end():] if m else line.strip()
    body = body.rstrip("\n").strip()
    return f"{lead}~~{body}~~ (superseded by: {' '.join(by.split())}, {day})"


def superseded_text(line: str) -> str | None:
    m = _SUPERSEDED.search(line)
    return m.group("old") if m else None


__all__ = ["drop_superseded", "is_superseded", "is_superseded_chunk", "mark_superseded",
           "strip_superseded", "superseded_text"]
