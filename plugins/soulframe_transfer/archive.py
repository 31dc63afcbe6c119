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
import re
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

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
            if (name.startswith(".") or _excluded(name) or p.is_symlink() or not p.is_file()):
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


def exported(rel: str) -> bool:
    """Whether :func:`workspace_files` can yield ``rel``: the only paths a restore writes
    (never a configuration file, a hidden file or folder but the diary, a database)."""
    parts = PurePosixPath(rel).parts
    if not parts:
        return False
    name = parts[-1]
    if name.startswith(".") or _excluded(name):
        return False
    for i, folder in enumerate(parts[:-1]):
        if folder in SKIP_DIRS or (folder.startswith(".") and "/".join(parts[:i + 1]) != DIARY):
            return False
    return True


def _excluded(name: str) -> bool:
    """A configuration or database file by its name, in any case: on a case-insensitive
    file system (macOS, Windows) ``Soulframe.TOML`` is the configuration too."""
    low = name.casefold()
    return low in EXCLUDED or low.endswith(_EXCLUDED_SUFFIXES)


Member = tuple[str, bytes, int]


def read(archive: Path) -> tuple[dict[str, Any], list[Member]]:
    """The manifest and every file of the archive as ``(path, bytes, mode)``, each checked
    against the manifest (checksum, a safe relative path export would have written, a
    regular file) and none missing, before any is returned: a damaged or hostile archive
    raises one :class:`SoulframeError` naming the problem, and nothing is written."""
    try:
        return _read(archive)
    except (OSError, EOFError, zlib.error, tarfile.TarError) as exc:
        # a download cut short ends in EOFError, which click would take for Ctrl-D
        raise SoulframeError(f"{archive}: damaged: cut short or corrupt ({exc or type(exc).__name__})") from exc


def _read(archive: Path) -> tuple[dict[str, Any], list[Member]]:
    try:
        tar = tarfile.open(archive, mode="r:*")
    except tarfile.ReadError:
        # tarfile's own message lists every compression it tried, one per line
        raise SoulframeError(f"{archive}: not a soulframe export: not a tar archive "
                             "(`soulframe export` writes a .tar.gz)") from None
    except (OSError, tarfile.TarError) as exc:
        raise SoulframeError(f"{archive}: not a soulframe export ({exc})") from exc
    with tar:
        first = tar.next()
        if first is None or first.name != MANIFEST or not first.isfile():
            raise SoulframeError(f"{archive}: not a soulframe export (no {MANIFEST} first)")
        manifest, expected = _manifest(archive, tar.extractfile(first))
        members: list[Member] = []
        seen: set[str] = set()
        refused: list[str] = []
        for member in tar.getmembers()[1:]:
            if not member.name.startswith("files/"):
                raise SoulframeError(f"{archive}: unexpected member {member.name!r}")
            rel = member.name[len("files/"):]
            pure = PurePosixPath(rel)
            if not member.isfile() or pure.is_absolute() or ".." in pure.parts or rel not in expected \
                    or pure.as_posix() != rel:
                raise SoulframeError(f"{archive}: refusing member {member.name!r} (not a plain file the "
                                     "manifest lists, or a path out of the workspace)")
            if not exported(rel):
                refused.append(rel)
                continue
            if rel in seen:
                raise SoulframeError(f"{archive}: {rel}: in the archive twice")
            seen.add(rel)
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            if hashlib.sha256(data).hexdigest() != expected[rel][0]:
                raise SoulframeError(f"{archive}: {rel}: checksum does not match the manifest (damaged?)")
            members.append((rel, data, expected[rel][1]))
    if refused:
        raise SoulframeError(f"{archive}: refusing what `soulframe export` never writes (configuration, "
                             f"hidden files, databases): {', '.join(refused)}")
    missing = sorted(set(expected) - seen)
    if missing:
        raise SoulframeError(f"{archive}: damaged: the manifest lists {len(missing)} file(s) the archive "
                             f"does not hold: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}")
    clash = sorted(f for f in seen if any(str(p) in seen for p in PurePosixPath(f).parents))
    if clash:
        raise SoulframeError(f"{archive}: {clash[0]}: one of its folders is a file in the archive too")
    return manifest, members


def _manifest(archive: Path, fh: IO[bytes] | None) -> tuple[dict[str, Any], dict[str, tuple[str, int]]]:
    """The manifest, and each listed path's (sha256, mode); a manifest that is not what
    export writes is named, not a traceback."""

    def bad(why: str) -> SoulframeError:
        return SoulframeError(f"{archive}: not a soulframe export ({MANIFEST}: {why})")

    try:
        manifest = json.loads(fh.read().decode("utf-8")) if fh else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict):
        raise bad("not a JSON object")
    if manifest.get("format") != FORMAT:
        raise SoulframeError(f"{archive}: {MANIFEST}: format is {manifest.get('format')!r}, not {FORMAT!r}")
    version = manifest.get("format_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise bad(f"format_version {version!r} is not a whole number")
    if version > FORMAT_VERSION:
        raise SoulframeError(f"{archive}: format version {version} is newer than this "
                             f"soulframe reads ({FORMAT_VERSION}); upgrade soulframe")
    files = manifest.get("files", [])
    if not isinstance(files, list):
        raise bad("files is not a list")
    expected: dict[str, tuple[str, int]] = {}
    for i, entry in enumerate(files):
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not path:
            raise bad(f"files[{i}] has no path")
        sha = entry.get("sha256")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise bad(f"{path}: no sha256 checksum")
        try:
            mode = int(str(entry.get("mode", "600")), 8)
        except ValueError:
            mode = -1
        if not 0 <= mode <= 0o7777:
            raise bad(f"{path}: mode {entry.get('mode')!r} is not an octal mode like 600")
        if path in expected:
            raise bad(f"{path} is listed twice")
        expected[path] = (sha, mode)
    return manifest, expected
