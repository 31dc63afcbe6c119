"""What an import did, for the closing report and ``--json``."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class ImportReport:
    source: str
    dry_run: bool = False
    #: conversations (or files) brought in
    imported: int = 0
    messages: int = 0
    #: conversations an earlier import wrote that got the messages added since
    updated: int = 0
    #: already in the workspace (an earlier import of the same export)
    duplicates: int = 0
    #: messages or files the write-time checks refused (kept in quarantine)
    refused: int = 0
    #: messages a `forget` tombstone kept out
    forgotten: int = 0
    #: (where, why) of what could not be read
    unreadable: list[tuple[str, str]] = attrs.field(factory=list)
    #: workspace-relative paths written (or that would be)
    files: list[str] = attrs.field(factory=list)
    #: notes: kept-yours conflicts, config written, ...
    notes: list[str] = attrs.field(factory=list)
    #: configuration keys with no soulframe equivalent: (key, line, why)
    unmapped: list[tuple[str, int | None, str]] = attrs.field(factory=list)
    #: configuration keys mapped: (their key, our key, value)
    mapped: list[tuple[str, str, Any]] = attrs.field(factory=list)

    @property
    def nothing_read(self) -> bool:
        """Something could not be read, and nothing else was: the import failed."""
        return bool(self.unreadable) and not (self.imported or self.updated or self.duplicates
                                              or self.refused or self.forgotten or self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "dry_run": self.dry_run, "imported": self.imported,
            "messages": self.messages, "updated": self.updated, "duplicates": self.duplicates, "refused": self.refused,
            "forgotten": self.forgotten,
            "unreadable": [{"where": w, "why": y} for w, y in self.unreadable],
            "files": self.files, "notes": self.notes,
            "config": {
                "mapped": [{"from": a, "to": b, "value": v} for a, b, v in self.mapped],
                "unmapped": [{"key": k, "line": ln, "why": y} for k, ln, y in self.unmapped],
            },
        }

    def lines(self) -> list[str]:
        verb = "would import" if self.dry_run else "imported"
        out = [f"{self.source}: {verb} {self.imported} "
               f"({self.messages} message(s)); "
               + (f"{self.updated} continued since (new messages added); " if self.updated else "")
               + f"{self.duplicates} already here (skipped); "
               f"{self.refused} refused by the write-time checks (quarantined); "
               f"{len(self.unreadable)} unreadable"
               + (f"; {self.forgotten} kept out as forgotten" if self.forgotten else "")]
        out += [f"  unreadable: {w}: {y}" for w, y in self.unreadable]
        out += [f"  config: {a} -> {b} = {v!r}" for a, b, v in self.mapped]
        out += [f"  not mapped: {k}" + (f" (line {ln})" if ln else "") + f": {y}"
                for k, ln, y in self.unmapped]
        out += [f"  {n}" for n in self.notes]
        return out
