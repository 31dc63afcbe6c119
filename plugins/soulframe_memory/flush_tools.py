"""The tools a memory flush offers: ``read_file`` and ``write_file`` confined to the memory
files (``MEMORY.md`` and ``memory/**/*.md``), and, only when ``flush.allow_exec`` is on,
``exec`` with the workspace as its working directory.

Confinement is the core's :func:`soulframe.memorykit.confine_memory_path`: checked on
the path as written (no absolute paths, no ``..``, no backslashes) and on the path it really
resolves to (so ``memory/x.md`` being a symlink to ``SOUL.md`` or to ``/etc/passwd`` is
refused too). Writes never go through a symlink.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from soulframe import SoulframeError, ToolContext, ToolSpec
from soulframe.kit import Workspace, ensure_private_dir, update_locked
from soulframe.memorykit import (
    CURATED,
    MemoryPathError,
    confine_memory_path,
    mark_new_lines,
    strip_controls,
)

MAX_READ_CHARS = 50_000
MAX_WRITE_CHARS = 100_000
MAX_EXEC_OUTPUT = 10_000
#: environment variables whose names look like secrets are not passed to exec'd commands
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|DSN", re.I)


class ToolRefused(SoulframeError):
    """The model asked for something the flush tools do not allow (reported as a tool error)."""


class MemoryFiles:
    """The memory files of one workspace, as the flush tools see them."""

    def __init__(self, workspace: Workspace | Path | str, *, private: bool = True,
                 access: str = "rw") -> None:
        self.workspace = (
            workspace if isinstance(workspace, Workspace) else Workspace(Path(workspace))
        )
        #: a main, one-to-one session: the only kind that may see or change MEMORY.md
        self.private = private
        #: the sandbox's workspace access: ``ro`` and ``none`` refuse every write
        self.access = access
        self.written: list[str] = []
        #: SHA-256 of each file as read_file (or this flush's last write) left it: a whole-file
        #: write over a file changed since then is refused, not allowed to drop the change
        self.seen: dict[str, str] = {}
        #: called with (content, relative path) before a write; raises to refuse it (the
        #: flush passes soulframe.memorykit.guard: no injection or secret lands)
        self.check: Any = None

    @property
    def root(self) -> Path:
        return self.workspace.root

    def resolve(self, raw: Any) -> tuple[str, Path]:
        """Check ``raw`` and return (normalised relative path, absolute path)."""
        try:
            relative, real_relative, full = confine_memory_path(self.workspace, raw)
        except MemoryPathError as exc:
            raise ToolRefused(str(exc)) from None
        if not self.private and (relative in CURATED or real_relative in CURATED):
            # MEMORY.md is private to the main session (seed 003 §2.5): a group or
            # sub-agent flush must neither read it nor let others' words into it
            raise ToolRefused(
                f"{relative} is private to the main session; use memory/YYYY-MM-DD.md here"
            )
        return relative, full

    def read(self, path: Any) -> str:
        relative, full = self.resolve(path)
        if not full.exists():
            raise ToolRefused(f"{relative} does not exist yet; create it with write_file")
        if not full.is_file():
            raise ToolRefused(f"{relative} is not a file")
        data = full.read_bytes()
        self.seen[relative] = hashlib.sha256(data).hexdigest()
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_READ_CHARS:
            return (
                text[:MAX_READ_CHARS]
                + f"\n[… {len(text) - MAX_READ_CHARS} more characters not shown]"
            )
        return text

    def write(self, path: Any, content: Any, append: Any = False) -> str:
        if self.access != "rw":
            from soulframe.kit import read_only_reason

            raise ToolRefused(read_only_reason(self.access))
        relative, full = self.resolve(path)
        if not isinstance(content, str):
            raise ToolRefused("content must be a string")
        if len(content) > MAX_WRITE_CHARS:
            raise ToolRefused(
                f"content is {len(content)} characters; at most {MAX_WRITE_CHARS} per write"
            )
        if full.is_symlink():
            raise ToolRefused(f"{relative}: refusing to write through a symlink")
        content = strip_controls(content)  # a NUL would make the file look binary
        if self.check is not None:
            # the file name is the model's words too: "ignore-all-previous-instructions.md"
            # would reach every search result that cites it
            spaced = relative.replace("-", " ").replace("_", " ")
            self.check(relative if spaced == relative else f"{relative}\n{spaced}", relative)
            self.check(content, relative)
        ensure_private_dir(full.parent)

        def change(before: bytes) -> bytes:
            # under the file's lock, so a `remember` meanwhile is kept, not overwritten
            seen = self.seen.get(relative)
            if not append and seen is not None and hashlib.sha256(before).hexdigest() != seen:
                raise ToolRefused(f"{relative} changed since you read it (a note came in meanwhile); "
                                  "read_file it again and write your version of the new text, "
                                  "or append")
            old = before.decode("utf-8", errors="replace") if append else ""
            sep = "" if not old or old.endswith("\n") else "\n"
            new = old + sep + content
            new = new if not new or new.endswith("\n") else new + "\n"
            # the lines this write adds carry their provenance (soulframe._engine.memory.provenance)
            new = mark_new_lines(before.decode("utf-8", errors="replace"), new, "flush", via="write_file")
            data: bytes = new.encode("utf-8")
            self.seen[relative] = hashlib.sha256(data).hexdigest()
            return data

        update_locked(full, change)
        if relative not in self.written:
            self.written.append(relative)
        verb = "appended to" if append else "wrote"
        return f"{verb} {relative} ({len(content)} characters)"


def _clean_env(secret_names: Collection[str] = ()) -> tuple[dict[str, str], list[str]]:
    """The environment an exec'd command gets, and the secret values kept out of it: every
    variable whose name looks like a secret's, and those the configuration names as holding
    a key (``api_key_env = "LLM_AUTH"`` gives no hint by its name)."""
    env, secrets = {}, []
    for k, v in os.environ.items():
        if _SECRET_ENV.search(k) or k in secret_names:
            if len(v) >= 8:
                secrets.append(v)
        else:
            env[k] = v
    return env, secrets


def _masked(text: str, secrets: Sequence[str]) -> str:
    """``text`` without any of the secret values (a command may find one in a file)."""
    for value in sorted(secrets, key=len, reverse=True):
        text = text.replace(value, "[secret removed]")
    return text


def file_tools(
    files: MemoryFiles, *, allow_exec: bool = False, deadline: float | None = None,
    secret_env: Collection[str] = (),
) -> list[ToolSpec]:
    """The ToolSpecs for one flush. ``deadline`` (monotonic) bounds an exec'd command;
    ``secret_env`` names environment variables that hold keys whatever their names say."""

    def read_file(ctx: ToolContext, args: dict[str, Any]) -> str:
        return files.read(args.get("path"))

    def write_file(ctx: ToolContext, args: dict[str, Any]) -> str:
        return files.write(args.get("path"), args.get("content"), bool(args.get("append", False)))

    tools = [
        ToolSpec(
            name="read_file",
            description="Read a memory file: MEMORY.md or memory/YYYY-MM-DD.md (workspace-relative).",
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "e.g. memory/2026-01-31.md"}
                },
                "required": ["path"],
            },
            handler=read_file,
            summary="read MEMORY.md or memory/*.md",
        ),
        ToolSpec(
            name="write_file",
            description=(
                "Write a memory file (MEMORY.md or memory/**/*.md only). Set append=true to add to "
                "the end of an existing file instead of replacing it."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "e.g. memory/2026-01-31.md"},
                    "content": {"type": "string"},
                    "append": {"type": "boolean", "default": False},
                },
                "required": ["path", "content"],
            },
            handler=write_file,
            summary="write MEMORY.md or memory/*.md",
        ),
    ]
    if files.access != "rw":  # a read-only sandbox: the write tool is not even offered
        tools = [t for t in tools if t.name != "write_file"]
    if allow_exec:

        def exec_(ctx: ToolContext, args: dict[str, Any]) -> str:
            command = args.get("command")
            if not isinstance(command, str) or not command.strip():
                raise ToolRefused("command is required")
            limit = 30.0
            if deadline is not None:
                limit = max(0.1, min(limit, deadline - time.monotonic()))
            env, secrets = _clean_env(secret_env)
            try:
                done = subprocess.run(
                    command,
                    shell=True,
                    cwd=files.root,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=limit,
                    stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired:
                raise ToolRefused(f"command timed out after {limit:.0f}s") from None
            out = _masked(done.stdout + done.stderr, secrets)[-MAX_EXEC_OUTPUT:]
            return f"exit code {done.returncode}\n{out}"

        tools.append(
            ToolSpec(
                name="exec",
                description="Run a shell command in the workspace directory (30 s limit).",
                parameters={
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "required": ["command"],
                },
                handler=exec_,
                summary="run a shell command in the workspace",
            )
        )
    return tools
