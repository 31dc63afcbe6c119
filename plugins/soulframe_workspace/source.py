"""The workspace on disk as a context source.

Reads the bootstrap files at the workspace root, MEMORY.md (or memory.md) and the daily
logs of today and yesterday. Every file goes through :meth:`Workspace.resolve`, so a
symlink leading out of the workspace is refused, and is judged by the file it reaches
(:mod:`soulframe._engine.prompt.reached`): ``SOUL.md -> MEMORY.md`` is MEMORY.md, a hard link from
outside is no context file. Contents are cached per process by
``(mtime_ns, size, inode)``: an unchanged file is never read twice, an edited one is re-read
on the next prompt (seed 001 §2 "mtime cache").

Nothing here raises for a bad file: it is skipped or repaired, with a
:class:`~soulframe.kit.ContextWarning` naming it.
"""

from __future__ import annotations

import os
import stat
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from soulframe import ContextFile, PathEscapeError, Session, WorkspaceLike
from soulframe.kit import (
    BOOTSTRAP_FILES,
    EXTRA_CONTEXT_FILES,
    ContextWarning,
    Reached,
    visible_in_session,
)
from soulframe.memorykit import (
    CURATED,
    DAILY_LOG,
    daily_log_names,
    sees_owner_memory,
    strip_controls,
)

if TYPE_CHECKING:
    from soulframe import AgentLike


@attrs.frozen
class FileRead:
    """One read of one file: its text (or None when unusable) and what went wrong."""

    text: str | None
    size: int = 0
    problems: tuple[str, ...] = ()
    partial: bool = False


_cache: dict[Path, tuple[tuple[int, int, int, int], FileRead]] = {}
_lock = threading.Lock()


def read_cap(config: Any) -> int:
    """Bytes read from one file at most. Enough for every policy's head and tail (4 bytes
    per char at worst, twice the largest budget), so a 5 MB SOUL.md costs ~200 KB."""
    per_file = int(config.get("bootstrap.max_chars_per_file") or 20_000) if config else 20_000
    total = int(config.get("bootstrap.total_max_chars") or 24_000) if config else 24_000
    return max(64 * 1024, 8 * max(per_file, total))


def _decode(data: bytes, name: str, problems: list[str]) -> str:
    try:
        text = data.decode("utf-8")
        bad = 0
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd")
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(
            f"{name}: not valid UTF-8 (first bad byte at offset {exc.start}, line {line}); "
            "the bad bytes were replaced with U+FFFD"
        )
    clean = strip_controls(text)
    if (bad + len(text) - len(clean)) * 3 > len(text):
        # an image or an archive under a context file's name: nothing a model can read
        problems[:] = [p for p in problems if not p.startswith(f"{name}: not valid UTF-8")]
        problems.append(f"{name}: skipped — a binary file, not text")
        return ""
    if len(clean) != len(text):
        problems.append(f"{name}: {len(text) - len(clean)} control character(s) (NUL, escape ...) left out")
    return clean


def _read_capped(path: Path, size: int, cap: int, name: str, problems: list[str]) -> tuple[str, bool]:
    with open(path, "rb") as fh:
        if size <= cap:
            return _decode(fh.read(cap + 1), name, problems), False
        head_bytes = cap * 3 // 4
        tail_bytes = cap - head_bytes
        head = fh.read(head_bytes)
        fh.seek(max(head_bytes, size - tail_bytes))
        tail = fh.read(tail_bytes)
    # a cut may land inside a multi-byte sequence: drop the partial bytes at the seams
    head = head[: len(head) - _partial_suffix(head)]
    tail = tail[_continuation_prefix(tail):]
    problems.append(
        f"{name}: {size / 1_000_000:.1f} MB is far over the bootstrap budget; only its first "
        f"{len(head) // 1024} KB and last {len(tail) // 1024} KB were read (keep it under "
        "bootstrap.max_chars_per_file)"
    )
    text = _decode(head, name, problems) + "\n" + _decode(tail, name, problems)
    return text, True


def _partial_suffix(b: bytes) -> int:
    """How many bytes at the end of ``b`` start a UTF-8 sequence they do not finish."""
    for back in range(1, min(4, len(b)) + 1):
        c = b[-back]
        if c & 0xC0 == 0x80:
            continue
        need = 2 if c & 0xE0 == 0xC0 else 3 if c & 0xF0 == 0xE0 else 4 if c & 0xF8 == 0xF0 else 1
        return back if need > back else 0
    return 0


def _continuation_prefix(b: bytes) -> int:
    n = 0
    while n < min(3, len(b)) and b[n] & 0xC0 == 0x80:
        n += 1
    return n


_MISSING = object()


def _plain_path(root: str, name: str) -> tuple[Path, os.stat_result] | object | None:
    """The fast, common case: ``name`` reached from ``root`` through no symlink at all, so
    it is inside the workspace without resolving the whole path (``Path.resolve`` walks
    every component from ``/`` and was most of a warm prompt build).

    :returns: ``(path, stat)``; ``_MISSING`` when a component does not exist; ``None`` when
        a symlink or an odd name needs the full check of :meth:`Workspace.resolve`.
    """
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\x00" in name:
        return None
    cur = root
    st = None
    for part in parts:
        cur = f"{cur}/{part}"
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return _MISSING
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return None
    assert st is not None
    return Path(cur), st


def read_file(ws: WorkspaceLike, name: str, cap: int, reached: Reached | None = None) -> FileRead | None:
    """Read workspace file ``name``; ``None`` when it does not exist. With ``reached``, a
    file that is another (private) file under this name, or a hard link from elsewhere, is
    skipped (privacy follows the file reached), judged with the ``stat`` taken here."""
    plain = _plain_path(str(ws.root), name)
    if plain is _MISSING:
        return None
    real = None
    if isinstance(plain, tuple):
        path, st = plain
    else:
        try:
            path, real = ws.locate(name)
        except PathEscapeError as exc:
            return FileRead(None, problems=(f"{name}: skipped — {exc}",))
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):
                return FileRead(None, problems=(f"{name}: skipped — a symlink to a file that does not exist",))
            return None
        except OSError as exc:
            return FileRead(None, problems=(f"{name}: skipped — cannot stat ({exc.strerror})",))
    if not stat.S_ISREG(st.st_mode):
        # never open a FIFO or device: reading it could block the prompt forever
        return FileRead(None, problems=(f"{name}: skipped — not a regular file",))
    if reached is not None:
        problem = reached.problem(name, st, linked=not isinstance(plain, tuple), real=real)
        if problem is not None:
            return FileRead(None, problems=(problem,))
    key = (st.st_mtime_ns, st.st_size, st.st_ino, cap)
    with _lock:
        hit = _cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    problems: list[str] = []
    try:
        text, partial = _read_capped(path, st.st_size, cap, name, problems)
    except OSError as exc:
        return FileRead(None, problems=(f"{name}: skipped — cannot read ({exc.strerror or exc})",))
    result = FileRead(text, size=st.st_size, problems=tuple(problems), partial=partial)
    with _lock:
        _cache[path] = (key, result)
    return result


def clear_cache() -> None:
    with _lock:
        _cache.clear()


class WorkspaceSource:
    """The bootstrap files, MEMORY.md and the recent daily logs of the agent's workspace."""

    name = "workspace"

    def __init__(self, agent: AgentLike) -> None:
        self.agent = agent

    def names(self, agent: AgentLike, session: Session) -> list[str]:
        wanted = [*BOOTSTRAP_FILES, *EXTRA_CONTEXT_FILES]
        # memory is not even read for a session that may not see it (nor, when the
        # session's user is not the owner, the owner's curated memory)
        if visible_in_session("MEMORY.md", session, agent.config) and sees_owner_memory(agent, session):
            wanted.append(_memory_file_name(agent.workspace.root))
        wanted += daily_log_names(agent, session)
        return [n for n in wanted if visible_in_session(n, session, agent.config)]

    def load(self, agent: AgentLike, session: Session) -> list[ContextFile]:
        ws = agent.workspace
        cap = read_cap(agent.config)
        reached = Reached.for_session(agent, session)
        out: list[ContextFile] = []
        for name in self.names(agent, session):
            if DAILY_LOG.match(name) and not _public_log(ws, name, agent.config.get("memory.extra_paths") or ()):
                continue
            got = read_file(ws, name, cap, None if DAILY_LOG.match(name) else reached)
            if got is None:
                continue
            for problem in got.problems:
                warnings.warn(problem, ContextWarning, stacklevel=2)
            if got.text is None or not got.text.strip():
                continue
            out.append(ContextFile(
                name=name,
                content=got.text,
                source="workspace",
                scope="agent",
                path=ws.root / name,
                original_chars=got.size if got.partial else None,
            ))
        return out


def _public_log(ws: WorkspaceLike, name: str, extra_paths: Sequence[str]) -> bool:
    """Daily logs reach group and heartbeat prompts: one reached through a link must be a
    public memory file itself (privacy follows the file reached), never MEMORY.md or
    USER.md under a daily log's name, nor a file of ``memory.extra_paths`` (private)."""
    path = ws.root / name
    if not path.is_symlink() and not (ws.root / "memory").is_symlink() and _single_link(path):
        return True  # the common case: a plain file, nothing to follow
    from soulframe.memorykit import Discovery

    discovery = Discovery(ws, [str(p) for p in extra_paths])
    if discovery.privacy(name) is False:
        return True
    for skipped, why in discovery.skipped:
        warnings.warn(f"{skipped}: skipped: {why}", ContextWarning, stacklevel=3)
    return not discovery.skipped and not (path.exists() or path.is_symlink())


def _single_link(path: Path) -> bool:
    try:
        return path.stat().st_nlink < 2
    except OSError:
        return True  # missing: read_file says so


def _memory_file_name(root: Path) -> str:
    """MEMORY.md, or memory.md when only the lower-case one exists."""
    for name in CURATED:
        if (root / name).exists():
            return name
    return CURATED[0]
