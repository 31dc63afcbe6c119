"""The range every numeric configuration key accepts, checked when the config is loaded so a
value that would fail deep inside (``memory.chunk_max_chars = 0``, a ``max_results`` larger
than SQLite's integers) is one clear error naming the file, the line and the key instead.

A key missing here still gets the general rules: a finite number, not negative, and no larger
than :data:`INT_LIMIT` (the largest integer a float, JSON and SQLite all hold exactly).
"""

from __future__ import annotations

import math

#: the largest integer any numeric key accepts
INT_LIMIT = 2**53

#: seconds: a week is already far past any sensible timeout
_TIMEOUT = (0.001, 7 * 24 * 3600.0)

#: key -> (lowest, highest) accepted value, both inclusive
RANGES: dict[str, tuple[float, float]] = {
    "bootstrap.max_chars_per_file": (1, INT_LIMIT),
    "bootstrap.total_max_chars": (1, INT_LIMIT),
    "bootstrap.min_file_budget": (0, INT_LIMIT),
    "prompt.budget_tokens": (1, INT_LIMIT),
    "prompt.group_title_max_chars": (1, 10_000),
    "skills.inline_max_count": (0, 100_000),
    "skills.inline_max_tokens": (0, INT_LIMIT),
    "skills.max_in_prompt": (0, 100_000),
    "skills.max_prompt_bytes": (0, INT_LIMIT),
    "skills.max_skill_file_bytes": (1, INT_LIMIT),
    "skills.bm25_k1": (0, 100),
    "skills.max_results": (1, 1_000),
    "skills.watch_debounce_ms": (0, 3_600_000),
    # below ~64 characters a chunk holds a few words: nothing a search could rank
    "memory.chunk_max_chars": (64, 10_000_000),
    "memory.max_results": (1, 1_000),
    "memory.embed_window_chars": (16, 10_000_000),
    "memory.user_scope_boost": (0, 100),
    "memory.watch_debounce_ms": (0, 3_600_000),
    "memory.half_life_days": (0.001, 1_000_000),
    "memory.max_file_bytes": (1, INT_LIMIT),
    "memory.session.max_transcript_bytes": (1, INT_LIMIT),
    # deep enough for content blocks; the JSON parser itself stops near 1,000
    "memory.session.max_transcript_depth": (2, 500),
    "embedding.batch_size": (1, 100_000),
    "embedding.dimensions": (1, 1_000_000),
    "embedding.timeout_s": _TIMEOUT,
    "embedding.max_retries": (0, 100),
    "embedding.local.threads": (0, 1_024),
    "model.timeout_s": _TIMEOUT,
    "model.max_retries": (0, 100),
    "model.context_window": (1, INT_LIMIT),
    "model.max_tokens": (1, INT_LIMIT),
    "model.temperature": (0, 2),
    "flush.soft_threshold_tokens": (0, INT_LIMIT),
    "flush.reserve_tokens_floor": (0, INT_LIMIT),
    "flush.max_iterations": (1, 1_000),
    "flush.timeout_s": _TIMEOUT,
    "delegation.inline_max_targets": (0, 100_000),
}

#: keys that are shares or probabilities
_UNIT_SUFFIXES = ("_ratio", "_weight", ".chance", ".min_score", ".mmr_lambda", ".bm25_b",
                  ".max_window_share")


def range_problem(key: str, value: float) -> str | None:
    """What is wrong with the number ``value`` for ``key`` ("expected ... "), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return "expected a finite number"
    if key.endswith(_UNIT_SUFFIXES):
        return None if 0 <= value <= 1 else "expected a number between 0 and 1"
    low, high = RANGES.get(key, (0, INT_LIMIT))
    if low <= value <= high:
        return None
    if high >= INT_LIMIT:
        if value > high:
            return f"too large: expected a number from {_num(low)} to {_num(high)}"
        return f"expected a number ≥ {_num(low)}"
    return f"expected a number between {_num(low)} and {_num(high)}"


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"
