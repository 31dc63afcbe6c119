"""Per-user context files of standalone agents, in SQLite (seed 000 §3 "FileAgentStore").

Kept in their own file, ``<state_dir>/agents.sqlite`` (0600), not in the memory index: the
index can be thrown away and rebuilt from the Markdown at any time (a corrupted one is moved
aside), while a user's USER.md exists nowhere else. Agents are keyed by the deterministic
UUID v5 of their key (:func:`soulframe.memorykit.standalone_agent_id`), so rows survive
restarts and renames of the state directory need no coordination.

Implements :class:`soulframe.ContextFileStore` with ``managed = False``: a
standalone agent's own (agent-level) files are its workspace on disk.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soulframe import SoulframeError
from soulframe.memorykit import BOOTSTRAP, standalone_agent_id

from .driver import sqlite_module

if TYPE_CHECKING:
    from soulframe import AgentLike, AgentType

FILE_NAME = "agents.sqlite"
SCHEMA_KEY = "userfiles_schema_version"

#: numbered migrations of this file's schema; append, never edit a released one
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        "CREATE TABLE IF NOT EXISTS agents (id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
        "type TEXT NOT NULL CHECK (type IN ('open', 'predefined')), created_at REAL NOT NULL)",
        "CREATE TABLE IF NOT EXISTS user_context_files (agent_id TEXT NOT NULL, "
        "user_id TEXT NOT NULL, file_name TEXT NOT NULL, content TEXT NOT NULL, "
        "updated_at REAL NOT NULL, PRIMARY KEY (agent_id, user_id, file_name)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS agent_users (agent_id TEXT NOT NULL, user_id TEXT NOT NULL, "
        "first_seen_at REAL NOT NULL, bootstrap_completed_at REAL, "
        "PRIMARY KEY (agent_id, user_id)) WITHOUT ROWID",
    )),
)


def default_path(agent: AgentLike) -> Path:
    return Path(str(agent.config.get("state_dir"))).expanduser() / FILE_NAME


def open_context_files(agent: AgentLike) -> SqliteContextFiles:
    return SqliteContextFiles(default_path(agent), agent.state_key, agent.spec.type,
                              workspace=str(agent.root))


class SqliteContextFiles:
    managed = False

    def __init__(self, path: str | os.PathLike[str], agent_key: str, agent_type: AgentType,
                 *, workspace: str | None = None) -> None:
        from soulframe.kit import ensure_private_dir

        self.path = Path(path).expanduser()
        self.agent_key = agent_key
        self.agent_type = agent_type
        self.agent_id: uuid.UUID = standalone_agent_id(agent_key)
        self._lock = threading.RLock()
        module, _ = sqlite_module()
        ensure_private_dir(self.path.parent)
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        self.conn = module.connect(str(self.path), timeout=30, isolation_level=None,
                                   check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout = 30000")
        self.conn.execute("PRAGMA journal_mode = WAL")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.chmod(f"{self.path}{suffix}", 0o600)
        try:
            self._migrate()
            with self._write() as c:
                # standalone: the config is the source of an agent's type
                c.execute(
                    "INSERT INTO agents (id, key, type, created_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET type = excluded.type",
                    (str(self.agent_id), agent_key, agent_type, time.time()),
                )
                if workspace is not None:
                    self._claim_workspace(c, workspace)
        except BaseException:
            self.close()
            raise

    def _claim_workspace(self, c: Any, workspace: str) -> None:
        """Bind this agent's users' files to one workspace (as the memory index is): two
        configs declaring the same agent id with their own workspace and one state
        directory must not serve one workspace's users' files in the other's prompts.
        Refused while the recorded workspace still exists and its users have files here; a
        moved workspace (the recorded directory is gone) takes them along."""
        key = f"workspace:{self.agent_id}"
        row = c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        recorded = None if row is None else str(row[0])
        if recorded == workspace:
            return
        if recorded is not None and Path(recorded).is_dir():
            held = c.execute("SELECT count(*) FROM user_context_files WHERE agent_id = ?",
                             (str(self.agent_id),)).fetchone()[0]
            if held:
                raise SoulframeError(
                    f"agent {self.agent_key!r} in {self.path} keeps the per-user files of the "
                    f"workspace {recorded}; this workspace is {workspace}. Sharing them would "
                    "show one workspace's users' files in the other's prompts: give this "
                    "workspace its own agent ([[agents]] id = \"...\", workspace = ... in "
                    "soulframe.toml, then --agent ID)"
                )
        c.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                  "SET value = excluded.value", (key, workspace))

    # ------------------------------------------------------------------ plumbing

    @contextlib.contextmanager
    def _write(self) -> Iterator[Any]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    self.conn.execute("ROLLBACK")
                raise

    def _migrate(self) -> None:
        with self._write() as c:
            c.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = c.execute("SELECT value FROM meta WHERE key = ?", (SCHEMA_KEY,)).fetchone()
            current = int(row[0]) if row else 0
            latest = MIGRATIONS[-1][0]
            if current > latest:
                raise SoulframeError(f"{self.path}: schema version {current} is newer than this "
                                     f"soulframe understands ({latest}); upgrade soulframe")
            for number, statements in MIGRATIONS:
                if number <= current:
                    continue
                for sql in statements:
                    c.execute(sql)
                c.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO "
                          "UPDATE SET value = excluded.value", (SCHEMA_KEY, str(number)))

    def _meet(self, c: Any, user_id: str) -> None:
        c.execute("INSERT OR IGNORE INTO agent_users (agent_id, user_id, first_seen_at) "
                  "VALUES (?, ?, ?)", (str(self.agent_id), user_id, time.time()))

    # ------------------------------------------------------------------ agent level

    def _no_agent_level(self) -> SoulframeError:
        return SoulframeError(
            f"standalone agent {self.agent_key!r}: its agent-level files are the workspace "
            "on disk, not the store"
        )

    def agent_files(self) -> dict[str, str]:
        raise self._no_agent_level()

    def write_agent_file(self, name: str, content: str) -> None:
        raise self._no_agent_level()

    def delete_agent_file(self, name: str) -> bool:
        raise self._no_agent_level()

    def seed_agent_files(self, files: Mapping[str, str]) -> list[str]:
        return []

    # ------------------------------------------------------------------ per user

    def user_files(self, user_id: str) -> dict[str, str]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT file_name, content FROM user_context_files WHERE agent_id = ? AND user_id = ?",
                (str(self.agent_id), user_id)).fetchall()
        return {r[0]: r[1] for r in rows}

    def user_files_mark(self, user_id: str) -> str:
        """``MarksUserFiles``: every write sets the row's ``updated_at``; the count sees a
        deletion, the sum a rewrite, the latest a second write in the same millisecond."""
        with self._lock:
            row = self.conn.execute(
                "SELECT count(*), total(updated_at), max(updated_at) FROM user_context_files "
                "WHERE agent_id = ? AND user_id = ?", (str(self.agent_id), user_id)).fetchone()
        return f"{row[0]} {row[1]!r} {row[2]!r}"

    def write_user_file(self, user_id: str, name: str, content: str) -> None:
        with self._write() as c:
            self._meet(c, user_id)
            c.execute(
                "INSERT INTO user_context_files (agent_id, user_id, file_name, content, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, user_id, file_name) DO UPDATE "
                "SET content = excluded.content, updated_at = excluded.updated_at",
                (str(self.agent_id), user_id, name, content, time.time()))

    def append_user_file(self, user_id: str, name: str, text: str, *, heading: str = "") -> None:
        with self._write() as c:
            self._meet(c, user_id)
            row = c.execute(
                "SELECT content FROM user_context_files WHERE agent_id = ? AND user_id = ? "
                "AND file_name = ?", (str(self.agent_id), user_id, name)).fetchone()
            old = row[0] if row is not None else ""
            if not old.strip():
                new = heading + text
            else:
                new = old + ("" if old.endswith("\n") else "\n") + text
            c.execute(
                "INSERT OR REPLACE INTO user_context_files (agent_id, user_id, file_name, content, "
                "updated_at) VALUES (?, ?, ?, ?, ?)",
                (str(self.agent_id), user_id, name, new, time.time()))

    def delete_user_file(self, user_id: str, name: str) -> bool:
        with self._write() as c:
            self._meet(c, user_id)
            cur = c.execute(
                "DELETE FROM user_context_files WHERE agent_id = ? AND user_id = ? AND file_name = ?",
                (str(self.agent_id), user_id, name))
            if name == BOOTSTRAP:
                c.execute("UPDATE agent_users SET bootstrap_completed_at = "
                          "coalesce(bootstrap_completed_at, ?) WHERE agent_id = ? AND user_id = ?",
                          (time.time(), str(self.agent_id), user_id))
            return bool(cur.rowcount)

    def seed_user_files(self, user_id: str, files: Mapping[str, str]) -> list[str]:
        written: list[str] = []
        with self._write() as c:
            self._meet(c, user_id)
            done = self._completed(c, user_id)
            for name, content in files.items():
                if name == BOOTSTRAP and done:
                    continue
                row = c.execute(
                    "SELECT content FROM user_context_files WHERE agent_id = ? AND user_id = ? "
                    "AND file_name = ?", (str(self.agent_id), user_id, name)).fetchone()
                if row is not None and row[0].strip():
                    continue  # never overwrite content
                c.execute(
                    "INSERT OR REPLACE INTO user_context_files (agent_id, user_id, file_name, "
                    "content, updated_at) VALUES (?, ?, ?, ?, ?)",
                    (str(self.agent_id), user_id, name, content, time.time()))
                written.append(name)
        return written

    def _completed(self, c: Any, user_id: str) -> bool:
        row = c.execute("SELECT bootstrap_completed_at FROM agent_users WHERE agent_id = ? "
                        "AND user_id = ?", (str(self.agent_id), user_id)).fetchone()
        return bool(row and row[0] is not None)

    def bootstrap_completed(self, user_id: str) -> bool:
        with self._lock:
            return self._completed(self.conn, user_id)

    def users(self) -> list[str]:
        with self._lock:
            rows = self.conn.execute("SELECT user_id FROM agent_users WHERE agent_id = ? "
                                     "ORDER BY user_id", (str(self.agent_id),)).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        with self._lock, contextlib.suppress(Exception):
            self.conn.close()
