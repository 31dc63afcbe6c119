"""Writing memory: an entry appended to today's log or to MEMORY.md, under the one file
lock, fsynced, never through a symlink."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import SoulframeError

if TYPE_CHECKING:
    from .indexview import IndexView

def append_daily(index: IndexView, text: str, *, when: _dt.datetime | None = None,
                 via: str = "memory remember") -> Path:
    """Append ``- text`` to today's log ``memory/YYYY-MM-DD.md`` (agent time zone),
    creating it with a ``# YYYY-MM-DD`` heading. Atomic against concurrent writers:
    lock, append, fsync."""
    index.check_enabled()
    entry = entry_line(text)
    day = (when or index.agent.now()).date().isoformat()
    path = index.agent.workspace.resolve(f"memory/{day}.md")
    from .safety import guard

    guard(index.agent, entry, target=f"memory/{day}.md", via=via)
    _check_room(index, path, entry, f"memory/{day}.md")
    _append_locked(path, _marked(entry, via, when), heading=f"# {day}\n\n")
    return path


def _check_room(index: IndexView, path: Path, entry: str, target: str) -> None:
    """Refuse a note that would take its file past ``memory.max_file_bytes``: the index
    skips a file over it whole, so one pasted log would hide every other note of the day
    from search while the write itself reported success."""
    limit = int(index.config.get("memory.max_file_bytes"))
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    grown = size + len(entry.encode("utf-8")) + 200  # with its heading and provenance mark
    if grown > limit:
        raise SoulframeError(
            f"memory remember: a note of {len(entry.encode('utf-8')):,} bytes would take {target} "
            f"past memory.max_file_bytes ({limit:,} bytes), and a file over it is not indexed; "
            "keep the note shorter (or put a long text in its own memory/*.md file)")


def remember(index: IndexView, text: str, *, curated: bool = False, via: str = "memory remember") -> Path:
    """Append to today's log, or with ``curated`` to MEMORY.md (``- text (added
    YYYY-MM-DD)``), the curated long-term memory (seed 003 §5.2), at the end of its
    ``## Notes`` section (:mod:`soulframe._engine.memory.curated`), never under whatever heading
    happens to be last."""
    if not curated:
        return append_daily(index, text, via=via)
    index.check_enabled()
    entry = entry_line(text)
    from .safety import guard

    guard(index.agent, entry, target="MEMORY.md", via=via)
    day = index.agent.now().date().isoformat()
    if not entry.rstrip().endswith(")"):
        entry = entry.rstrip("\n") + f" (added {day})\n"
    ws = index.agent.workspace
    existing = index.discovery.root_memory()
    path = existing if existing is not None else ws.resolve("MEMORY.md")
    _check_room(index, path, entry, path.name)
    from .curated import file_note_locked

    file_note_locked(path, _marked(entry, via), heading="# MEMORY.md\n\n")
    return path


def entry_line(text: str) -> str:
    """``- text``: one line, no control characters, no HTML comment of the note's own."""
    from .textclean import strip_controls

    # bytes that were not UTF-8 (a shell passes them through as surrogates) become U+FFFD
    text = (text or "").encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = " ".join(strip_controls(text).split())  # one entry, one line, no NUL
    # no HTML comment opened or closed by the note itself: only the writer adds provenance
    # (a note could otherwise close the comment, or forge a "src:" of its own)
    text = text.replace("<!--", "<!- -").replace("-->", "- ->")
    if not text:
        raise SoulframeError("memory remember: the text is empty")
    return f"- {text}\n"


def _marked(entry: str, via: str, when: _dt.datetime | None = None) -> str:
    """The entry with its provenance (:mod:`soulframe._engine.memory.provenance`): who wrote it,
    how, when."""
    from .provenance import mark

    source = "flush" if "flush" in via else "remember"
    return entry.rstrip("\n") + mark(source, via=via.replace(" ", "-"), at=when or _dt.datetime.now(_dt.UTC)) + "\n"


def _append_locked(path: Path, entry: str, *, heading: str) -> None:
    """Append under an exclusive lock, writing ``heading`` first if the file is new/empty:
    the whole new file is written beside the old one, fsynced and renamed over it, so a full
    disk or a crash leaves the old bytes, never a cut entry. Created 0600 in a 0700
    directory, never through a symlink."""
    from ..workspace import ensure_private_dir, update_locked

    ensure_private_dir(path.parent)
    if path.is_symlink():
        raise SoulframeError(f"{path.name}: refusing to append through a symlink")

    def change(old: bytes) -> bytes:
        if not old:
            return (heading + entry).encode("utf-8")
        sep = b"" if old.endswith(b"\n") else b"\n"  # the entry starts on its own line
        return old + sep + entry.encode("utf-8")

    update_locked(path, change)
