"""What ``forget`` removed, kept as hashes (never the text) so an import does not bring it
back: ``<state_dir>/forgotten/<agent>.txt``, one sha256 per line, 0600."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from soulframe.kit import ensure_private_dir
from soulframe.memorykit import strip_provenance as strip

if TYPE_CHECKING:
    from soulframe import AgentLike

_MARKER = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)?")


def normalise(line: str) -> str:
    """An entry as compared for tombstones: no provenance, no list marker, whitespace
    collapsed, case folded."""
    text = _MARKER.sub("", strip(line), count=1)
    return " ".join(text.split()).casefold()


def digest(line: str) -> str:
    return hashlib.sha256(normalise(line).encode("utf-8")).hexdigest()


class Tombstones:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._hashes: set[str] | None = None

    @classmethod
    def for_agent(cls, agent: AgentLike) -> Tombstones:
        folder = ensure_private_dir(Path(agent.state_dir) / "forgotten")
        return cls(folder / f"{agent.state_key}.txt")

    @property
    def hashes(self) -> set[str]:
        if self._hashes is None:
            try:
                self._hashes = set(self.path.read_text(encoding="ascii").split())
            except FileNotFoundError:
                self._hashes = set()
        return self._hashes

    def __contains__(self, line: str) -> bool:
        return bool(normalise(line)) and digest(line) in self.hashes

    def add(self, lines: Iterable[str]) -> int:
        new = {digest(x) for x in lines if normalise(x)} - self.hashes
        if new:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, "".join(h + "\n" for h in sorted(new)).encode("ascii"))
                os.fsync(fd)
            finally:
                os.close(fd)
            self.hashes.update(new)
        return len(new)
