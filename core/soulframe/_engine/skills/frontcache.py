"""Parsed YAML front matter of skills, kept across processes: :class:`FrontMatterMemo`.

Importing PyYAML and parsing costs a short-lived command (``soulframe prompt``) more than the
rest of reading its skills, although the front matter rarely changes between two runs. The
memo maps the SHA-256 of a front-matter block's text to what PyYAML's safe loader made of it,
stored as JSON in ``<state_dir>/skills-front-matter.json`` (0600, in the 0700 state dir).

Keyed by content, not by a file's stat: an edit that changes the text changes the key, so a
changed skill is always parsed again, whatever its mtime says (no racy-timestamp window, no
dependence on the clock); two agents sharing a state dir share correct entries. Only values
JSON keeps exactly (str keys; str, int, float, bool, None, lists, dicts) are stored: a date,
a non-string key, a binary value or a YAML alias (``*name``, which JSON would copy at every
use) is parsed each time rather than changed by a round trip.
The file holds nothing that is not already in the skills' own files; a missing, unreadable or
corrupt file is an empty memo, and a failed write is ignored (it is only a cache).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

FILE_NAME = "skills-front-matter.json"
#: entries kept; the least recently added or used go first. A few hundred skills fit many
#: times over, and the file stays small enough to read in well under a millisecond.
MAX_ENTRIES = 4096
_VERSION = 1


def _exact_in_json(value: Any, seen: set[int] | None = None) -> bool:
    """True when ``json.loads(json.dumps(value))`` gives back the same types and values.

    A list or dict met twice (a YAML alias, ``*a``) is not: JSON writes a copy at every
    use, so a few hundred bytes of nested aliases ("billion laughs") would become a memo of
    gigabytes. Each container is visited once, so checking costs what parsing did."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        return math.isfinite(value)
    if t is not list and t is not dict:
        return False
    seen = set() if seen is None else seen
    if id(value) in seen:
        return False
    seen.add(id(value))
    if t is list:
        return all(_exact_in_json(v, seen) for v in value)
    return all(type(k) is str and _exact_in_json(v, seen) for k, v in value.items())


class FrontMatterMemo:
    """YAML front-matter text -> parsed value, read from and written to ``path`` (``None``:
    kept in memory only, for a state dir that cannot be created)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, str] | None = None  # digest -> JSON text; read on first use
        self._dirty = False

    def _load(self) -> dict[str, str]:
        if self._entries is None:
            entries: dict[str, str] = {}
            try:
                if self.path is None:
                    raise FileNotFoundError
                data = json.loads(self.path.read_bytes())
                if isinstance(data, dict) and data.get("version") == _VERSION:
                    got = data.get("entries")
                    if isinstance(got, dict):
                        entries = {k: v for k, v in got.items()
                                   if isinstance(k, str) and isinstance(v, str)}
            except (OSError, ValueError):
                pass  # none yet, unreadable or corrupt: start empty
            self._entries = entries
        return self._entries

    @staticmethod
    def key(yaml_text: str) -> str:
        return hashlib.sha256(yaml_text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, yaml_text: str) -> tuple[bool, Any]:
        """``(True, value)`` for a block parsed before, else ``(False, None)``."""
        hit = self._load().get(self.key(yaml_text))
        if hit is None:
            return False, None
        try:
            return True, json.loads(hit)
        except ValueError:
            return False, None

    def put(self, yaml_text: str, value: Any) -> None:
        """Remember what ``yaml_text`` parsed to, when JSON keeps it exactly."""
        if not _exact_in_json(value):
            return
        entries = self._load()
        k = self.key(yaml_text)
        entries.pop(k, None)  # re-inserted last: the most recent survives trimming
        entries[k] = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        while len(entries) > MAX_ENTRIES:
            del entries[next(iter(entries))]
        self._dirty = True

    def save(self) -> None:
        """Write the memo if something was added (atomically, 0600); errors are ignored."""
        if not self._dirty or self._entries is None or self.path is None:
            return
        self._dirty = False
        from ..workspace import atomic_write, ensure_private_dir

        payload = json.dumps({"version": _VERSION, "entries": self._entries},
                             ensure_ascii=False, separators=(",", ":"))
        try:
            ensure_private_dir(self.path.parent)
            atomic_write(self.path, payload)
        except Exception:  # a read-only or full state dir: the next run parses again
            return
