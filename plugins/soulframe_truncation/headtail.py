"""``head-tail``: the seeds' truncation pipeline (seed 000 §2) and section budget (seed 002).

Files, in order:

1. empty or missing files are skipped;
2. a file over ``bootstrap.max_chars_per_file`` keeps its first 70 % and last 20 % with
   ``[...truncated, read FILE for full content...]`` between them;
3. each file is clamped to what is left of ``bootstrap.total_max_chars``;
4. once less than ``bootstrap.min_file_budget`` is left, no further file is added.

Sections, when the whole prompt is over ``prompt.budget_tokens``: the lowest
``truncate_priority`` is cut first (extra prompt, then skills, then project context);
a section is shortened (its head kept, with a marker) before it is dropped; sections with
no priority (safety, tooling, workspace, identity) are never cut.

Nothing is cut silently: every cut or dropped file or section yields a
:class:`~soulframe.TruncationNotice` naming it, what was kept and where the rest is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from soulframe import ContextFile, RenderedSection, TruncationNotice
from soulframe.kit import safe_cut_before

from . import cuts

#: used when a rendered section carries no ``truncate_priority`` of its own (seed 002 order)
DEFAULT_SECTION_PRIORITIES: dict[str, int] = {"extra_context": 10, "skills": 20, "project_context": 30}
#: a section shortened below this many tokens is dropped instead
MIN_SECTION_TOKENS = 32

SECTION_HINTS: dict[str, str] = {
    "extra_context": "the full text is the configured extra prompt (prompt.extra or the agent's extra_prompt)",
    "skills": "find the others with the skill_search tool or `soulframe skills list`",
    "project_context": "the context files are in the workspace; read them with the context_read tool",
}


def setting(config: Any, key: str, default: Any) -> Any:
    value = config.get(key) if config is not None else None
    return default if value is None else value


@attrs.frozen
class FileLimits:
    max_per_file: int = 20_000
    total: int = 24_000
    min_budget: int = 64
    head_ratio: float = 0.7
    tail_ratio: float = 0.2

    @classmethod
    def from_config(cls, config: Any) -> FileLimits:
        return cls(
            max_per_file=int(setting(config, "bootstrap.max_chars_per_file", 20_000)),
            total=int(setting(config, "bootstrap.total_max_chars", 24_000)),
            min_budget=int(setting(config, "bootstrap.min_file_budget", 64)),
            head_ratio=float(setting(config, "bootstrap.head_ratio", 0.7)),
            tail_ratio=float(setting(config, "bootstrap.tail_ratio", 0.2)),
        )


def original_chars(f: ContextFile) -> int:
    """The file's real size: a source that read only part of a huge file says so."""
    return max(f.original_chars or 0, len(f.content))


def dropped_notice(f: ContextFile, why: str) -> TruncationNotice:
    return TruncationNotice(
        name=f.name,
        original_chars=original_chars(f),
        kept_chars=0,
        hint=f"left out: {why}; read {f.name} for its content",
    )


def section_priority(s: RenderedSection) -> int | None:
    p = s.truncate_priority
    return p if p is not None else DEFAULT_SECTION_PRIORITIES.get(s.name)


def section_marker(name: str) -> str:
    hint = SECTION_HINTS.get(name, f"the section {name!r} was cut")
    return f"\n[...truncated to fit prompt.budget_tokens; {hint}...]\n"


def fit_prefix(text: str, suffix: str, target: int, estimate: Callable[[str], int]) -> int | None:
    """The longest safe prefix length ``n`` with ``estimate(text[:n] + suffix) <= target``,
    preferring to end at a line break; ``None`` if even the suffix alone does not fit."""
    if estimate(suffix) > target:
        return None
    lo, hi = 0, len(text)
    while lo < hi:  # largest n with a fitting estimate (estimators grow with the prefix)
        mid = (lo + hi + 1) // 2
        if estimate(text[: safe_cut_before(text, mid)] + suffix) <= target:
            lo = mid
        else:
            hi = mid - 1
    n = safe_cut_before(text, lo)
    nl = text.rfind("\n", 0, n)
    if nl > 0 and n - nl < max(80, n // 5):
        n = nl
    while n > 0 and estimate(text[:n] + suffix) > target:  # a non-monotonic estimator
        n = safe_cut_before(text, n - 1)
    return n


def shorten_section(
    s: RenderedSection, target: int, estimate: Callable[[str], int], extra: str = ""
) -> tuple[RenderedSection, int] | None:
    """``s`` cut to at most ``target`` tokens (head + marker + ``extra`` + the closing tags
    of the blocks the head left open, :func:`cuts.close_blocks`), with the number of
    characters of the original kept; ``None`` if nothing useful fits."""
    suffix = section_marker(s.name) + extra
    n = fit_prefix(s.text, suffix, target, estimate)
    if n is None or n == 0 and not extra:
        return None
    n, closing = cuts.close_blocks(s.text, n)
    if closing and estimate(s.text[:n] + suffix + closing) > target:
        # the closing tags need room too: fit again with them (a shorter head may leave
        # fewer blocks open, never more than it needs closed)
        again = fit_prefix(s.text, suffix + closing, target, estimate)
        if again is None:
            return None
        n, closing = cuts.close_blocks(s.text, again)
    if n == 0 and not extra:
        return None
    text = s.text[:n] + suffix + closing
    new = attrs.evolve(
        s, text=text, tokens=estimate(text), truncated=True,
        original_tokens=s.original_tokens if s.original_tokens is not None else s.tokens,
    )
    return new, n


class HeadTailPolicy:
    """The seeds' pipeline. ``name`` is ``"head-tail"``."""

    name = "head-tail"

    def __init__(self, config: Any = None) -> None:
        self.config = config

    # ------------------------------------------------------------------ files

    def truncate_files(
        self, files: Sequence[ContextFile], config: Any = None
    ) -> tuple[list[ContextFile], list[TruncationNotice]]:
        lim = FileLimits.from_config(config if config is not None else self.config)
        remaining = lim.total
        out: list[ContextFile] = []
        notices: list[TruncationNotice] = []
        for f in files:
            if not f.content.strip():  # step 1
                continue
            if remaining < lim.min_budget:  # step 4
                notices.append(dropped_notice(
                    f, f"the context budget (bootstrap.total_max_chars = {lim.total}) was used up"))
                continue
            limit = min(lim.max_per_file, remaining)  # steps 2 and 3
            cut = cuts.head_tail(f.content, limit, f.name, lim.head_ratio, lim.tail_ratio)
            if cut is None:
                why = (f"bootstrap.max_chars_per_file = {lim.max_per_file} is too small to hold any of it"
                       if limit == lim.max_per_file and lim.max_per_file < remaining else
                       f"only {remaining:,} characters of bootstrap.total_max_chars were left")
                notices.append(dropped_notice(f, why))
                continue
            text, head, tail = cut
            orig = original_chars(f)
            if text is f.content and orig == len(f.content):
                out.append(f)
            else:
                out.append(attrs.evolve(f, content=text, truncated=True, original_chars=orig))
                notices.append(TruncationNotice(
                    name=f.name,
                    original_chars=orig,
                    kept_chars=head + tail,
                    hint=(f"kept the first {head:,} and the last {tail:,} of {orig:,} characters; "
                          f"read {f.name} for full content"),
                ))
            remaining -= len(text)
        return out, notices

    # ------------------------------------------------------------------ sections

    def enforce_budget(
        self,
        sections: Sequence[RenderedSection],
        budget_tokens: int,
        estimate: Callable[[str], int],
    ) -> tuple[list[RenderedSection], list[TruncationNotice]]:
        result = list(sections)
        over = sum(s.tokens for s in result) - budget_tokens
        if over <= 0:
            return result, []
        notices: list[TruncationNotice] = []
        cuttable = [i for i, s in enumerate(result) if section_priority(s) is not None]
        # lowest priority first; among equals, the later section first
        cuttable.sort(key=lambda i: (section_priority(result[i]), -i))
        dropped: set[int] = set()
        for i in cuttable:
            if over <= 0:
                break
            s = result[i]
            target = s.tokens - over
            short = shorten_section(s, target, estimate) if target >= MIN_SECTION_TOKENS else None
            if short is not None:
                new, kept = short
                over -= s.tokens - new.tokens
                result[i] = new
                notices.append(TruncationNotice(
                    name=s.name, original_chars=len(s.text), kept_chars=kept,
                    hint=f"section cut from {s.tokens} to {new.tokens} tokens; "
                         + SECTION_HINTS.get(s.name, "its source has the full text"),
                ))
            else:
                over -= s.tokens
                dropped.add(i)
                notices.append(TruncationNotice(
                    name=s.name, original_chars=len(s.text), kept_chars=0,
                    hint=f"section left out ({s.tokens} tokens) to fit prompt.budget_tokens = "
                         f"{budget_tokens}; " + SECTION_HINTS.get(s.name, "its source has the full text"),
                ))
        if over > 0:
            notices.append(over_budget_notice(result, dropped, budget_tokens, over))
        return [s for i, s in enumerate(result) if i not in dropped], notices


def over_budget_notice(
    result: Sequence[RenderedSection], dropped: set[int], budget: int, over: int
) -> TruncationNotice:
    kept = [s for i, s in enumerate(result) if i not in dropped]
    return TruncationNotice(
        name="(prompt)",
        original_chars=sum(len(s.text) for s in kept),
        kept_chars=sum(len(s.text) for s in kept),
        hint=(f"still {over} tokens over prompt.budget_tokens = {budget}: the sections that are "
              "never cut (safety, tooling, workspace, identity...) need more; raise the budget"),
    )
