"""Recall tracking: which memory entries search returns to an agent, how often, for how
many distinct queries, on how many days, and when last (docs/memory-upkeep.md).

An *entry* is one line of a memory file — a bullet of a daily log — keyed by the hash of
its normalised text, so it keeps its history when lines above it move. Each hit a search
returns counts once for the line it was found by (the line with the most query terms, or
for a hit found by meaning alone, the start of its closest passage). The counting is one
small write transaction per search (no extra query before it); stores that cannot count
(a third party's without ``record_recalls``) are skipped silently.
"""

from __future__ import annotations

import hashlib
import re

_SPACE = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def normalise_entry(text: str) -> str:
    """An entry's text without its bullet, provenance, case and spacing (what the key is
    made of)."""
    from .provenance import strip

    return _SPACE.sub(" ", _BULLET.sub("", strip(text))).strip().lower()


def recall_key(text: str) -> str:
    return hashlib.sha256(normalise_entry(text).encode("utf-8")).hexdigest()[:32]


def query_hash(query: str) -> str:
    """Distinct queries are told apart by their normalised text (the text is not stored)."""
    return hashlib.sha256(_SPACE.sub(" ", query).strip().lower().encode("utf-8")).hexdigest()[:16]


def entry_line(text: str, first: int) -> int:
    """The 0-based line of a chunk ``text`` that stands for the hit: ``first`` (where the
    match is), moved past a heading or a blank line to the entry below it."""
    lines = text.split("\n")
    i = max(0, min(first, len(lines) - 1))
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
        i += 1
    return i if i < len(lines) else max(0, min(first, len(lines) - 1))


__all__ = ["entry_line", "normalise_entry", "query_hash", "recall_key"]
