"""Keeping a long-lived server's memory index fresh (seed 001 "Memory Sync": on startup, on
search, and periodically at a configurable interval).

A search already syncs changed files first; this adds the other two: one sync when ``serve``
starts, then one every ``memory.sync_interval_s`` seconds (0 turns the interval off), on a
daemon thread, so a client that only reads resources or a prompt — or the first search of the
day — finds the index current instead of paying for a full sync. Syncs never wait for another
process's sync (``blocking=False``), and a failing sync is logged, not fatal: the next search
syncs again.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from soulframe import AgentLike

log = logging.getLogger("soulframe.serve")


class PeriodicSync:
    """Sync ``agent``'s memory now and every ``interval`` seconds until :meth:`stop`."""

    def __init__(self, agent: AgentLike, interval: float) -> None:
        self.agent = agent
        self.interval = max(0.0, float(interval))
        self.syncs = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soulframe-memory-sync", daemon=True)

    @classmethod
    def for_agent(cls, agent: AgentLike) -> PeriodicSync | None:
        """None when memory is off (``memory.enabled = false``)."""
        if not agent.config.get("memory.enabled"):
            return None
        return cls(agent, float(agent.config.get("memory.sync_interval_s") or 0))

    def start(self) -> PeriodicSync:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:  # serve starts it after the first answer
            self._thread.join(timeout=5)

    def _once(self) -> None:
        try:
            report = self.agent.memory.sync(blocking=False)
            self.syncs += 1
            if report.changed_anything:
                log.info("memory sync: %s", report)
        except Exception as exc:  # the server goes on; the next search syncs again
            log.warning("memory sync failed: %s: %s", type(exc).__name__, exc)

    def _run(self) -> None:
        self._once()
        if self.interval <= 0:
            return
        while not self._stop.wait(self.interval):
            self._once()
