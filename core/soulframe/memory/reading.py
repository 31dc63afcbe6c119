"""Reading lines of a memory file (``memory_get``): only memory files, confined to the
workspace, private files only in a private session."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..model import Session, SoulframeError
from .results import MemoryExcerpt

if TYPE_CHECKING:
    from .index import MemoryIndex

_CITATION = re.compile(r"^(?P<path>.+?)#L(?P<a>\d+)(?:-L?(?P<b>\d+))?$")


def read(index: MemoryIndex, path: str,
    from_line: int | None = None,
    lines: int | None = None,
    session: Session | None = None,
) -> MemoryExcerpt:
    """Read ``lines`` lines of a memory file from ``from_line`` (1-based). ``path`` may
    be a citation (``memory/2026-08-01.md#L3-L7``). Refuses any path outside the memory
    files, and private files in a session that is not private."""
    index._check_enabled()
    path = (path or "").strip()
    m = _CITATION.match(path)
    if m:
        path = m.group("path")
        a = int(m.group("a"))
        b = int(m.group("b") or a)
        if b < a:
            raise SoulframeError(f"{path}: the line range ends before it starts (L{a}-L{b})")
        from_line = from_line or a
        lines = lines or max(1, b - a + 1)
    if from_line is not None and int(from_line) < 1:
        raise SoulframeError(f"{path}: from line {from_line}: lines are numbered from 1")
    if lines is not None and int(lines) < 1:
        raise SoulframeError(f"{path}: lines = {lines}: read at least one line")
    if path.startswith("./"):
        path = path[2:]
    ws = index.agent.workspace
    full = ws.resolve(path)  # refuses '..', absolute paths, symlinks leaving the workspace
    rel = full.relative_to(ws.root).as_posix()
    known = {f.path: f for f in index.files()}
    mf = known.get(rel)
    if mf is None:
        raise SoulframeError(
            f"{path}: not a memory file (memory_get reads MEMORY.md, memory/**/*.md and "
            "memory.extra_paths)"
        )
    if mf.private and session is not None and not session.is_private:
        raise SoulframeError(
            f"{path}: private memory is only available in a main, private session "
            f"(this is a {session.kind} session)"
        )
    text = mf.abspath.read_bytes().decode("utf-8", errors="replace")
    all_lines = text.splitlines()
    start = int(from_line or 1)
    if start > len(all_lines) and all_lines:
        raise SoulframeError(
            f"{rel} has {len(all_lines)} lines; line {start} is past the end"
        )
    count = len(all_lines) - start + 1 if lines is None else max(0, int(lines))
    end = min(len(all_lines), start + count - 1)
    body = "\n".join(all_lines[start - 1 : end]) if end >= start else ""
    return MemoryExcerpt(rel, start, max(end, start - 1), body, len(all_lines))
