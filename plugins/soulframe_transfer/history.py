"""Conversations written as dated history under ``memory/``: one file per conversation,
``memory/YYYY-MM-DD-<source>-<title>-<id>.md`` (the conversation's own first date), one
``Speaker: text`` line per message with its provenance, a ``## YYYY-MM-DD`` heading when a
conversation runs into another day. Never MEMORY.md: consolidation decides what is promoted.

The file name carries a hash of the conversation's id, so importing the same export again
finds the file (whatever title and first day it was named for) and adds nothing; a
conversation larger than ``memory.max_file_bytes`` goes on in parts, so the index reads all
of it. Every message passes the write-time checks
(:func:`soulframe.memorykit.guard`): a refused one is left out and quarantined; one that
``forget`` removed (a tombstone) stays out.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from soulframe.kit import atomic_write, ensure_private_dir
from soulframe.memorykit import (
    Quarantine,
    UnsafeWriteError,
    UnsafeWriteWarning,
    clean_provenance,
    guard,
    mark_provenance,
    parse_provenance,
    strip_provenance,
)
from soulframe.memorykit import safety_mode_of as mode_of
from soulframe.memorykit import scan_for_unsafe as scan

from .report import ImportReport
from .sources import Conversation, MemoryFileIn
from .tombstones import Tombstones

if TYPE_CHECKING:
    from soulframe import AgentLike

LABEL = {"chatgpt": "ChatGPT", "claude": "Claude", "claude-code": "Claude Code", "codex": "Codex"}


def _slug(text: str, words: int = 6) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")
    return "-".join(s.split("-")[:words])[:48].strip("-")


def conversation_key(conv: Conversation) -> str:
    """The hash of the conversation's id that ends its file name: what finds the file again
    when the title or the first date has changed since (a rename, a late auto-title)."""
    return hashlib.sha256(f"{conv.source}:{conv.id}".encode()).hexdigest()[:8]


_KEYED = re.compile(r"-([0-9a-f]{8})\.md$")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}(?:T|$)")


def _place(target: str) -> str:
    """Where a refused write was going, as the quarantine is searched: a conversation by its
    id hash (its file may have been named otherwise since, or never written, when every
    message was refused), any other file by its path."""
    m = _KEYED.search(target)
    return m.group(1) if m and target.count("/") == 1 and target.startswith("memory/") else target


def conversation_path(conv: Conversation, start: _dt.datetime | None = None, part: int = 1) -> str:
    """The file of ``conv``, named for its first day; a part after the first (a conversation
    larger than ``memory.max_file_bytes``) is named for the part's own first day."""
    day = start or conv.created or next((m.time for m in conv.messages if m.time), None)
    date = day.date().isoformat() if day else "undated"
    name = "-".join(x for x in (date, conv.source, _slug(conv.title), f"part{part}" if part > 1 else "") if x)
    return f"memory/{name}-{conversation_key(conv)}.md"


def one_line(text: str) -> str:
    """A message on one line: an entry per line is what ``forget`` and recall work on. An
    HTML comment in it is what the person wrote (``<!-- src: this -->`` in a question about
    HTML): kept as text, its ends broken, so it neither vanishes from the line nor runs into
    the provenance appended after it and passes for it."""
    return " ".join(text.replace("<!--", "<!- -").replace("-->", "- ->").split())


@attrs.define
class _Part:
    """One file of a conversation: what it holds already (``None``: a new file), the lines to
    add, and its size once they are."""

    rel: str
    n: int
    existing: str | None = None
    lines: list[str] = attrs.field(factory=list)
    size: int = 0
    messages: int = 0

    def add(self, text: str) -> None:
        self.lines.append(text)
        self.size += _size(text)


def _size(*texts: str) -> int:
    return sum(len(t.encode("utf-8", "surrogateescape")) for t in texts)


class HistoryWriter:
    def __init__(self, agent: AgentLike, report: ImportReport, *, dry_run: bool) -> None:
        self.agent = agent
        self.report = report
        self.dry_run = dry_run
        self.ws = agent.workspace
        self.tombstones = Tombstones.for_agent(agent)
        self.seen: set[str] = set()
        self._quarantined: set[tuple[str, str]] | None = None
        self._keyed: dict[str, list[str]] | None = None

    @property
    def quarantined(self) -> set[tuple[str, str]]:
        """(place, text) of the writes already in quarantine (:func:`_place`)."""
        if self._quarantined is None:
            self._quarantined = {(_place(e.target), e.text) for e in Quarantine.for_agent(self.agent).entries()}
        return self._quarantined

    def _written(self, conv: Conversation) -> list[_Part]:
        """The files an earlier import wrote for ``conv`` (its parts, in order), found by the
        id hash their names end with and the id in their heading, whatever title and date
        they were named for."""
        if self._keyed is None:  # memory/ listed once per import, not once per conversation
            self._keyed = {}
            folder = self.ws.resolve("memory")
            for p in sorted(folder.glob("*.md")) if folder.is_dir() else ():
                if m := _KEYED.search(p.name):
                    self._keyed.setdefault(m.group(1), []).append(f"memory/{p.name}")
        parts = []
        for rel in self._keyed.get(conversation_key(conv), ()):
            data = self.ws.resolve(rel).read_bytes()
            text = data.decode("utf-8", "surrogateescape")
            header = parse_provenance(text.partition("\n")[0])
            fields = header.fields if header is not None else {}
            # a hand-edited heading without the id still counts: the hash already matched
            if fields.get("conv", clean_provenance(conv.id)) == clean_provenance(conv.id):
                n = int(fields["part"]) if fields.get("part", "").isdigit() else 1
                parts.append(_Part(rel, n, text, size=len(data), messages=1))
        return sorted(parts, key=lambda p: p.n)

    def _new_part(self, conv: Conversation, n: int, start: _dt.datetime | None) -> _Part:
        label = LABEL.get(conv.source, conv.source)
        title = (one_line(conv.title) or "untitled") + (f" (part {n})" if n > 1 else "")
        part = _Part(conversation_path(conv, start, n), n)
        part.add(f"# {label}: {title}"
                 + mark_provenance(conv.source, conv=conv.id, part=n if n > 1 else None, at=start) + "\n")
        part.add("\n")
        return part

    def _allowed(self, text: str, target: str, via: str) -> bool:
        if self.dry_run:
            if mode_of(self.agent.config) == "refuse" and scan(text):
                self.report.refused += 1
                return False
            return True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnsafeWriteWarning)  # counted in the report instead
                if guard(self.agent, text, target=target, via=via):
                    self.report.notes.append(f"{target}: written although unsafe (memory.write_safety = warn)")
        except UnsafeWriteError:
            self.report.refused += 1
            return False
        return True

    def conversation(self, conv: Conversation) -> None:
        """Write ``conv`` as a new file; or, when an earlier import wrote it, append the
        messages it did not have yet (a conversation continued since, a resumed session):
        importing the same export again adds nothing. A conversation that would grow past
        ``memory.max_file_bytes`` goes on in another file (``…-part2-…``), so all of it is
        indexed: the index skips a larger file."""
        key = f"{conv.source}:{conv.id}"
        if key in self.seen:
            self.report.duplicates += 1
            return
        self.seen.add(key)
        parts = self._written(conv)
        created = conv.created or next((m.time for m in conv.messages if m.time), None)
        day = created.date() if created else None
        known_ids: set[str] = set()
        # the lines of messages without an id (Codex), in order: such a message is here when
        # it is the next of them with its words, not when any earlier line has them ("ok")
        unnamed: list[str] = []
        for part in parts:
            for line in (part.existing or "").splitlines():
                p = parse_provenance(line)
                if p is not None and "msg" in p.fields:
                    known_ids.add(p.fields["msg"])
                elif line.strip() and not line.startswith("#"):
                    unnamed.append(strip_provenance(line).strip())
                if p is not None and line.startswith("# ") and _DAY.match(p.fields.get("at", "")):
                    day = _dt.date.fromisoformat(p.fields["at"][:10])  # where this part starts
                if re.fullmatch(r"## \d{4}-\d{2}-\d{2}", line.strip()):
                    day = _dt.date.fromisoformat(line.strip()[3:])
        existing = bool(parts)
        if not parts:
            parts = [self._new_part(conv, 1, created)]
        limit = int(self.agent.config.get("memory.max_file_bytes"))
        kept = already = 0
        via = f"import {conv.source}"
        place = conversation_key(conv)
        at = 0  # how far into `unnamed` the messages have been found
        for m in conv.messages:
            text = one_line(m.text)
            if not text:
                continue
            entry = f"{m.speaker}: {text}"
            if existing:
                if m.id is not None:  # an id the file lacks is a new message, whatever it says
                    here = clean_provenance(m.id) in known_ids
                else:
                    here = entry in unnamed[at:]
                    at = unnamed.index(entry, at) + 1 if here else at
                if here:
                    already += 1
                    continue
            if (place, entry) in self.quarantined:
                already += 1  # refused by an earlier import and kept in quarantine: not twice
                continue
            # a forgotten note ("- Door code …") said again in a chat comes back as the
            # speaker's line ("User: Door code …"): its text alone is checked too
            if entry in self.tombstones or text in self.tombstones:
                self.report.forgotten += 1
                continue
            if not self._allowed(entry, parts[-1].rel, via):
                continue
            line = entry + mark_provenance(conv.source, msg=m.id, at=m.time) + "\n"
            heading = []
            if m.time is not None and day is not None and m.time.date() != day:
                day = m.time.date()
                heading = ["\n", f"## {day.isoformat()}\n", "\n"]
            if parts[-1].messages and parts[-1].size + _size(*heading, line) > limit:
                parts.append(self._new_part(conv, parts[-1].n + 1, m.time))
                heading, day = [], (m.time.date() if m.time is not None else day)
            for x in (*heading, line):
                parts[-1].add(x)
            parts[-1].messages += 1
            kept += 1
        if not kept and (existing or already):
            self.report.duplicates += 1
            return
        if not kept:
            self.report.notes.append(f"{conv.origin}: nothing to import (no message left)")
            return
        if existing:
            self.report.updated += 1
        else:
            self.report.imported += 1
        self.report.messages += kept
        for part in parts:
            if not part.lines:
                continue
            self.report.files.append(part.rel)
            if part.size > limit:  # one message longer than the limit: a file of its own, said
                self.report.notes.append(f"{part.rel}: larger than memory.max_file_bytes ({part.size:,} > "
                                         f"{limit:,} bytes; one message is that long): written, not searchable")
            if self.dry_run:
                continue
            path = self.ws.resolve(part.rel)
            ensure_private_dir(path.parent)
            before = "" if part.existing is None else part.existing + ("" if part.existing.endswith("\n") else "\n")
            atomic_write(path, (before + "".join(part.lines)).encode("utf-8", "surrogateescape"),
                         mode=0o600 if part.existing is None else path.stat().st_mode & 0o777)

    def memory_file(self, item: MemoryFileIn) -> None:
        """CLAUDE.md / AGENTS.md of the other tool, kept as it is under
        ``memory/imports/<source>/`` (indexed, searchable; not a context file of this
        agent, which has its own AGENTS.md)."""
        try:
            data = item.path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.report.unreadable.append((str(item.path), str(exc)))
            return
        name = "-".join(Path(item.name).parts[:-1]) or "home"
        base = f"memory/imports/{item.source}/{_slug(name, 12) or 'home'}"
        # the slug is cut and folds "a.b" and "a/b" into "a-b": a hash of the folder keeps
        # every file its own name
        short = hashlib.sha256(item.name.encode()).hexdigest()[:6]
        legacy = self.ws.resolve(f"{base}-{Path(item.name).name}")
        if legacy.exists() and legacy.read_bytes() == data:
            self.report.duplicates += 1  # an earlier version's import, under the name without the hash
            return
        self.copy_bytes(f"{base}-{short}-{Path(item.name).name}", data, text, via=f"import {item.source}")

    def copy_bytes(self, rel: str, data: bytes, text: str, *, via: str) -> bool:
        """Write ``data`` at ``rel`` unless the same bytes are there already (a duplicate)
        or other bytes are (kept: never overwritten)."""
        path = self.ws.resolve(rel)
        if path.exists():
            if path.read_bytes() == data:
                self.report.duplicates += 1
            else:
                self.report.notes.append(f"{rel}: exists with other content: kept yours, not imported")
            return False
        if rel in self.seen:
            self.report.duplicates += 1
            return False
        self.seen.add(rel)
        if any(line.strip() and line in self.tombstones for line in text.splitlines()):
            kept = "".join(line for line in text.splitlines(keepends=True)
                           if not (line.strip() and line in self.tombstones))
            self.report.forgotten += len(text.splitlines()) - len(kept.splitlines())
            data, text = kept.encode("utf-8"), kept
        if (_place(rel), text) in self.quarantined:
            self.report.duplicates += 1
            self.report.notes.append(f"{rel}: in quarantine since an earlier import (not quarantined again)")
            return False
        if not self._allowed(text, rel, via):
            return False
        self.report.imported += 1
        self.report.files.append(rel)
        if not self.dry_run:
            ensure_private_dir(path.parent)
            atomic_write(path, data, mode=0o600)
        return True
