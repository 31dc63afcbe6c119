"""Erasing forgotten text from the SQLite index so its bytes are gone from the database file
and its WAL, not merely unlinked: rows deleted with ``secure_delete`` on, the FTS5 index
rebuilt (its segments keep deleted tokens until merged), ``VACUUM`` (a freshly written file,
no free pages) and the WAL checkpointed and truncated to zero bytes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import SqliteStore


def _matching(conn: object, sql: str, texts: Sequence[str]) -> list[tuple[object, ...]]:
    lowered = [t.casefold() for t in texts if t.strip()]
    rows = conn.execute(sql).fetchall()  # type: ignore[attr-defined]
    return [r[:-1] for r in rows if any(t in str(r[-1]).casefold() for t in lowered)]


def erase(store: SqliteStore, texts: Sequence[str], cache: Mapping[str, Sequence[str]]) -> dict[str, int]:
    counts = {"chunks": 0, "recalls": 0, "cached_embeddings": 0}
    conn = store.conn
    with store._lock:
        conn.execute("PRAGMA secure_delete = ON")
    with store._write():
        # counts a busy index left waiting may quote the forgotten text: in first, then out
        store._count_recalls(store._take_pending(leftovers=True))
        chunk_ids = [r[0] for r in _matching(conn, "SELECT id, text FROM chunks", texts)]
        for cid in chunk_ids:
            if store._has_vec_table() and store.vec_loaded:
                conn.execute("DELETE FROM vec_vectors WHERE rowid IN (SELECT id FROM vectors WHERE chunk_id = ?)", (cid,))
            conn.execute("DELETE FROM vectors WHERE chunk_id = ?", (cid,))
            conn.execute("DELETE FROM chunks WHERE id = ?", (cid,))
        counts["chunks"] = len(chunk_ids)
        if chunk_ids and store._has_vec_table() and not store.vec_loaded:
            store._set_meta("vec_stale", "1")
        recalls = _matching(conn, "SELECT scope, path, entry_hash, text FROM recalls", texts)
        for scope, path, entry_hash in recalls:
            conn.execute("DELETE FROM recalls WHERE scope = ? AND path = ? AND entry_hash = ?",
                         (scope, path, entry_hash))
            conn.execute("DELETE FROM recall_queries WHERE scope = ? AND path = ? AND entry_hash = ?",
                         (scope, path, entry_hash))
        counts["recalls"] = len(recalls)
        for model, hashes in cache.items():
            for h in hashes:
                counts["cached_embeddings"] += conn.execute(
                    "DELETE FROM embedding_cache WHERE model = ? AND hash = ?", (model, h)).rowcount
        # the FTS index is rebuilt from the remaining chunks: its old segments go
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    with contextlib.suppress(OSError):
        os.unlink(store._draining_path())
    with store._reader_lock:
        if store._read_conn is not None:  # a reader's snapshot would hold the WAL
            with contextlib.suppress(Exception):
                store._read_conn.close()
            store._read_conn = None
    with store._lock:
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return counts
