"""The flush trigger and its per-session cycle state (seed 000 §16).

* :func:`should_flush` is the pure trigger: ``total_tokens`` has reached
  ``context_window - reserve_floor - soft_threshold`` and this cycle has not flushed yet;
* :func:`advance_cycle` moves a session's :class:`CycleState` to the compaction cycle the
  host is in;
* :class:`FlushStateFile` keeps those states in ``<state_dir>/flush/<agent>.json`` under a
  file lock, so two calls in one cycle (even from two processes) never flush twice.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from soulframe import Session
from soulframe.kit import atomic_write, ensure_private_dir, locked

log = logging.getLogger("soulframe.chat")


# --------------------------------------------------------------------------- the trigger


@attrs.frozen
class CycleState:
    """Where a session is in its compaction cycles.

    ``compaction_count`` counts the compactions so far (from the host when it says, else
    inferred); ``flushed_at`` is the count at which the last flush ran. A cycle has been
    flushed when the two are equal.
    """

    compaction_count: int = 0
    flushed_at: int | None = None

    @property
    def flushed_this_cycle(self) -> bool:
        return self.flushed_at == self.compaction_count

    def mark_flushed(self) -> CycleState:
        return attrs.evolve(self, flushed_at=self.compaction_count)

    def to_dict(self) -> dict[str, Any]:
        return {"compaction_count": self.compaction_count, "flushed_at": self.flushed_at}

    @classmethod
    def from_dict(cls, data: Any) -> CycleState:
        if not isinstance(data, Mapping):
            return cls()
        count = data.get("compaction_count", 0)
        flushed = data.get("flushed_at")
        return cls(
            compaction_count=count if isinstance(count, int) else 0,
            flushed_at=flushed if isinstance(flushed, int) else None,
        )


def flush_threshold(context_window: int, reserve_floor: int, soft_threshold: int) -> int:
    """The token count at which a flush is due: ``context_window - reserve_floor - soft_threshold``."""
    return context_window - reserve_floor - soft_threshold


def should_flush(
    total_tokens: int,
    context_window: int,
    reserve_floor: int,
    soft_threshold: int,
    cycle_state: CycleState,
) -> bool:
    """Is a memory flush due? Pure: no I/O.

    True when ``total_tokens`` has reached the threshold and this compaction cycle has not
    flushed yet. A context window too small to leave a positive threshold never flushes
    (there is no room for a flush turn to be useful).
    """
    threshold = flush_threshold(context_window, reserve_floor, soft_threshold)
    if threshold <= 0 or total_tokens <= 0:
        return False
    return total_tokens >= threshold and not cycle_state.flushed_this_cycle


def advance_cycle(
    state: CycleState, total_tokens: int, threshold: int, compaction_count: int | None = None
) -> CycleState:
    """Move ``state`` to the cycle the host is in now.

    A host that reports ``compaction_count`` is believed. Otherwise a usage that fell below
    the threshold after a flush means a compaction happened in between: a new cycle starts
    (the flush re-arms), so the next time the threshold is reached it flushes again.
    """
    if compaction_count is not None:
        if compaction_count != state.compaction_count:
            return attrs.evolve(state, compaction_count=compaction_count)
        return state
    if state.flushed_this_cycle and total_tokens < threshold:
        return attrs.evolve(state, compaction_count=state.compaction_count + 1)
    return state


# --------------------------------------------------------------------------- state file


class FlushStateFile:
    """``<state_dir>/flush/<agent>.json``: the cycle state of each session, 0600, written
    atomically under a lock. :meth:`session_lock` is held through a whole flush, so two
    calls for one session never flush at once while other sessions are not held up."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_agent(cls, state_dir: Path, agent_id: str) -> FlushStateFile:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", agent_id) or "default"
        return cls(ensure_private_dir(Path(state_dir) / "flush") / f"{safe}.json")

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # a damaged state file costs at most one extra flush: say so and start over
            log.warning("memory flush: ignoring unreadable state file %s (%s)", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def load(self, session_key: str) -> CycleState:
        with locked(self.path.with_suffix(".lock"), blocking=True):
            return CycleState.from_dict((self._read().get("sessions") or {}).get(session_key))

    def save(self, session_key: str, state: CycleState) -> None:
        with locked(self.path.with_suffix(".lock"), blocking=True):
            data = self._read()
            sessions = data.setdefault("sessions", {})
            entry = state.to_dict()
            entry["updated_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            sessions[session_key] = entry
            atomic_write(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def session_lock(self, session_key: str) -> contextlib.AbstractContextManager[bool]:
        """Non-blocking: yields False when another flush of this session is running."""
        digest = hashlib.sha256(session_key.encode("utf-8")).hexdigest()[:16]
        locks = ensure_private_dir(self.path.parent / "locks")
        return locked(locks / f"{self.path.stem}-{digest}.lock", blocking=False)


def session_key(session: Session | None) -> str:
    if session is None:
        return "main"
    if session.key:
        return session.key
    return ":".join([session.kind, session.user_id or "-", session.channel or "-"])
