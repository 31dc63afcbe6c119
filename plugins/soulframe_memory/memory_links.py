"""``soulframe doctor``: memory files the index skips, each named with how to fix it.

A symlink inside ``memory/`` that leads to the workspace root, to private memory or out of
the workspace, a symlink loop, a dangling link, a file name that is not UTF-8: memory
discovery skips each with a warning (privacy follows the file reached, not the path used);
doctor names them so the user can remove the link rather than wonder why a note is missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from soulframe import Finding
from soulframe.cli import unlink_fix

if TYPE_CHECKING:
    from soulframe import AgentLike


def memory_files(agent: AgentLike) -> Iterable[Finding]:
    if not agent.config.get("memory.enabled") or not agent.root.is_dir():
        return
    from soulframe.memorykit import Discovery

    discovery = Discovery(agent.workspace, list(agent.config.get("memory.extra_paths") or ()))
    discovery.files()
    for path, why in discovery.skipped:
        # a link that would turn private files public is a problem; the rest only lose a note
        publishes = any(w in why for w in ("private memory", "outside memory/", "hard link"))
        fix = "" if "remove" in why or "rename" in why else f" — remove or fix the link (rm {path})"
        full = agent.root / path
        yield Finding("memory-files", "problem" if publishes else "warning",
                      f"{path} is skipped: {why}{fix}", path,
                      fix=unlink_fix(full, str(path)) if full.is_symlink() else None)
