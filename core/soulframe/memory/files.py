"""Which files are memory (seed 000 §14 "Memory Paths"), and reading them safely.

* ``MEMORY.md`` (or ``memory.md`` when there is no ``MEMORY.md``) at the workspace root —
  curated, **private**: only a main, private session ever sees it;
* ``memory/**/*.md``, recursively — the daily logs and other notes, visible to every
  session (seed 003 §1.2). Hidden files and directories, ``.git`` and ``node_modules``
  are skipped;
* ``memory.extra_paths`` — more files or directories inside the workspace; private, since
  soulframe cannot know who they are meant for.

Symlinks are followed only when they stay inside the workspace and point at another memory
path, so ``memory/x.md -> ../SOUL.md`` or ``-> /etc/passwd`` never enters the index.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

import attrs

from ..model import ConfigError, PathEscapeError
from ..workspace import Workspace

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".hg", ".svn"})
_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@attrs.frozen
class MemoryFile:
    path: str  # workspace-relative, forward slashes
    abspath: Path
    private: bool
    day: str | None = None


def day_of(path: str) -> str | None:
    """``2026-08-01`` for ``memory/2026-08-01.md`` (or ``memory/2026-08-01-trip.md``)."""
    name = PurePosixPath(path).name
    m = _DAY.match(name)
    if not m:
        return None
    y, mo, d = (int(x) for x in m.group(1).split("-"))
    if not (1 <= mo <= 12 and 1 <= d <= 31):
        return None
    return m.group(1)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


class Discovery:
    """Finds the memory files of one workspace."""

    def __init__(self, workspace: Workspace, extra_paths: Sequence[str] = ()) -> None:
        self.workspace = workspace
        self.root = workspace.root
        self.extra: list[tuple[str, Path]] = []
        for raw in extra_paths:
            try:
                full = workspace.resolve(str(raw))
            except PathEscapeError as exc:
                raise ConfigError(f"memory.extra_paths: {exc}") from exc
            self.extra.append((str(raw).strip("/"), full))

    def root_memory(self) -> Path | None:
        for name in ("MEMORY.md", "memory.md"):
            p = self.root / name
            if p.is_file() and self._inside(p):
                return p
        return None

    def _inside(self, path: Path) -> bool:
        try:
            real = path.resolve()
        except OSError:
            return False
        return real == self.root or self.root in real.parents

    def is_memory_path(self, rel: str) -> bool:
        """Whether a workspace-relative path names a memory file (by its name alone)."""
        parts = PurePosixPath(rel).parts
        if rel in ("MEMORY.md", "memory.md"):
            return True
        if len(parts) >= 2 and parts[0] == "memory" and rel.lower().endswith(".md"):
            return not any(_is_hidden(p) or p in SKIP_DIRS for p in parts[:-1]) and not _is_hidden(parts[-1])
        for extra, full in self.extra:
            if rel == extra or rel.startswith(extra + "/"):
                return full.is_file() or rel.lower().endswith(".md")
        return False

    def is_private(self, rel: str) -> bool:
        if rel in ("MEMORY.md", "memory.md"):
            return True
        parts = PurePosixPath(rel).parts
        return not (len(parts) >= 2 and parts[0] == "memory")

    def _acceptable(self, path: Path, rel: str) -> bool:
        """A symlink is followed only within the workspace and onto another memory path."""
        if not path.is_symlink():
            return True
        if not self._inside(path):
            return False
        target = path.resolve().relative_to(self.root).as_posix()
        return self.is_memory_path(target)

    def _walk(self, top: Path) -> list[Path]:
        found: list[Path] = []
        seen_dirs: set[Path] = set()
        for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
            d = Path(dirpath)
            real = d.resolve()
            if real in seen_dirs or not self._inside(d):
                dirnames[:] = []
                continue
            seen_dirs.add(real)
            dirnames[:] = sorted(n for n in dirnames if not _is_hidden(n) and n not in SKIP_DIRS)
            for name in sorted(filenames):
                if _is_hidden(name) or not name.lower().endswith(".md"):
                    continue
                found.append(d / name)
        return found

    def files(self) -> list[MemoryFile]:
        out: dict[str, MemoryFile] = {}

        def add(path: Path) -> None:
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                return
            if rel in out or not self._acceptable(path, rel):
                return
            if not path.is_file():
                return
            out[rel] = MemoryFile(rel, path, self.is_private(rel), day_of(rel) if rel.startswith("memory/") else None)

        top = self.root_memory()
        if top is not None:
            add(top)
        mem = self.root / "memory"
        if mem.is_dir() and self._inside(mem):
            for p in self._walk(mem):
                add(p)
        for _raw, full in self.extra:
            if full.is_dir():
                for p in self._walk(full):
                    add(p)
            elif full.is_file():
                add(full)
        return sorted(out.values(), key=lambda f: f.path)
