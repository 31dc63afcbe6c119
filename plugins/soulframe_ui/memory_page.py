"""The memory page's facts: a search with each hit's scores, the index status, the
daily-log timeline and the most recalled entries; and one memory file's lines."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from soulframe import Session
from soulframe.kit import redact_urls

from .prompt_page import BadRequest, session_from

if TYPE_CHECKING:
    # the inspector shows the engine's own view (discovered files, the full status)
    from soulframe import Agent

CHANNELS = ("hybrid", "keyword", "vector")


def _number(params: Mapping[str, str], name: str, lo: float, hi: float, *, whole: bool) -> float | None:
    raw = (params.get(name) or "").strip()
    if not raw:
        return None
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        raise BadRequest(f"{name}={raw!r}: expected a {'whole ' if whole else ''}number") from None
    if not lo <= value <= hi:
        raise BadRequest(f"{name}={raw!r}: expected a number from {lo:g} to {hi:g}")
    return value


def _session(params: Mapping[str, str]) -> Session:
    """The session a search or a file is seen as: the owner's main session unless the page
    asks for another kind or a user (``kind=group``, ``user=alice``), so "why does the group
    chat not find this?" is answered with what that chat's search returns."""
    session, _, _ = session_from(params)
    return session


def search_facts(agent: Agent, params: Mapping[str, str]) -> dict[str, Any]:
    """A search as the chosen session sees it. Looking does not count as recalling:
    the inspector never feeds recall tracking (and so never nudges consolidation)."""
    query = (params.get("q") or "").strip()
    channel = params.get("channel") or "hybrid"
    if channel not in CHANNELS:
        raise BadRequest(f"channel={channel!r}: expected one of {', '.join(CHANNELS)}")
    k = _number(params, "k", 1, 50, whole=True)
    min_score = _number(params, "min_score", 0, 1, whole=False)
    floor = float(agent.config.get("memory.min_score")) if min_score is None else min_score
    out: dict[str, Any] = {"query": query, "channel": channel, "k": int(k) if k else None,
                           "min_score": min_score, "floor": floor, "hits": [], "searched": bool(query),
                           "calibration": str(agent.config.get("memory.calibration"))}
    session = _session(params)
    out["session"] = {"kind": session.kind, "user": session.user_id or ""}
    if not query:
        return out
    results = agent.memory.search(query, int(k) if k else None, session,
                                  min_score=min_score, channels=channel, track=False)
    out.update(mode=results.mode, notice=results.notice)
    out["hits"] = [
        {"citation": h.citation, "path": h.path, "start": h.start_line, "end": h.end_line,
         "snippet": h.snippet, "scope": h.scope, "provenance": list(h.provenance),
         "bars": [(label, value) for label, value in (
             ("fused", h.score), ("keyword", h.text_score), ("vector (calibrated)", h.vector_score),
             ("re-ranker", h.rerank_score)) if value is not None]}
        for h in results
    ]
    return out


#: how many daily logs the timeline lists, latest first
TIMELINE_DAYS = 90


def index_facts(agent: Agent) -> dict[str, Any]:
    """Index status, the daily logs by day and the most recalled entries."""
    mem = agent.memory
    # one walk of the memory tree for both: at 20,000 logs a walk is half a second
    found = mem.files()
    status = mem.status(files=found)
    days: list[dict[str, Any]] = []
    dated = sorted((f for f in found if f.day is not None), key=lambda f: (f.day, f.path), reverse=True)
    # the latest days only: years of logs made a page of megabytes, each file read per load
    older = max(0, len(dated) - TIMELINE_DAYS)
    for f in dated[:TIMELINE_DAYS]:
        try:
            text = f.abspath.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        lines = text.splitlines()
        entries = sum(1 for ln in lines if ln.strip() and not ln.lstrip().startswith("#"))
        days.append({"day": f.day, "path": f.path, "entries": entries, "lines": len(lines)})
    days.sort(key=lambda d: (d["day"], d["path"]), reverse=True)
    widest = max((d["entries"] for d in days), default=1) or 1
    for d in days:
        d["share"] = d["entries"] / widest
    recalled = [
        {"citation": f"{r.path}#L{r.line}", "path": r.path, "line": r.line, "text": r.text,
         "count": r.count, "queries": r.queries, "days": r.days, "best": r.best_score,
         "last": time.strftime("%Y-%m-%d", time.localtime(r.last_recalled))}
        for r in agent.memory.most_recalled(10)
    ]
    return {"status": status, "days": days, "older_days": older, "recalled": recalled}


def file_facts(agent: Agent, params: Mapping[str, str]) -> dict[str, Any]:
    """A memory file's lines with a cited range marked. The path goes through the same
    check as the ``memory_get`` tool (memory files only, no escape by ``..``, absolute
    paths or links), read as the session the page names (see :func:`_session`): a group's
    search result opens, a file the group cannot read is refused."""
    path = params.get("path") or ""
    start = _number(params, "from", 1, 10**9, whole=True)
    end = _number(params, "to", 1, 10**9, whole=True)
    session = _session(params)
    excerpt = agent.memory.get(path, None, None, session)
    lo = int(start) if start else 0
    hi = int(end) if end else lo
    if hi < lo:
        raise BadRequest(f"{excerpt.path}: the line range ends before it starts (L{lo}-L{hi})")
    if lo > excerpt.total_lines:
        # a citation from before the file was shortened: say so, do not show a range that
        # marks nothing
        raise BadRequest(f"{excerpt.path} has {excerpt.total_lines} lines; L{lo} is past its end")
    # masked whole, then cut into lines: a secret over several lines (a PEM key) is one
    # match, which the page's line-by-line masking would miss
    text = redact_urls(excerpt.text)
    return {
        "path": excerpt.path,
        "lines": [{"n": i, "text": line, "cited": lo <= i <= hi}
                  for i, line in enumerate(text.split("\n"), excerpt.start_line)],
        "cited": f"L{lo}-L{hi}" if lo else None,
        "first": lo,
        "session": {"kind": session.kind, "user": session.user_id or ""},
    }
