"""``soulframe export``: the workspace's files in one archive with a manifest, and its
restore (``soulframe import soulframe``).

The archive is a gzipped tar: ``manifest.json`` first, then every file under ``files/``.
The manifest records the format and soulframe versions, the agent, and each file's path,
size, mode and sha256; provenance comments stay in the Markdown as they are. Left out:
the index and every database (they live in ``state_dir`` and are rebuilt from the
Markdown), hidden files and folders (``.git``, editors' files; the consolidation diary
``memory/.diary`` is kept),
symbolic links, and the configuration (``soulframe.toml`` can hold API keys; keys set
with ``soulframe keys`` live outside the workspace).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from soulframe import SoulframeError
from soulframe.memorykit import SKIP_DIRS

if TYPE_CHECKING:
    from soulframe import AgentLike

FORMAT = "soulframe-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: the consolidation diary and its undo snapshots: hidden, but the agent's own history
DIARY = "memory/.diary"
#: configuration and local state that never go into an archive
EXCLUDED = {"soulframe.toml", "soulframe.json", ".env"}
_EXCLUDED_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".db", ".lock")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("soulframe")
    except PackageNotFoundError:
        return "0+unknown"


def workspace_files(agent: AgentLike) -> Iterator[tuple[str, Path]]:
    root = agent.workspace.root
    state = Path(agent.state_dir).resolve()
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirs[:] = sorted(d for d in dirs if (not d.startswith(".") or (here / d) == root / DIARY)
                         and d not in SKIP_DIRS
                         and not (here / d).is_symlink() and (here / d).resolve() != state)
        for name in sorted(files):
            p = here / name
            if (name.startswith(".") or name in EXCLUDED or name.endswith(_EXCLUDED_SUFFIXES)
                    or p.is_symlink() or not p.is_file()):
                continue
            yield p.relative_to(root).as_posix(), p


def export(agent: AgentLike, out: Path, progress: Any = None) -> dict[str, Any]:
    """Write the archive to ``out`` (0600); returns the manifest."""
    entries = []
    blobs: list[tuple[str, bytes, int]] = []
    found = list(workspace_files(agent))
    for i, (rel, p) in enumerate(found):
        data = p.read_bytes()
        mode = p.stat().st_mode & 0o777
        entries.append({"path": rel, "size": len(data), "mode": f"{mode:o}",
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "provenance_lines": data.count(b"<!-- src:")})
        blobs.append((rel, data, mode))
        if progress is not None:
            progress(i + 1, len(found))
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "soulframe_version": _version(),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "agent": agent.id, "files": entries,
        "left_out": "index and databases, configuration (soulframe.toml, keys), hidden files, links",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    # written beside OUT (mkstemp: 0600), renamed over it once complete: a backup already
    # there (--force) stays whole until the new one is, and its mode is not inherited
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            with tarfile.open(fileobj=raw, mode="w:gz") as tar:
                _add(tar, MANIFEST, json.dumps(manifest, indent=2).encode("utf-8"), 0o600)
                for rel, data, mode in blobs:
                    _add(tar, f"files/{rel}", data, mode)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return manifest


def _add(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def read(archive: Path) -> Iterator[tuple[dict[str, Any], str, bytes, int]]:
    """Yield ``(manifest, path, bytes, mode)`` for every file of the archive, checked against
    the manifest (checksum, a safe relative path, a regular file)."""
    try:
        tar = tarfile.open(archive, mode="r:*")
    except (OSError, tarfile.TarError) as exc:
        raise SoulframeError(f"{archive}: not a soulframe export ({exc})") from exc
    with tar:
        first = tar.next()
        if first is None or first.name != MANIFEST or not first.isfile():
            raise SoulframeError(f"{archive}: not a soulframe export (no {MANIFEST} first)")
        fh = tar.extractfile(first)
        manifest = json.loads(fh.read().decode("utf-8")) if fh else {}
        if manifest.get("format") != FORMAT:
            raise SoulframeError(f"{archive}: {MANIFEST}: format is {manifest.get('format')!r}, not {FORMAT!r}")
        if int(manifest.get("format_version", 0)) > FORMAT_VERSION:
            raise SoulframeError(f"{archive}: format version {manifest['format_version']} is newer than this "
                                 f"soulframe reads ({FORMAT_VERSION}); upgrade soulframe")
        expected = {e["path"]: e for e in manifest.get("files", [])}
        for member in tar.getmembers()[1:]:
            if not member.name.startswith("files/"):
                raise SoulframeError(f"{archive}: unexpected member {member.name!r}")
            rel = member.name[len("files/"):]
            pure = PurePosixPath(rel)
            if not member.isfile() or pure.is_absolute() or ".." in pure.parts or rel not in expected:
                raise SoulframeError(f"{archive}: refusing member {member.name!r} (not a plain file the "
                                     "manifest lists, or a path out of the workspace)")
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            if hashlib.sha256(data).hexdigest() != expected[rel]["sha256"]:
                raise SoulframeError(f"{archive}: {rel}: checksum does not match the manifest (damaged?)")
            yield manifest, rel, data, int(str(expected[rel].get("mode", "600")), 8) & 0o777
