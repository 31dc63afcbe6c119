"""The one line the command line prints for an error that is no bug of soulframe's: a
:class:`SoulframeError`, a full disk, a read-only or missing place. Shared by every command
(:class:`~soulframe._engine.cli.app.SoulframeGroup`) and by ``memory watch``, which reports a
failed sync and goes on."""

from __future__ import annotations

import errno
import os

from ..model import SoulframeError


def error_line(exc: BaseException, *, when_full: str = "free some space and run the command again") -> str | None:
    """The one line for an error that is no bug of soulframe's — a :class:`SoulframeError`,
    a full disk (then ``when_full`` says what to do), a read-only or missing place — or None
    for anything else (a bug: its traceback is worth more)."""
    from ..workspace import StorageFullError, storage_full

    if isinstance(exc, StorageFullError):
        return f"{exc}; {when_full}"
    if isinstance(exc, SoulframeError):
        return str(exc)
    why = storage_full(exc)  # a full disk is the machine's state, not a bug: one line
    if why is not None:
        return f"{why}; {when_full}"
    return _unwritable(exc)  # a read-only or missing place, the same


#: what a place the command must read or write can answer that is no bug of soulframe's
_PLACE_ERRORS = {errno.EACCES: "permission denied", errno.EPERM: "not permitted",
                 errno.EROFS: "read-only file system", errno.ENOENT: "no such file or directory",
                 errno.ENOTDIR: "a part of the path is not a directory", errno.EISDIR: "is a directory",
                 errno.ENAMETOOLONG: "the name is too long"}


def _unwritable(exc: BaseException) -> str | None:
    """One line for an OS error about a place (a read-only workspace, a state directory
    owned by another user, a missing folder), naming the path; None for anything else."""
    if not isinstance(exc, OSError) or exc.errno not in _PLACE_ERRORS or not exc.filename:
        return None
    hint = {errno.EROFS: "; the workspace and state_dir must be writable",
            errno.EACCES: "; check its owner and permissions",
            errno.EPERM: "; check its owner and permissions"}.get(exc.errno, "")
    return f"{os.fsdecode(exc.filename)}: {_PLACE_ERRORS[exc.errno]}{hint}"
