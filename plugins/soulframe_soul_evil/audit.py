"""The audit trail: every swap, one JSON line, in the agent's state directory (0600).

Seed 003 §3.2 counts "no audit trail of which persona was active during which session" as a
weakness of the in-memory swap; this closes it without writing to the workspace.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soulframe.kit import ensure_private_dir

if TYPE_CHECKING:
    from soulframe import AgentLike

FILE_NAME = "soul_evil.jsonl"


def audit_path(agent: AgentLike) -> Path:
    return Path(agent.state_dir) / "agents" / str(agent.state_key) / FILE_NAME


def record(agent: AgentLike, entry: dict[str, Any]) -> Path:
    path = audit_path(agent)
    ensure_private_dir(path.parent.parent)
    ensure_private_dir(path.parent)
    line = json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n"
    # O_APPEND: concurrent writers (two gateways) interleave whole lines, not bytes
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
    return path


def read(agent: AgentLike, limit: int | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The recorded swaps, oldest first (the last ``limit``), and lines that were not JSON."""
    path = audit_path(agent)
    if not path.exists():
        return [], []
    entries: list[dict[str, Any]] = []
    bad: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                bad.append(f"{path}:{n}: not a JSON line; skipped")
                continue
            if isinstance(value, dict):
                entries.append(value)
    if limit is not None:
        entries = entries[-limit:] if limit > 0 else []
    return entries, bad
