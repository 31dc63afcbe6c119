"""Reading lines of a memory file (``memory_get``): only memory files, confined to the
workspace, private files only in a private session."""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from ..model import Session, SoulframeError
from .files import is_memory_path, without_dot_slash
from .results import MemoryExcerpt

if TYPE_CHECKING:
    from .files import MemoryFile
    from .indexview import IndexView

_CITATION = re.compile(r"^(?P<path>.+?)#L(?P<a>\d+)(?:-L?(?P<b>\d+))?$")


def read(index: IndexView, path: str,
    from_line: int | None = None,
    lines: int | None = None,
    session: Session | None = None,
) -> MemoryExcerpt:
    """Read ``lines`` lines of a memory file from ``from_line`` (1-based). ``path`` may
    be a citation (``memory/2026-08-01.md#L3-L7``). Refuses any path outside the memory
    files, and private files in a session that is not private."""
    index.check_enabled()
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
    path = without_dot_slash(path)
    ws = index.agent.workspace
    full = ws.resolve(path)  # refuses '..', absolute paths, symlinks leaving the workspace
    rel = full.relative_to(ws.root).as_posix()
    from ..agentstore import sees_owner_memory

    own = _users_own(index, rel, session)
    known = {f.path: f for f in index.files()}
    mf = known.get(rel)
    if mf is None and not rel.isascii():
        # a file synced from macOS is named in NFD on Linux, and a model or a keyboard
        # writes its path in NFC: either spelling of an indexed file reads it
        mf = _same_name(known, rel)
        rel = mf.path if mf is not None else rel
    if own is not None and (mf is None or mf.private):
        text = own  # a user's own MEMORY.md (or saved session), never the owner's
    elif mf is None and rel.startswith("memory/") and is_memory_path(rel) and not full.exists():
        # memory/ is readable in every session, so saying that nothing is there tells no
        # more than a search would; "not a memory file" sent a user looking for a wrong path
        raise SoulframeError(f"{path}: no such memory file in the workspace")
    elif mf is None:
        raise SoulframeError(
            f"{path}: not a memory file (memory_get reads MEMORY.md, memory/**/*.md and "
            "memory.extra_paths)"
        )
    elif mf.private and session is not None and not session.is_private:
        raise SoulframeError(
            f"{path}: private memory is only available in a main, private session "
            f"(this is a {session.kind} session)"
        )
    elif mf.private and not sees_owner_memory(index.agent, session):
        assert session is not None
        raise SoulframeError(
            f"{path}: the private memory of the agent's owner; user {session.user_id!r} has "
            f"no {rel} of their own"
        )
    else:
        from .textclean import BINARY, looks_binary, strip_controls

        data = mf.abspath.read_bytes()
        if looks_binary(data):
            # what the index skips is no text to show either (a terminal, a model)
            raise SoulframeError(f"{rel}: not shown: a {BINARY}")
        # a byte-order mark (an editor's, on Windows) is not text: the index drops it too
        text = strip_controls(data.decode("utf-8", errors="replace")).removeprefix("\ufeff")
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


def _same_name(known: dict[str, MemoryFile], rel: str) -> MemoryFile | None:
    """The indexed file whose path is ``rel`` in another Unicode normal form."""
    wanted = unicodedata.normalize("NFC", rel)
    return next((f for p, f in known.items() if unicodedata.normalize("NFC", p) == wanted), None)


def _users_own(index: IndexView, rel: str, session: Session | None) -> str | None:
    """The session user's own memory document ``rel`` (kept in the store), when the user
    is not the workspace's owner; a private one only in a private session."""
    if session is None or not session.user_id:
        return None
    from ..agentstore import effective_user
    from .users import UserMemory, is_private_user_memory, is_user_memory_name

    if not is_user_memory_name(rel) or (is_private_user_memory(rel) and not session.is_private):
        return None
    user = effective_user(index.agent, session.user_id)
    if user is None:
        return None
    try:
        return UserMemory(index.agent, user).documents().get(rel)
    except SoulframeError:  # a store without per-user files
        return None
