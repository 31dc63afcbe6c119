"""The one line the command line prints for an error that is no bug of soulframe's: a
:class:`SoulframeError`, a full disk, a read-only or missing place. Shared by every command
(:class:`~soulframe._engine.cli.app.SoulframeGroup`) and by ``memory watch``, which reports a
failed sync and goes on. With ``--json`` the error is also one JSON object on standard
output (:func:`report`), so a script that parses what a command prints gets it too."""

from __future__ import annotations

import errno
import json
import os
from typing import IO, Any

import click

from ..model import ConfigError, SoulframeError


class StartError(click.ClickException):
    """What keeps a command from starting — a missing workspace, a config file that does not
    load — said in one line. Exit status 2, as for a usage error: the command line or its
    setup must change before a run can succeed."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        # shown after the command's context is gone, or before it was made
        color = False if no_color() else self.show_color
        click.secho(f"Error: {self.format_message()}", fg="red", err=True, color=color)


class Declined(click.ClickException):
    """A confirmation the user answered no (click's Abort): said as click says it,
    ``Aborted!``, and with ``--json`` as an error object like any other. Exit status 1."""

    def __init__(self) -> None:
        super().__init__("aborted: the confirmation was declined")

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo("Aborted!", err=True)


def no_color() -> bool:
    """NO_COLOR (no-color.org): any non-empty value turns colour off, even on a terminal —
    for what the command line prints outside a click context (warnings while plugins load,
    an error before the command started) as for what it prints inside one."""
    return bool(os.environ.get("NO_COLOR"))


def report(exc: click.ClickException, *, as_json: bool) -> None:
    """Say ``exc`` to the user: click's ``Error: ...`` on standard error and, with
    ``--json``, ``{"error": {"message", "code", and "file", "line", "key" when known}}`` on
    standard output too — the script gets an answer to parse, its log the usual line. The
    exit status is ``exc.exit_code`` either way."""
    exc.show()
    if as_json:  # as echo_json prints an answer (state.py, which imports this module)
        click.echo(json.dumps({"error": error_fields(exc)}, indent=2, ensure_ascii=False, default=str))


def error_fields(exc: click.ClickException) -> dict[str, Any]:
    """The ``--json`` error object: the message and the exit code, plus the file, line and
    key the error names when the error behind it says them."""
    fields: dict[str, Any] = {"message": exc.format_message(), "code": exc.exit_code}
    cause = exc.__cause__
    if isinstance(cause, ConfigError):
        fields |= {k: v for k, v in (("file", cause.file), ("line", cause.line), ("key", cause.key))
                   if v is not None}
    elif isinstance(cause, OSError) and cause.filename:
        fields["file"] = os.fsdecode(cause.filename)
    return fields


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
