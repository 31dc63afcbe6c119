"""The passages a chunk is embedded as (one vector each; a chunk's vector score is its best
passage's): lines grouped up to ``memory.embed_window_chars``, a list item alone, a heading
carried into its section, and anything longer than the model's window split further so
nothing is ever silently truncated (see :func:`passages` for the measurements)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import CountsTokens

if TYPE_CHECKING:
    from ..model import EmbeddingProvider, Settings


def passage_windows(config: Settings, text: str, provider: EmbeddingProvider) -> list[str]:
    """The passages of a chunk that are embedded (see the module docstring); ``config`` gives
    ``memory.embed_window_chars``, so a plugin reproducing the index's passages needs only
    the agent's settings."""
    target = int(config.get("memory.embed_window_chars"))
    counts = provider if isinstance(provider, CountsTokens) else None
    limit = counts.max_tokens if counts is not None else None
    out: list[str] = []
    for passage in passages(text, target):
        if limit is None or limit <= 0 or len(passage) <= limit:
            # a word piece is at least one character: a text this short always fits
            out.append(passage)
        else:
            assert counts is not None
            out.extend(_split_to(passage, counts.count_tokens, limit))
    return out


def passages(text: str, target_chars: int) -> list[str]:
    """A chunk cut into the passages its vectors are computed from: consecutive lines
    grouped up to ``target_chars`` (a line is never cut here), with two exceptions:

    * a list item (``- note``, what ``memory remember`` writes) is a passage of its own,
      without its marker, so one of twenty notes of a day is found by its own meaning, not
      diluted by its neighbours' (and the snippet can show exactly it);
    * a Markdown heading is not a passage, but is carried into each passage of its section
      (``## Quarterly budget`` + the lines under it), so words only in a heading are
      embedded too. A daily log's date heading (``# 2026-10-07``) is left out: the date
      is in the file name, and in every passage it would only blur them.

    Measured on tests/data/memory_eval with MiniLM (vector channel alone, recall@6): the
    whole 1,000-char chunk 0.62; single lines 0.76; lines grouped to 160 chars 0.75 with a
    better MRR and ~20 % fewer vectors; 240 chars 0.71; 400 chars 0.71. A long chunk's
    mean meaning blurs the one fact a question is about; a passage keeps it sharp.
    """
    groups: list[str] = []
    heading = ""
    cur = ""

    def close() -> None:
        nonlocal cur
        if cur:
            groups.append(f"{heading}\n{cur}" if heading else cur)
        cur = ""

    for raw in text.split("\n"):
        ln = raw.strip()
        if not ln:
            continue
        if ln.startswith("#"):
            close()
            title = ln.lstrip("#").strip()
            heading = "" if _DATE_HEADING.match(title) else title
            continue
        item = ln.startswith(LIST_MARKERS)
        if item or (cur and len(cur) + 1 + len(ln) > target_chars):
            close()
        cur = f"{cur}\n{plain(ln)}" if cur else plain(ln)
        if item:
            close()
    close()
    return groups or [text]


_DATE_HEADING = re.compile(r"^\d{4}-\d{2}-\d{2}\b")
LIST_MARKERS = ("- ", "* ", "+ ")


def plain(line: str) -> str:
    """A line as its passage holds it: stripped, without a list marker (markup the model
    reads as text: "- Tomas keeps his spare key…" scored 0.32 against a paraphrase where the
    note itself scored 0.36, under the default min_score)."""
    ln = line.strip()
    return ln[2:].lstrip() if ln.startswith(LIST_MARKERS) else ln


def _split_to(
    text: str, count: Callable[[str], int], limit: int, seps: tuple[str, ...] = ("\n", " ")
) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` tokens: greedily at line breaks,
    a line that alone is too long at spaces, a word that alone is too long (a URL, base64)
    by characters."""
    if count(text) <= limit:
        return [text]
    if not seps:
        out: list[str] = []
        rest = text
        while rest:
            lo, hi = 1, len(rest)
            while lo < hi:  # the longest prefix that fits
                mid = (lo + hi + 1) // 2
                if count(rest[:mid]) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
            out.append(rest[:lo])
            rest = rest[lo:]
        return out
    sep = seps[0]
    pieces: list[str] = []
    cur: str | None = None
    for part in text.split(sep):
        candidate = part if cur is None else cur + sep + part
        if count(candidate) <= limit:
            cur = candidate
            continue
        if cur is not None:
            pieces.append(cur)
            cur = None
        if count(part) <= limit:
            cur = part
        else:
            pieces.extend(_split_to(part, count, limit, seps[1:]))
    if cur is not None:
        pieces.append(cur)
    return [p for p in pieces if p.strip()] or [text]
