"""``fair``: shares instead of first-come-first-served.

The seeds' pipeline fills the budget in file order, so a long AGENTS.md can starve
MEMORY.md at the end. Here every file is guaranteed a share of
``bootstrap.total_max_chars`` proportional to its weight (persona and operating rules
weigh most); a file that needs less than its share passes the rest on to the others
(weighted max-min fairness). A file cut to its share keeps its head, the marker, and a
table of contents of the headings it lost (``## Heading (line 120)``), so the model knows
what is missing and where to read it.

Sections over ``prompt.budget_tokens`` are treated the same way: the cuttable sections
share what the never-cut ones leave, weighted by ``truncate_priority``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from soulframe import ContextFile, RenderedSection, TruncationNotice
from soulframe.kit import safe_cut_before

from . import cuts
from .headtail import (
    MIN_SECTION_TOKENS,
    SECTION_HINTS,
    FileLimits,
    dropped_notice,
    original_chars,
    over_budget_notice,
    section_priority,
    shorten_section,
)

#: relative importance of a file's share; anything unlisted weighs 1
FILE_WEIGHTS: dict[str, int] = {
    "AGENTS.md": 3,
    "SOUL.md": 3,
    "BOOTSTRAP.md": 3,
    "IDENTITY.md": 2,
    "USER.md": 2,
    "TOOLS.md": 2,
    "MEMORY.md": 2,
    "memory.md": 2,
    "HEARTBEAT.md": 1,
}
#: at most this share of a cut file's allowance goes to its table of contents
TOC_SHARE = 0.35


def waterfill(demands: Sequence[int], weights: Sequence[float], capacity: int) -> list[int]:
    """Weighted max-min fair integer allocation: nobody gets more than they ask, the sum
    never exceeds ``capacity``, and what one does not need is shared among the rest."""
    alloc = [0] * len(demands)
    active = [i for i, d in enumerate(demands) if d > 0]
    cap = capacity
    while active and cap > 0:
        total_w = sum(weights[i] for i in active) or 1.0
        share = {i: cap * weights[i] / total_w for i in active}
        done = [i for i in active if demands[i] - alloc[i] <= share[i]]
        if not done:
            for i in active:
                give = int(share[i])
                alloc[i] += give
            break
        for i in done:
            cap -= demands[i] - alloc[i]
            alloc[i] = demands[i]
        active = [i for i in active if i not in set(done)]
    return alloc


def cut_with_toc(text: str, allowance: int, name: str) -> tuple[str, int] | None:
    """``text`` cut to at most ``allowance`` chars: head, marker, contents of what was
    cut. ``None`` when not even the marker fits with some content."""
    if len(text) <= allowance:
        return text, len(text)
    mark = cuts.marker(name)
    room = allowance - len(mark)
    if room < 16:
        return None
    toc_budget = int(allowance * TOC_SHARE)
    toc = cuts.toc_block(cuts.headings(text, max(0, room - toc_budget)), toc_budget)
    head = safe_cut_before(text, room - len(toc))
    toc2 = cuts.toc_block(cuts.headings(text, head), toc_budget)
    if len(toc2) <= len(toc):  # fewer headings left out: the head may grow into the room
        toc = toc2
        head = safe_cut_before(text, room - len(toc))
    return text[:head] + mark + toc, head


class FairPolicy:
    name = "fair"

    def __init__(self, config: Any = None) -> None:
        self.config = config

    def truncate_files(
        self, files: Sequence[ContextFile], config: Any = None
    ) -> tuple[list[ContextFile], list[TruncationNotice]]:
        lim = FileLimits.from_config(config if config is not None else self.config)
        live = [f for f in files if f.content.strip()]
        notices: list[TruncationNotice] = []
        # drop the least important files while a share would be below the minimum
        while True:
            demands = [min(len(f.content), lim.max_per_file) for f in live]
            weights = [float(FILE_WEIGHTS.get(f.name, 1)) for f in live]
            alloc = waterfill(demands, weights, lim.total)
            starved = [i for i, a in enumerate(alloc) if a < min(lim.min_budget, demands[i])]
            if not starved:
                break
            victim = min(starved, key=lambda i: (weights[i], -i))
            notices.append(dropped_notice(
                live[victim], f"its share of bootstrap.total_max_chars = {lim.total} was under "
                f"bootstrap.min_file_budget = {lim.min_budget}"))
            live.pop(victim)
        out: list[ContextFile] = []
        for f, allowance in zip(live, alloc, strict=True):
            orig = original_chars(f)
            if len(f.content) <= allowance and orig == len(f.content):
                out.append(f)
                continue
            cut = cut_with_toc(f.content, allowance, f.name)
            if cut is None:
                notices.append(dropped_notice(f, "its share of the budget could not hold the marker"))
                continue
            text, kept = cut
            out.append(attrs.evolve(f, content=text, truncated=True, original_chars=orig))
            notices.append(TruncationNotice(
                name=f.name, original_chars=orig, kept_chars=kept,
                hint=(f"kept the first {kept:,} of {orig:,} characters and a list of the headings "
                      f"cut, with line numbers; read {f.name} for full content"),
            ))
        return out, notices

    def enforce_budget(
        self,
        sections: Sequence[RenderedSection],
        budget_tokens: int,
        estimate: Callable[[str], int],
    ) -> tuple[list[RenderedSection], list[TruncationNotice]]:
        result = list(sections)
        total = sum(s.tokens for s in result)
        if total <= budget_tokens:
            return result, []
        cuttable = [i for i, s in enumerate(result) if section_priority(s) is not None]
        fixed = sum(s.tokens for i, s in enumerate(result) if i not in set(cuttable))
        room = max(0, budget_tokens - fixed)
        alloc = waterfill(
            [result[i].tokens for i in cuttable],
            [float(max(1, section_priority(result[i]) or 1)) for i in cuttable],
            room,
        )
        notices: list[TruncationNotice] = []
        dropped: set[int] = set()
        for i, allowance in zip(cuttable, alloc, strict=True):
            s = result[i]
            if s.tokens <= allowance:
                continue
            short = None
            if allowance >= MIN_SECTION_TOKENS:
                short = self._shorten(s, allowance, estimate)
            hint = SECTION_HINTS.get(s.name, "its source has the full text")
            if short is None:
                dropped.add(i)
                notices.append(TruncationNotice(
                    name=s.name, original_chars=len(s.text), kept_chars=0,
                    hint=f"section left out ({s.tokens} tokens) to fit prompt.budget_tokens = "
                         f"{budget_tokens}; {hint}"))
                continue
            new, kept = short
            result[i] = new
            notices.append(TruncationNotice(
                name=s.name, original_chars=len(s.text), kept_chars=kept,
                hint=f"section cut from {s.tokens} to {new.tokens} tokens, its cut headings "
                     f"listed; {hint}"))
        over = sum(s.tokens for i, s in enumerate(result) if i not in dropped) - budget_tokens
        if over > 0:
            notices.append(over_budget_notice(result, dropped, budget_tokens, over))
        return [s for i, s in enumerate(result) if i not in dropped], notices

    @staticmethod
    def _shorten(
        s: RenderedSection, allowance: int, estimate: Callable[[str], int]
    ) -> tuple[RenderedSection, int] | None:
        # give the contents list up to TOC_SHARE of the allowance, then fill with the head
        toc_tokens = int(allowance * TOC_SHARE)
        entries = cuts.headings(s.text)
        # a section of several files: each heading is listed by its file's own line numbers
        where = cuts.file_lines(s.text) if "<" in s.text else None
        toc = ""
        if entries:
            toc = cuts.toc_block(entries, toc_tokens * 4, where)
            while toc and estimate(toc) > toc_tokens:
                toc = cuts.toc_block(entries, len(toc) // 2, where)
        short = shorten_section(s, allowance, estimate, extra=toc)
        if short is None:
            return None
        new, kept = short
        if toc:  # list only the headings that were actually cut
            left_out = [e for e in entries if e[0] > s.text.count("\n", 0, kept) + 1]
            toc2 = cuts.toc_block(left_out, len(toc), where)
            if len(toc2) < len(toc):
                again = shorten_section(s, allowance, estimate, extra=toc2)
                if again is not None:
                    new, kept = again
        return new, kept
