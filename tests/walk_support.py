"""Counting what a piece of code really does to the file system, without replacing anything:
Python's audit events (``os.scandir``, ``open``) are raised by the real calls, and a hook
installed once counts those under the directories a test watches."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs


@attrs.define
class Tally:
    """What happened under ``root`` while the tally was open."""

    root: str
    #: directories listed (``os.scandir``, also what ``os.walk`` and ``Path.iterdir`` use)
    listed: list[str] = attrs.field(factory=list)
    #: files opened (``open``, ``Path.read_bytes``)
    opened: list[str] = attrs.field(factory=list)

    def listings_of(self, directory: Path) -> int:
        return sum(1 for d in self.listed if os.path.realpath(d) == os.path.realpath(directory))


_open: list[Tally] = []
_guard = threading.Lock()
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _open or event not in ("os.scandir", "open"):
        return
    path = args[0] if args else None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        return
    path = os.fspath(path)
    for tally in list(_open):
        if path == tally.root or path.startswith(tally.root + os.sep):
            (tally.listed if event == "os.scandir" else tally.opened).append(path)


@contextlib.contextmanager
def file_system_calls(root: Path) -> Iterator[Tally]:
    """Count the directory listings and file opens under ``root`` in the block."""
    global _installed
    with _guard:
        if not _installed:
            sys.addaudithook(_hook)  # for the rest of the process: a hook cannot be removed
            _installed = True
    tally = Tally(str(root))
    _open.append(tally)
    try:
        yield tally
    finally:
        _open.remove(tally)
