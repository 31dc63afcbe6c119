"""Agent-level and per-user context files in PostgreSQL (managed mode, seed 000 §3–4).

Implements :class:`soulframe.ContextFileStore`; the rules (which files, the
interceptor, seeding content) live in :mod:`soulframe._engine.agentstore`. Every method is one
transaction; seeding uses ``INSERT ... ON CONFLICT`` that only fills missing or empty
rows, so two processes seeding the same user at once cannot overwrite each other.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from soulframe.memorykit import BOOTSTRAP

from .connection import Database


class PostgresContextFiles:
    managed = True

    def __init__(self, db: Database, agent_id: uuid.UUID, agent_key: str, agent_type: str) -> None:
        self.db = db
        self.agent_id = agent_id
        self.agent_key = agent_key
        self.agent_type = agent_type

    # ------------------------------------------------------------------ agent level

    def agent_files(self) -> dict[str, str]:
        rows = self.db.run(lambda conn: conn.execute(
            "SELECT file_name, content FROM agent_context_files WHERE agent_id = %s",
            (self.agent_id,)).fetchall(), what="reading agent files")
        return {r[0]: r[1] for r in rows}

    def write_agent_file(self, name: str, content: str) -> None:
        self.db.run(lambda conn: conn.execute(
            "INSERT INTO agent_context_files (agent_id, file_name, content) VALUES (%s, %s, %s) "
            "ON CONFLICT (agent_id, file_name) DO UPDATE SET content = EXCLUDED.content, "
            "updated_at = now()", (self.agent_id, name, content)), what=f"writing {name}")

    def delete_agent_file(self, name: str) -> bool:
        cur = self.db.run(lambda conn: conn.execute(
            "DELETE FROM agent_context_files WHERE agent_id = %s AND file_name = %s",
            (self.agent_id, name)), what=f"deleting {name}")
        return bool(cur.rowcount)

    def seed_agent_files(self, files: Mapping[str, str]) -> list[str]:
        def go(conn: Any) -> list[str]:
            written = []
            for name, content in files.items():
                row = conn.execute(
                    "INSERT INTO agent_context_files AS f (agent_id, file_name, content) "
                    "VALUES (%s, %s, %s) ON CONFLICT (agent_id, file_name) DO UPDATE "
                    "SET content = EXCLUDED.content, updated_at = now() "
                    "WHERE btrim(f.content, E' \\t\\r\\n') = '' RETURNING file_name",
                    (self.agent_id, name, content)).fetchone()
                if row:
                    written.append(name)
            return written

        return self.db.run(go, what="seeding agent files")

    # ------------------------------------------------------------------ per user

    def user_files(self, user_id: str) -> dict[str, str]:
        rows = self.db.run(lambda conn: conn.execute(
            "SELECT file_name, content FROM user_context_files WHERE agent_id = %s AND user_id = %s",
            (self.agent_id, user_id)).fetchall(), what="reading user files")
        return {r[0]: r[1] for r in rows}

    def user_files_mark(self, user_id: str) -> str:
        """``MarksUserFiles``: every write sets the row's ``updated_at``; the count sees a
        deletion, the (exact) sum a rewrite even when another server's transaction commits
        an earlier ``now()`` after a later one, the latest a rewrite in one microsecond."""
        row = self.db.run(lambda conn: conn.execute(
            "SELECT count(*), sum(extract(epoch FROM updated_at)), max(updated_at) "
            "FROM user_context_files WHERE agent_id = %s AND user_id = %s",
            (self.agent_id, user_id)).fetchone(), what="reading the mark of user files")
        return f"{row[0]} {row[1]} {row[2]}"

    def write_user_file(self, user_id: str, name: str, content: str) -> None:
        def go(conn: Any) -> None:
            self._meet(conn, user_id)
            conn.execute(
                "INSERT INTO user_context_files (agent_id, user_id, file_name, content) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (agent_id, user_id, file_name) DO UPDATE "
                "SET content = EXCLUDED.content, updated_at = now()",
                (self.agent_id, user_id, name, content))

        self.db.run(go, what=f"writing {name} of user")

    def append_user_file(self, user_id: str, name: str, text: str, *, heading: str = "") -> None:
        def go(conn: Any) -> None:
            self._meet(conn, user_id)
            # one statement: concurrent appends from several app servers serialise on the row
            conn.execute(
                "INSERT INTO user_context_files AS f (agent_id, user_id, file_name, content) "
                "VALUES (%(a)s, %(u)s, %(n)s, %(first)s) ON CONFLICT (agent_id, user_id, file_name) "
                "DO UPDATE SET updated_at = now(), content = CASE "
                "WHEN btrim(f.content, E' \\t\\r\\n') = '' THEN %(first)s "
                "WHEN right(f.content, 1) = E'\\n' THEN f.content || %(text)s "
                "ELSE f.content || E'\\n' || %(text)s END",
                {"a": self.agent_id, "u": user_id, "n": name, "first": heading + text, "text": text})

        self.db.run(go, what=f"appending to {name} of user")

    def delete_user_file(self, user_id: str, name: str) -> bool:
        def go(conn: Any) -> bool:
            self._meet(conn, user_id)
            cur = conn.execute(
                "DELETE FROM user_context_files WHERE agent_id = %s AND user_id = %s AND file_name = %s",
                (self.agent_id, user_id, name))
            if name == BOOTSTRAP:
                conn.execute(
                    "UPDATE agent_users SET bootstrap_completed_at = coalesce(bootstrap_completed_at, now()) "
                    "WHERE agent_id = %s AND user_id = %s", (self.agent_id, user_id))
            return bool(cur.rowcount)

        return self.db.run(go, what=f"deleting {name} of user")

    def seed_user_files(self, user_id: str, files: Mapping[str, str]) -> list[str]:
        def go(conn: Any) -> list[str]:
            self._meet(conn, user_id)
            done = conn.execute(
                "SELECT bootstrap_completed_at IS NOT NULL FROM agent_users "
                "WHERE agent_id = %s AND user_id = %s", (self.agent_id, user_id)).fetchone()[0]
            written = []
            for name, content in files.items():
                if name == BOOTSTRAP and done:
                    continue
                row = conn.execute(
                    "INSERT INTO user_context_files AS f (agent_id, user_id, file_name, content) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (agent_id, user_id, file_name) DO UPDATE "
                    "SET content = EXCLUDED.content, updated_at = now() "
                    "WHERE btrim(f.content, E' \\t\\r\\n') = '' RETURNING file_name",
                    (self.agent_id, user_id, name, content)).fetchone()
                if row:
                    written.append(name)
            return written

        return self.db.run(go, what="seeding user files")

    def bootstrap_completed(self, user_id: str) -> bool:
        row = self.db.run(lambda conn: conn.execute(
            "SELECT bootstrap_completed_at IS NOT NULL FROM agent_users "
            "WHERE agent_id = %s AND user_id = %s", (self.agent_id, user_id)).fetchone(),
            what="reading user state")
        return bool(row and row[0])

    def users(self) -> list[str]:
        rows = self.db.run(lambda conn: conn.execute(
            "SELECT user_id FROM agent_users WHERE agent_id = %s ORDER BY user_id",
            (self.agent_id,)).fetchall(), what="listing users")
        return [r[0] for r in rows]

    def _meet(self, conn: Any, user_id: str) -> None:
        conn.execute("INSERT INTO agent_users (agent_id, user_id) VALUES (%s, %s) "
                     "ON CONFLICT DO NOTHING", (self.agent_id, user_id))
