"""Where a note lands in MEMORY.md (``memory remember --curated``).

MEMORY.md is organised by its owner into sections (the template has "About my human",
"Preferences", "Decisions", "Lessons learned"). Appending at the very end would file every
note under whatever heading happens to be last — "Lessons learned" in a fresh workspace —
which misfiles it and misleads the model reading it later. soulframe cannot tell which
section a free-text note belongs to, so it keeps such notes together in one section of
their own:

* a MEMORY.md with a ``## Notes`` section: the note goes at the end of that section (before
  the next heading of the same or a higher level), wherever the section is;
* a MEMORY.md with ``##`` sections but no ``## Notes``: a ``## Notes`` section is added at
  the end, and the note goes there;
* a MEMORY.md without sections (a flat list) or a new one: the note is appended at the end.

The owner (or the agent during a heartbeat) moves notes into the right section later.
"""

from __future__ import annotations

import re
from pathlib import Path

NOTES_HEADING = "## Notes"
_H2 = re.compile(r"^##\s+\S")
_H1_OR_H2 = re.compile(r"^#{1,2}\s")
_NOTES = re.compile(r"^##\s+Notes\s*#*\s*$", re.IGNORECASE)


def file_note(text: str, entry: str, *, heading: str = "# MEMORY.md\n\n") -> str:
    """``text`` (MEMORY.md's content) with ``entry`` (one or more lines ending in a
    newline) filed as the module docstring says."""
    if not text.strip():
        return heading + entry
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    start = next((i for i, ln in enumerate(lines) if _NOTES.match(ln.rstrip("\n"))), None)
    if start is None:
        if not any(_H2.match(ln) for ln in lines):
            return "".join(lines) + entry
        body = "".join(lines).rstrip("\n")
        return f"{body}\n\n{NOTES_HEADING}\n\n{entry}"
    end = next((i for i in range(start + 1, len(lines)) if _H1_OR_H2.match(lines[i])), len(lines))
    # after the section's last non-blank line, keeping the blank lines before the next heading
    last = end
    while last > start + 1 and not lines[last - 1].strip():
        last -= 1
    if last == start + 1:  # an empty section: one blank line after its heading
        insert = ["\n", entry]
    else:
        insert = [entry]
    return "".join(lines[:last] + insert + lines[last:])


def file_note_locked(path: Path, entry: str, *, heading: str = "# MEMORY.md\n\n") -> None:
    """:func:`file_note` on the file at ``path``, under an exclusive lock (concurrent
    writers — another ``remember``, a flush — wait rather than lose a note), written to a
    temporary file, fsynced and renamed over it: a full disk or a crash leaves MEMORY.md
    as it was (:func:`soulframe._engine.workspace.update_locked`). Created 0600 in a 0700
    directory, never written through a symlink."""
    from ..workspace import ensure_private_dir, update_locked

    ensure_private_dir(path.parent)

    def change(old: bytes) -> bytes:
        text = old.decode("utf-8", errors="replace") if old else ""
        return file_note(text, entry, heading=heading).encode("utf-8")

    update_locked(path, change)
