"""The agent workspace on disk: safe path resolution, safe reads, atomic writes, and the
one file-lock helper (:func:`lock_fd`, and :func:`locked` over it for a lock file) every
part of soulframe uses.

Every write of a memory or context file leaves either the old bytes or the new ones, never
a mix, even when the disk fills up or the process dies half-way: the new content goes to a
temporary file beside the target, is fsynced, and is renamed over it (:func:`atomic_write`;
:func:`update_locked` does the same under the file's lock for a read–change–write). A full
disk is reported as :class:`StorageFullError`, one line naming the file.

Every path an agent, a tool or a config value names is resolved through
:meth:`Workspace.resolve`, which refuses ``..``, absolute paths and symlinks that lead
outside the workspace.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from .model import PathEscapeError, SoulframeError, SoulframeWarning, WorkspaceTemplate

DIR_MODE = 0o700
FILE_MODE = 0o600
#: the first-run ritual: only seeded into a brand-new workspace
FIRST_RUN_FILE = "BOOTSTRAP.md"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 where soulframe creates them.

    Every directory created here is 0700, not only the last one: ``mkdir(parents=True)``
    gives the parents the umask's default (often 0755), so ``~/.soulframe`` would be
    listable by every user of the machine. Directories that already exist are left alone.
    """
    path = path.expanduser()
    if path.exists():
        return path
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:  # created meanwhile by another process: theirs to keep
            continue
        os.chmod(d, DIR_MODE)  # mkdir's mode is filtered by the umask
    return path


class StorageFullError(SoulframeError):
    """A write failed because the disk (or a quota, or a file-size limit) is full; the
    file it was writing is as it was before."""


#: the errors that mean "no room": the disk, a quota, a file-size limit (RLIMIT_FSIZE)
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def storage_full(exc: BaseException) -> str | None:
    """A one-line reason when ``exc`` means the disk (or a quota) is full — an
    ``OSError`` (ENOSPC, EDQUOT, EFBIG), SQLite's "database or disk is full", PostgreSQL's
    disk_full (SQLSTATE 53100) — else None."""
    if isinstance(exc, StorageFullError):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno in _FULL:
        return os.strerror(exc.errno).lower()
    text = str(exc)
    module = type(exc).__module__
    if "sqlite" in module or "sqlean" in module:  # sqlite3, or sqlean's build of it
        if "disk is full" in text:
            return "the memory index could not be written: the disk is full"
        if "disk I/O error" in text:  # what SQLite makes of EFBIG, and of some full disks
            return "the memory index could not be written (disk I/O error; is the disk full?)"
    if getattr(exc, "sqlstate", None) in ("53100", "53200", "53400"):
        return f"the database is out of space ({text.splitlines()[0] if text else 'disk full'})"
    return None


def _fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def directory_identity(path: Path | str) -> tuple[int, int] | None:
    """Which directory ``path`` names now (device, inode), or None while there is none: a
    watcher compares it to tell a workspace replaced under the same path (``mv ws ws-old;
    mkdir ws``) from one that is still the same."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def atomic_write(path: Path, data: str | bytes, *, mode: int = FILE_MODE) -> None:
    """Write a file so a crash or a full disk leaves either the old content or the new,
    never half of it: a temporary file beside it, fsynced, renamed over it. A full disk
    raises :class:`StorageFullError` naming the file (which is unchanged)."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        why = storage_full(exc)
        if why is not None and not isinstance(exc, StorageFullError):
            raise StorageFullError(f"{path.name}: not written: {why}; the file is unchanged") from exc
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def locked_file(path: Path) -> Iterator[int]:
    """Hold :func:`lock_fd` on the file ``path`` names (created 0600 if missing) and yield
    its descriptor. Writers replace files by rename, so a lock taken on a file that was
    replaced while we waited is the wrong one: it is dropped and taken again on the file
    the path names now."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        lock_fd(fd)
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        held = os.fstat(fd)
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        unlock_fd(fd)
        os.close(fd)
    try:
        yield fd
    finally:
        unlock_fd(fd)
        os.close(fd)


def update_locked(path: Path, change: Callable[[bytes], bytes | None]) -> bytes:
    """Read–change–write ``path`` under its lock: ``change`` gets the current bytes and
    returns the new ones (None: leave the file alone), which replace the file atomically
    (:func:`atomic_write`, the file's mode kept). Concurrent writers wait for each other, so
    none loses another's change; a full disk leaves the old bytes. Returns the bytes the
    file held before. Never writes through a symlink."""
    path = Path(path)
    if path.is_symlink():
        raise PathEscapeError(f"{path.name}: refusing to write through a symlink")
    existed = path.exists()
    try:
        with locked_file(path) as fd:
            st = os.fstat(fd)
            old = _read_all(fd, st.st_size)
            written = False
            try:
                new = change(old)
                if new is not None and new != old:
                    atomic_write(path, new, mode=stat.S_IMODE(st.st_mode))
                    written = True
            finally:
                if not existed and not written and not old:  # only the lock created it
                    with contextlib.suppress(OSError):
                        os.unlink(path)
            return old
    except OSError as exc:
        why = storage_full(exc)
        if why is None:
            raise
        raise StorageFullError(f"{path.name}: not written: {why}; the file is unchanged") from exc


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        block = os.pread(fd, max(size - offset, 65536), offset)
        if not block:
            return b"".join(chunks)
        chunks.append(block)
        offset += len(block)


def create_exclusive(path: Path, data: str, *, mode: int = FILE_MODE) -> bool:
    """Create ``path`` only if it does not exist. Returns False if it already did. The file
    appears whole or not at all: written to a temporary file, fsynced, then hard-linked to
    its name (which fails if the name exists); where hard links are not supported, an
    ``O_EXCL`` create removed again if the write fails. A full disk raises
    :class:`StorageFullError`."""
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            return _create_exclusive_in_place(path, data, mode)
        _fsync_dir(path.parent)
        return True
    except OSError as exc:
        why = storage_full(exc)
        if why is None:
            raise
        raise StorageFullError(f"{path.name}: not written: {why}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _create_exclusive_in_place(path: Path, data: str, mode: int) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return True


def _absolute(p: str | os.PathLike[str]) -> Path:
    return Path(p).expanduser().resolve()


@attrs.frozen
class Workspace:
    """A workspace directory. ``root`` is absolute and resolved."""

    root: Path = attrs.field(converter=_absolute)

    def resolve(self, relative: str | os.PathLike[str], *, must_exist: bool = False) -> Path:
        """Turn a workspace-relative path into an absolute one inside the workspace.

        Refuses absolute paths, ``..`` segments and symlinks pointing outside the workspace,
        with a :class:`PathEscapeError` naming the path.
        """
        return self.locate(relative, must_exist=must_exist)[0]

    def locate(self, relative: str | os.PathLike[str], *, must_exist: bool = False) -> tuple[Path, Path]:
        """:meth:`resolve`, returning the real path too (the file a link reaches), so a
        caller that judges the file reached resolves it once."""
        raw = os.fspath(relative)
        if not raw or "\x00" in raw:
            raise PathEscapeError(f"{raw!r}: not a valid path")
        candidate = Path(raw)
        if candidate.is_absolute() or raw.startswith("~"):
            raise PathEscapeError(f"{raw}: absolute paths are not allowed; use a path inside the workspace")
        if ".." in candidate.parts:
            raise PathEscapeError(f"{raw}: '..' is not allowed; use a path inside the workspace")
        full = self.root / candidate
        try:
            real = full.resolve()
        except RuntimeError:  # Python raises this, not OSError, for a symlink loop
            raise PathEscapeError(f"{raw}: a symlink loop; remove the link or point it at a file") from None
        if real != self.root and self.root not in real.parents:
            raise PathEscapeError(f"{raw}: resolves outside the workspace (through a symlink)")
        if must_exist and not real.exists():
            raise SoulframeError(f"{raw}: no such file in the workspace {self.root}")
        return full, real

    def relative(self, path: Path) -> str:
        """``path`` relative to the workspace, with forward slashes."""
        return Path(path).resolve().relative_to(self.root).as_posix()

    def contains(self, path: Path) -> bool:
        try:
            real = Path(path).resolve()
        except RuntimeError:  # a symlink loop contains nothing
            return False
        return real == self.root or self.root in real.parents

    def read_text(self, relative: str | os.PathLike[str]) -> str:
        """Read a workspace file as UTF-8 (invalid bytes replaced, never a traceback)."""
        path = self.resolve(relative, must_exist=True)
        return path.read_bytes().decode("utf-8", errors="replace")

    def write_text(self, relative: str | os.PathLike[str], text: str) -> Path:
        """Atomically write a workspace file, creating parent directories 0700."""
        path = self.resolve(relative)
        ensure_private_dir(path.parent)
        if path.is_symlink():
            raise PathEscapeError(f"{relative}: refusing to write through a symlink")
        atomic_write(path, text, mode=_keep_mode(path))
        return path

    def ensure(self) -> Path:
        return ensure_private_dir(self.root)


def _keep_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return FILE_MODE


# --------------------------------------------------------------------------- identity

#: ``(st_dev, st_ino)``: one file, whatever name, symlink or hard link reaches it
FileId = tuple[int, int]


def file_id(st: os.stat_result) -> FileId:
    return (st.st_dev, st.st_ino)


@attrs.frozen
class FileIdentities:
    """Which of some workspace-relative names reach which file, for "privacy follows the
    file reached": a context file that is MEMORY.md or USER.md under another name (a
    symlink, a hard link) is judged as MEMORY.md or USER.md, and one whose hard links are
    not all among these names may be a file from anywhere (``ln /elsewhere/x SOUL.md``).

    Built with one ``lstat`` per name (and a ``stat`` for a symlink); callers build it only
    when a file they read has more than one hard link, so the common case (a file with one
    name) costs nothing. The memory files under ``memory/`` have their own rules
    (:class:`soulframe._engine.memory.files.Discovery`).
    """

    #: file -> the names reaching it, each with whether it is a hard link (not a symlink)
    by_id: dict[FileId, tuple[tuple[str, bool], ...]]

    @classmethod
    def of(cls, root: Path, names: Iterable[str]) -> FileIdentities:
        found: dict[FileId, list[tuple[str, bool]]] = {}
        for name in dict.fromkeys(names):
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
                hard = not stat.S_ISLNK(st.st_mode)
                if not hard:
                    st = os.stat(path)
            except (OSError, ValueError):  # missing, dangling, a loop, a NUL in the name
                continue
            if stat.S_ISREG(st.st_mode):
                found.setdefault(file_id(st), []).append((name, hard))
        return cls({k: tuple(v) for k, v in found.items()})

    def names_of(self, st: os.stat_result) -> tuple[str, ...]:
        """The names (of those given) reaching the file ``st`` describes."""
        return tuple(n for n, _hard in self.by_id.get(file_id(st), ()))

    def links_elsewhere(self, st: os.stat_result) -> int:
        """How many hard links of the file ``st`` describes are none of the names given:
        links to somewhere else (outside the workspace, or another folder of it)."""
        hard = sum(1 for _n, h in self.by_id.get(file_id(st), ()) if h)
        return max(0, st.st_nlink - hard)


# --------------------------------------------------------------------------- seeding


def workspace_templates(pm: Any = None) -> list[WorkspaceTemplate]:
    """Every template plugins offer (``register_workspace_templates``), later plugins
    replacing same-named ones, in the order they were first offered."""
    from . import plugins as _plugins

    if pm is None:
        pm = _plugins.make_plugin_manager()
    named: dict[str, WorkspaceTemplate] = _plugins.collect_named(pm, "register_workspace_templates")
    return list(named.values())


def seed_workspace(
    root: str | os.PathLike[str],
    *,
    agent_type: str = "open",
    templates: Iterable[WorkspaceTemplate] | None = None,
    pm: Any = None,
) -> list[str]:
    """Create every missing template file of ``agent_type`` in the workspace ``root``
    (seed 000 §3): atomically, with ``O_EXCL``, never overwriting a file that exists, so it
    is safe to run again. The workspace and its directories are created 0700, files 0600.
    BOOTSTRAP.md (the first-run ritual) is only created when none of the other template
    files exist yet: once the first run is over, seeding again does not restart it.

    :returns: the workspace-relative names created (directories end in ``/``).
    """
    if agent_type not in ("open", "predefined"):
        raise SoulframeError(f"agent type {agent_type!r} — expected 'open' or 'predefined'")
    ws = Workspace(ensure_private_dir(Path(root).expanduser()))
    chosen = list(templates) if templates is not None else workspace_templates(pm)
    # BOOTSTRAP.md is the first-run ritual, "deleted after use" (seed 003 §1.1): seeding it
    # into a workspace that already has its other files would start the ritual over on
    # the next session. So it is only created in a brand-new workspace.
    new_workspace = not any(
        (ws.root / t.name).exists() or (ws.root / t.name).is_symlink()
        for t in chosen
        if not t.is_dir and t.name != FIRST_RUN_FILE
    )
    created: list[str] = []
    for t in chosen:
        if agent_type not in t.agent_types:
            continue
        if t.name == FIRST_RUN_FILE and not new_workspace:
            continue
        try:
            path = ws.resolve(t.name.rstrip("/"))
        except PathEscapeError as exc:
            # a symlink out of the workspace: never write through it, keep seeding the rest
            warnings.warn(f"{t.name} was not created: {exc}", SoulframeWarning, stacklevel=2)
            continue
        if t.is_dir:
            if not path.exists() and not path.is_symlink():
                ensure_private_dir(path)
                created.append(t.name)
            continue
        if path.parent != ws.root:
            ensure_private_dir(path.parent)
        if create_exclusive(path, t.content):
            created.append(t.name)
    return created


# --------------------------------------------------------------------------- locks


def lock_fd(fd: int, *, blocking: bool = True) -> bool:
    """Take an exclusive advisory lock (``flock``) on an open file: the one lock helper
    every writer and indexer uses, so two processes never interleave an append or a sync.
    Returns ``False`` when ``blocking`` is false and another process holds it. Where there is
    no ``fcntl`` (Windows) it returns ``True`` at once: one small ``O_APPEND`` write is
    atomic enough there, and the sync lock is only an optimisation."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def unlock_fd(fd: int) -> None:
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def locked(path: Path, *, blocking: bool = True) -> Iterator[bool]:
    """Hold :func:`lock_fd` on the lock file ``path`` (created 0600 if missing) for the
    ``with`` block; yields False when ``blocking`` is off and another holder has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        if not lock_fd(fd, blocking=blocking):
            yield False
            return
        try:
            yield True
        finally:
            unlock_fd(fd)
    finally:
        os.close(fd)
