"""Which daily-log entries consolidation may promote into MEMORY.md: recalled often enough,
by enough distinct queries, in a log old enough, and not in MEMORY.md already (by wording or
by its citation). See :mod:`soulframe._engine.memory.consolidate` for the run itself."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from ..model import RecallStat, TracksRecalls
from .recall import normalise_entry
from .supersede import is_superseded

if TYPE_CHECKING:
    from ..model import AgentLike

_ENTRY = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")


def entries(text: str) -> list[tuple[int, str]]:
    """(0-based line, text) of MEMORY.md's live entries (bullets, superseded left out)."""
    return [(i, ln) for i, ln in enumerate(text.split("\n")) if _ENTRY.match(ln) and not is_superseded(ln)]


def find_candidates(agent: AgentLike, memory_text: str) -> list[dict[str, Any]]:
    cfg = agent.config
    store = agent.store
    if not isinstance(store, TracksRecalls):
        return []
    recalls = store.recalls
    min_recalls = int(cfg.get("memory.consolidate.min_recalls"))
    min_queries = int(cfg.get("memory.consolidate.min_queries"))
    min_age = int(cfg.get("memory.consolidate.min_age_days"))
    min_score = float(cfg.get("memory.consolidate.min_score"))
    today = agent.now().date()
    known = {normalise_entry(ln) for _, ln in entries(memory_text)}
    known_text = memory_text.lower()
    out = []
    from .files import day_of

    for r in recalls(500, path_prefix="memory/"):
        if r.count < min_recalls or r.queries < min_queries or r.best_score < min_score:
            continue
        day = day_of(r.path)
        if day is not None and (today - _dt.date.fromisoformat(day)).days < min_age:
            continue
        norm = normalise_entry(r.text)
        if norm in known or norm in known_text:
            continue
        line = _current_line(agent, r.path, r.text, r.line)
        if line is None:
            continue  # the entry is gone from its file
        if f"{r.path}#L{line}," in memory_text or f"{r.path}#L{line})" in memory_text:
            continue  # promoted before (its citation is in MEMORY.md), perhaps reworded
        out.append({"citation": f"{r.path}#L{line}", "text": r.text.strip(), "recalls": r.count,
                    "queries": r.queries, "days": r.days, "score": round(r.best_score, 4)})
        if len(out) >= int(cfg.get("memory.consolidate.max_candidates")):
            break
    return out


def still_there(agent: AgentLike, recalled: Iterable[RecallStat], limit: int) -> list[RecallStat]:
    """The first ``limit`` of ``recalled`` whose entry is still in its file, each with the
    line it is on now. The store keeps the counts of an entry that was edited, deleted or
    moved to another file (its key is its text and path); they are history, not something
    to show as recalled now."""
    out: list[RecallStat] = []
    for r in recalled:
        if len(out) >= limit:
            break
        line = _current_line(agent, r.path, r.text, r.line)
        if line is not None:
            out.append(attrs.evolve(r, line=line))
    return out


def _current_line(agent: AgentLike, path: str, text: str, hint: int) -> int | None:
    try:
        lines = agent.workspace.resolve(path).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return None
    want = normalise_entry(text)
    if 0 < hint <= len(lines) and normalise_entry(lines[hint - 1]) == want:
        return hint
    for i, ln in enumerate(lines, 1):
        if normalise_entry(ln) == want:
            return i
    return None


__all__ = ["entries", "find_candidates", "still_there"]
