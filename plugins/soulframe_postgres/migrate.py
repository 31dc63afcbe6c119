"""``soulframe db migrate-from-sqlite``: move a standalone agent into PostgreSQL.

Reads the SQLite memory index of the agent (the ``sqlite`` store, opened through the store
registry so its path comes from the same config) and its per-user context files, and writes
them through :class:`~soulframe_postgres.store.PostgresStore` - one transaction per
document, so an interrupted migration leaves whole documents and can simply be run again.
Embeddings are copied as they are (no re-embedding); the embedding cache too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from soulframe import STORES, ChunkInput, FileRecord, SoulframeError
from soulframe.memorykit import BOOTSTRAP, agent_level_files

if TYPE_CHECKING:
    from soulframe import AgentLike

CACHE_BATCH = 500


@runtime_checkable
class SqliteSource(Protocol):
    """What the migration reads of the ``sqlite`` store besides the ``Store`` protocol: its
    file and its open connection (the tables are copied with SQL, not row by row)."""

    path: Path
    conn: sqlite3.Connection


def _sqlite_store(agent: AgentLike) -> Any:
    try:
        reg = agent.select(STORES, name="sqlite")
    except SoulframeError as exc:
        raise SoulframeError(f"cannot open the SQLite store to migrate from: {exc}") from None
    store = reg.factory(agent)
    if not isinstance(store, SqliteSource):
        raise SoulframeError(f"the 'sqlite' store of plugin {reg.plugin!r} has no SQLite "
                             "connection to read from")
    return store


def migrate_agent(agent: AgentLike, dsn: str, *, origin: str = "store.dsn", overwrite: bool = False,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    from soulframe.memorykit import vector_from_bytes

    from .store import PostgresStore

    say = progress or (lambda _msg: None)
    src = _sqlite_store(agent)
    dst = PostgresStore(dsn, agent_key=agent.state_key, agent_type=agent.spec.type, origin=origin,
                        workspace=str(agent.root))
    report: dict[str, Any] = {"agent": agent.id, "source": str(src.path),
                              "target": dst.location, "documents": 0, "chunks": 0, "vectors": 0,
                              "cached_embeddings": 0, "users": 0, "user_files": 0,
                              "agent_files": 0}
    try:
        conn = src.conn
        for key in ("embedding_model",):
            value = src.get_meta(key)
            if value is not None:
                dst.set_meta(key, value)
        files = conn.execute(
            "SELECT id, scope, path, hash, mtime_ns, size, private, day, model FROM files "
            "ORDER BY scope, path").fetchall()
        say(f"agent {agent.id}: {len(files)} documents from {report['source']}")
        for fid, scope, path, hsh, mtime_ns, size, private, day, model in files:
            chunks = []
            for cid, start, end, chash, text in conn.execute(
                    "SELECT id, start_line, end_line, hash, text FROM chunks WHERE file_id = ? "
                    "ORDER BY id", (fid,)).fetchall():
                vecs = tuple(vector_from_bytes(blob) for (blob,) in conn.execute(
                    "SELECT embedding FROM vectors WHERE chunk_id = ? ORDER BY part", (cid,)))
                chunks.append(ChunkInput(int(start), int(end), text, chash, vecs))
            record = FileRecord(path=path, hash=hsh, mtime_ns=int(mtime_ns), size=int(size),
                                private=bool(private), day=day, model=model, scope=scope or None)
            dst.replace_file(record, chunks)  # one transaction per document
            report["documents"] += 1
            report["chunks"] += len(chunks)
            report["vectors"] += sum(len(c.vectors) for c in chunks)
        # the embedding cache, in batches
        batch: dict[str, dict[str, Any]] = {}
        count = 0
        for model, hsh, blob in conn.execute("SELECT model, hash, embedding FROM embedding_cache"):
            batch.setdefault(model, {})[hsh] = vector_from_bytes(blob)
            count += 1
            if count % CACHE_BATCH == 0:
                for m, items in batch.items():
                    dst.put_many(m, items)
                batch = {}
        for m, items in batch.items():
            dst.put_many(m, items)
        report["cached_embeddings"] = count

        # per-user context files (standalone: <state_dir>/agents.sqlite)
        users_src = src.context_files(agent)
        users_dst = dst.context_files(agent)
        for user in users_src.users():
            mine = users_src.user_files(user)
            if overwrite:
                for name, content in mine.items():
                    users_dst.write_user_file(user, name, content)
                written = list(mine)
            else:
                written = users_dst.seed_user_files(user, {n: c for n, c in mine.items()
                                                           if c.strip()})
            if users_src.bootstrap_completed(user) and BOOTSTRAP not in mine:
                users_dst.delete_user_file(user, BOOTSTRAP)  # records the finished ritual
            report["users"] += 1
            report["user_files"] += len(written)
        # a predefined agent's shared files: from its workspace into agent_context_files
        shared = {}
        for name in agent_level_files(dst.agent_type, managed=True):
            try:
                text = agent.workspace.read_text(name)
            except (SoulframeError, OSError):
                continue
            if text.strip():
                shared[name] = text
        if overwrite:
            for name, text in shared.items():
                users_dst.write_agent_file(name, text)
            report["agent_files"] = len(shared)
        else:
            report["agent_files"] = len(users_dst.seed_agent_files(shared))
        report["indexed_dimensions"] = dst.build_indexes()
        dst.analyze()
    finally:
        dst.close()
        src.close()
    return report
