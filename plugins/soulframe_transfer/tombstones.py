"""What ``forget`` removed, kept as hashes (never the text) so an import does not bring it
back: ``<state_dir>/forgotten/<agent>.txt``, one ``hmac:<hex>`` per line, 0600.

The hash is keyed (HMAC-SHA256) with a random key of the agent's, ``<agent>.key`` beside the
list (0600): a plain hash of a short forgotten fact (a four-digit door code has 10,000
candidates) is undone by hashing every guess, and the list alone does not allow that. A
line of bare hex is a plain sha256 tombstone of an older release: still honoured, and
rewritten keyed by the first import that meets the entry it stands for.

Nothing is created until there is something to keep: reading (an import, a dry run) writes
nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from soulframe.kit import ensure_private_dir, update_locked
from soulframe.memorykit import strip_provenance as strip

if TYPE_CHECKING:
    from soulframe import AgentLike

_MARKER = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)?")
KEYED = "hmac:"


def normalise(line: str) -> str:
    """An entry as compared for tombstones: no provenance, no list marker, whitespace
    collapsed, case folded."""
    text = _MARKER.sub("", strip(line), count=1)
    return " ".join(text.split()).casefold()


def legacy_digest(line: str) -> str:
    """The unkeyed sha256 older releases wrote."""
    return hashlib.sha256(normalise(line).encode("utf-8")).hexdigest()


class Tombstones:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.key_path = path.with_suffix(".key")
        self._key: bytes | None = None
        self._keyed: set[str] | None = None
        self._legacy: set[str] = set()
        #: legacy hash -> keyed hash of the entries met since: what :meth:`upgrade` rewrites
        self._met: dict[str, str] = {}

    @classmethod
    def for_agent(cls, agent: AgentLike) -> Tombstones:
        return cls(Path(agent.state_dir) / "forgotten" / f"{agent.state_key}.txt")

    def _read_key(self, create: bool) -> bytes | None:
        if self._key is None:
            try:
                self._key = bytes.fromhex(self.key_path.read_text(encoding="ascii").strip())
            except FileNotFoundError:
                if not create:
                    return None
                self._new_key()
                return self._read_key(create)
        return self._key

    def _new_key(self) -> None:
        folder = ensure_private_dir(self.key_path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.key_path.name}.", suffix=".tmp", dir=folder)  # 0600
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            # a link never replaces: two forgets at once agree on the key the first put there
            try:
                os.link(tmp, self.key_path)
            except FileExistsError:
                pass
            except OSError:  # a file system without hard links
                if not self.key_path.exists():
                    os.replace(tmp, self.key_path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _digest(self, text: str, key: bytes) -> str:
        return KEYED + hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()

    @property
    def hashes(self) -> set[str]:
        """The keyed hashes (``hmac:...``); the legacy ones are kept apart."""
        if self._keyed is None:
            try:
                words = self.path.read_text(encoding="ascii").split()
            except FileNotFoundError:
                words = []
            self._keyed = {w for w in words if w.startswith(KEYED)}
            self._legacy = {w for w in words if not w.startswith(KEYED)}
        return self._keyed

    def __contains__(self, line: str) -> bool:
        text = normalise(line)
        if not text:
            return False
        keyed = self.hashes  # reads the file, the legacy hashes too
        key = self._read_key(create=False)
        if key is not None and self._digest(text, key) in keyed:
            return True
        if self._legacy:
            old = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if old in self._legacy:
                self._met[old] = text
                return True
        return False

    def add(self, lines: Iterable[str]) -> int:
        texts = {t for t in (normalise(x) for x in lines) if t}
        if not texts:
            return 0
        key = self._read_key(create=True)
        assert key is not None
        new = {self._digest(t, key) for t in texts} - self.hashes
        if new:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, "".join(h + "\n" for h in sorted(new)).encode("ascii"))
                os.fsync(fd)
            finally:
                os.close(fd)
            self.hashes.update(new)
        return len(new)

    def upgrade(self) -> int:
        """Rewrite the legacy hashes of the entries met since as keyed ones (under the
        file's lock: a forget adding meanwhile keeps its lines)."""
        if not self._met:
            return 0
        key = self._read_key(create=True)
        assert key is not None
        swap = {old: self._digest(text, key) for old, text in self._met.items()}

        def rewrite(data: bytes) -> bytes:
            words = data.decode("ascii", errors="replace").split()
            out = list(dict.fromkeys(swap.get(w, w) for w in words))
            return "".join(w + "\n" for w in out).encode("ascii")

        with contextlib.suppress(FileNotFoundError):
            update_locked(self.path, rewrite)
        self._legacy -= set(swap)
        self.hashes.update(swap.values())
        self._met.clear()
        return len(swap)
