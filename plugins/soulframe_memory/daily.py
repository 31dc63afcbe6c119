"""Reviewing and archiving daily logs (seed 003 §8.4).

The seed's maintenance step is ``rm ~/clawd/memory/2024-*.md``. soulframe never deletes
memory: ``memory prune`` moves old logs into ``memory/archive/``. The archive **stays
searchable** — the memory index covers ``memory/**/*.md`` — because a pruned log is out of
the way (out of ``memory/``'s listing and of any bootstrap) but may still be the only
record of a decision; to drop it from search too, move the archive out of the workspace.
The logs of today and yesterday are never moved: they are the ones loaded at bootstrap.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import PathEscapeError, Session, SoulframeError
from soulframe.kit import ensure_private_dir
from soulframe.memorykit import day_of

if TYPE_CHECKING:
    from soulframe import AgentLike

ARCHIVE = "memory/archive"


@attrs.frozen
class DailyLog:
    """One daily log: its workspace-relative path, date, size and line count."""

    path: str
    date: str
    bytes: int
    chars: int
    lines: int
    archived: bool = False

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _logs_in(agent: AgentLike, rel_dir: str, archived: bool) -> list[DailyLog]:
    try:
        folder = agent.workspace.resolve(rel_dir)
    except PathEscapeError:
        return []
    if not folder.is_dir():
        return []
    out = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.name.lower().endswith(".md"):
            continue
        rel = f"{rel_dir}/{entry.name}"
        day = day_of(rel)
        if day is None:
            continue
        try:
            if entry.is_symlink():
                path = agent.workspace.resolve(rel)  # refuses a symlink out of the workspace
                if not path.is_file():
                    continue
            elif entry.is_file(follow_symlinks=False):
                # a plain file of a resolved folder is where its name says: resolving each
                # of thousands of logs again cost most of `soulframe doctor` in a big workspace
                path = folder / entry.name
            else:
                continue
            data = path.read_bytes()
        except (PathEscapeError, OSError):
            continue
        text = data.decode("utf-8", errors="replace")
        out.append(DailyLog(rel, day, len(data), len(text), len(text.splitlines()), archived))
    return out


def list_logs(agent: AgentLike, *, include_archived: bool = False) -> list[DailyLog]:
    """The daily logs in ``memory/`` (and ``memory/archive/``), oldest first."""
    logs = _logs_in(agent, "memory", False)
    if include_archived:
        logs += _logs_in(agent, ARCHIVE, True)
    return sorted(logs, key=lambda d: (d.date, d.path))


def bootstrap_logs(agent: AgentLike) -> set[str]:
    """The daily logs the prompt loads now: today's and yesterday's (agent timezone)."""
    from soulframe.memorykit import daily_log_names

    return set(daily_log_names(agent, Session.main()))


@attrs.frozen
class PruneResult:
    moved: list[tuple[str, str]] = attrs.field(factory=list)
    kept: list[tuple[str, str]] = attrs.field(factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "moved": [{"from": a, "to": b} for a, b in self.moved],
            "kept": [{"path": p, "reason": r} for p, r in self.kept],
        }


def prune(agent: AgentLike, before: _dt.date, *, dry_run: bool = False) -> PruneResult:
    """Move the daily logs dated before ``before`` into ``memory/archive/``. Never
    overwrites an archived file and never deletes anything."""
    today_and_yesterday = bootstrap_logs(agent)
    candidates = [d for d in list_logs(agent) if d.date < before.isoformat()]
    result = PruneResult(dry_run=dry_run)
    if not candidates:
        return result
    try:
        archive = agent.workspace.resolve(ARCHIVE)
    except PathEscapeError as exc:
        raise SoulframeError(f"{ARCHIVE}: {exc}; refusing to move memory there") from None
    for log in candidates:
        target = f"{ARCHIVE}/{Path(log.path).name}"
        if log.path in today_and_yesterday:
            result.kept.append((log.path, "loaded at bootstrap (today's or yesterday's log)"))
            continue
        dest = archive / Path(log.path).name
        if dest.exists() or dest.is_symlink():
            result.kept.append((log.path, f"{target} already exists; nothing was overwritten"))
            continue
        if not dry_run:
            ensure_private_dir(archive)
            _move_no_clobber(agent.workspace.resolve(log.path), dest)
        result.moved.append((log.path, target))
    return result


def _move_no_clobber(src: Path, dest: Path) -> None:
    """Move ``src`` to ``dest`` unless ``dest`` exists (a hard link fails on an existing
    name where a rename would silently replace it)."""
    try:
        os.link(src, dest, follow_symlinks=False)
    except FileExistsError:
        raise SoulframeError(f"{dest} appeared while pruning; {src} was left in place") from None
    except OSError:  # no hard links here (some filesystems): check, then rename
        if dest.exists() or dest.is_symlink():
            raise SoulframeError(f"{dest} exists; {src} was left in place") from None
        os.rename(src, dest)
        return
    os.unlink(src)
