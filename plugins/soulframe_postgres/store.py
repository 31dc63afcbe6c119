"""``PostgresStore``: the managed-mode store (PostgreSQL + tsvector + pgvector).

One database serves many agents: a store is bound to one agent (``agents.key`` = the
agent's id in config) and every query is filtered by its ``agent_id``. Memory is per agent
and per user (``scope`` = a user id, ``None`` for the agent's own); a search with a user
scope covers the agent's memory and that user's, and the core's fusion boosts the user's.

* keyword search: ``tsvector`` (``to_tsvector('simple', text || ' ' || grams)``, a
  generated column with a GIN index; ``grams`` holds the character pairs of Chinese,
  Japanese, Korean and Thai runs, :mod:`soulframe._engine.textsplit`, and the words
  lower-cased and without accents where the server would not make them so,
  :mod:`.textfold`, the stems of Greek and Cyrillic words and emoji as
  :func:`soulframe.kit.search_tokens` makes them) matched with ``plainto_tsquery('simple', term)`` per folded term, OR-ed
  (the contract: chunks containing ANY term), ranked with ``ts_rank``;
* vector search: pgvector cosine distance on a per-dimension partial HNSW index
  (:func:`~soulframe_postgres.schema.build_vector_index`) with iterative index scans, so
  the agent/user/visibility filter does not leave results short;
* every write of one file is one transaction (``Database.run``), retried once if the
  connection is lost before the commit: a killed server leaves the old file or the new one.

One module, over the usual size, because it is one thing: the ``Store`` protocol on
PostgreSQL, every method a transaction against the same schema.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from soulframe import (
    ChunkInput,
    CommonWords,
    FileRecord,
    Recall,
    RecallStat,
    SoulframeError,
    StoredChunk,
    StoreStats,
)
from soulframe.kit import raw_words, search_tokens
from soulframe.memorykit import recall_key

from .connection import Database
from .schema import LATEST, build_vector_index, migrate, query_cast, vector_expr, vector_index_state
from .textfold import fold, index_extra, server_lowers_all

if TYPE_CHECKING:
    from soulframe import AgentLike, Vector

    from .skills import PostgresSkills

log = logging.getLogger("soulframe.postgres")

#: how many more index candidates than results to consider, for multi-window chunks
VECTOR_OVERFETCH = 2
#: a vector size gets its HNSW index once this many vectors of it exist (an exact scan of
#: fewer takes a few milliseconds and is exact; building once beats growing row by row)
HNSW_MIN_ROWS = 5000


class PostgresStore:
    """The ``postgres`` store for one agent."""

    name = "postgres"
    #: agent-level context files live in the database (see soulframe._engine.agentstore)
    managed = True

    def __init__(self, dsn: str, *, agent_key: str, agent_type: str = "open",
                 origin: str = "store.dsn", max_connections: int = 4,
                 hnsw_min_rows: int = HNSW_MIN_ROWS, workspace: str | None = None) -> None:
        if not dsn or not str(dsn).strip():
            raise SoulframeError(
                "store.backend = 'postgres' needs a DSN: set store.dsn in the config or "
                "$SOULFRAME_DSN (e.g. postgresql://user@host:5432/soulframe); "
                "`soulframe db start` runs a local server and prints one"
            )
        self.db = Database(str(dsn), origin=origin, configure=configure_connection, max_size=max_connections)
        self.location = self.db.location
        try:
            self.schema_version = migrate(self.db)  # the first connection: a bad DSN fails here
            self.agent_key = agent_key
            self.agent_id, self.agent_type = self._ensure_agent(agent_key, agent_type)
            #: whether the server lower-cases beyond ASCII (decides what ``grams`` adds)
            self.lowers_all = self.db.run(server_lowers_all, what="reading the locale")
            if workspace is not None:
                self._claim_workspace(str(workspace))
        except BaseException:
            self.db.close()  # a store refused here is never returned, so nobody else can
            raise
        self._indexed_dims: set[int] = set()
        self._since_check: dict[int, int] = {}
        self.hnsw_min_rows = hnsw_min_rows

    # ------------------------------------------------------------------ agents

    def _ensure_agent(self, key: str, agent_type: str) -> tuple[uuid.UUID, str]:
        """Register the agent on first use; afterwards the ``agents`` row is the source of
        its type (an administrator may change it there)."""

        def go(conn: Any) -> tuple[uuid.UUID, str]:
            conn.execute(
                "INSERT INTO agents (id, key, type) VALUES (gen_random_uuid(), %s, %s) "
                "ON CONFLICT (key) DO NOTHING", (key, agent_type),
            )
            row = conn.execute("SELECT id, type FROM agents WHERE key = %s", (key,)).fetchone()
            return row[0], row[1]

        return self.db.run(go, what="agent registration")

    def _claim_workspace(self, workspace: str) -> None:
        """Bind this agent's memory to one workspace. Indexing removes the documents whose
        files are gone, so a second workspace indexed under the same agent key would delete
        the first one's documents: refused while the first workspace still exists here. A
        workspace that was moved (the recorded directory is gone) takes its memory along."""
        from pathlib import Path

        def go(conn: Any) -> str | None:
            row = conn.execute("SELECT value FROM store_meta WHERE agent_id = %s AND key = 'workspace' "
                               "FOR UPDATE", (self.agent_id,)).fetchone()
            recorded = None if row is None else str(row[0])
            if recorded == workspace:
                return None
            if recorded is not None and Path(recorded).is_dir():
                documents = conn.execute(
                    "SELECT count(*) FROM memory_documents WHERE agent_id = %s AND user_id = ''",
                    (self.agent_id,)).fetchone()[0]
                if documents:
                    return recorded
            self._set_meta(conn, "workspace", workspace)
            if recorded is not None:
                log.warning("agent %r: its memory moves from the workspace %s (gone) to %s",
                            self.agent_key, recorded, workspace)
            return None

        other = self.db.run(go, what="binding the workspace")
        if other is not None:
            raise SoulframeError(
                f"agent {self.agent_key!r} in {self.location} holds the memory of the workspace "
                f"{other}; this workspace is {workspace}. Indexing both under one agent would "
                "delete each other's documents: give this workspace its own agent "
                "([[agents]] id = \"...\", workspace = ... in soulframe.toml, then --agent ID)"
            )

    def context_files(self, agent: AgentLike | None = None) -> Any:
        """Agent-level and per-user context files of this agent (managed mode)."""
        from .userfiles import PostgresContextFiles

        return PostgresContextFiles(self.db, self.agent_id, self.agent_key, self.agent_type)

    def skills(self) -> PostgresSkills:
        """Managed skills: publishing, grants and ``list_accessible``."""
        from .skills import PostgresSkills

        return PostgresSkills(self.db)

    # ------------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        def go(conn: Any) -> str | None:
            row = conn.execute("SELECT value FROM store_meta WHERE agent_id = %s AND key = %s",
                               (self.agent_id, key)).fetchone()
            return None if row is None else str(row[0])

        return self.db.run(go, what="read meta")

    def set_meta(self, key: str, value: str) -> None:
        self.db.run(lambda conn: self._set_meta(conn, key, value), what="write meta")

    def _set_meta(self, conn: Any, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO store_meta (agent_id, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value",
            (self.agent_id, key, value),
        )

    # ------------------------------------------------------------------ files

    def files(self, scope: str | None = None) -> dict[str, FileRecord]:
        def go(conn: Any) -> Any:
            return conn.execute(
                "SELECT path, hash, mtime_ns, size, private, day, model, user_id "
                "FROM memory_documents WHERE agent_id = %s AND user_id = %s",
                (self.agent_id, scope or ""),
            ).fetchall()

        return {
            r[0]: FileRecord(path=r[0], hash=r[1], mtime_ns=int(r[2]), size=int(r[3]),
                             private=bool(r[4]), day=r[5], model=r[6], scope=r[7] or None)
            for r in self.db.run(go, what="list files")
        }

    def files_named(self, paths: Sequence[str], scope: str | None = None) -> dict[str, FileRecord]:
        if not paths:
            return {}

        def go(conn: Any) -> Any:
            return conn.execute(
                "SELECT path, hash, mtime_ns, size, private, day, model, user_id "
                "FROM memory_documents WHERE agent_id = %s AND user_id = %s AND path = ANY(%s)",
                (self.agent_id, scope or "", list(paths)),
            ).fetchall()

        return {
            r[0]: FileRecord(path=r[0], hash=r[1], mtime_ns=int(r[2]), size=int(r[3]),
                             private=bool(r[4]), day=r[5], model=r[6], scope=r[7] or None)
            for r in self.db.run(go, what="list files")
        }

    def replace_file(self, record: FileRecord, chunks: Sequence[ChunkInput]) -> None:
        """Replace one file's record, chunks and vectors in ONE transaction."""
        self.db.run(lambda conn: self._replace(conn, record, chunks),
                    what=f"writing {record.path}")
        added: dict[int, int] = {}
        for ch in chunks:
            for v in ch.vectors:
                added[len(v)] = added.get(len(v), 0) + 1
        for d, n in added.items():
            if d not in self._indexed_dims:
                self._maybe_index(d, n)

    def _maybe_index(self, dims: int, added: int = 0, *, force: bool = False) -> None:
        """Build the HNSW index of a vector size once it is worth it (outside the write:
        concurrently, never holding the data transaction open). The database is asked on
        the first write of a size and then every tenth of ``hnsw_min_rows`` vectors written,
        not on every write."""
        seen = self._since_check.get(dims)
        total = (seen or 0) + added
        if not force and seen is not None and total < max(1, self.hnsw_min_rows // 10):
            self._since_check[dims] = total
            return
        self._since_check[dims] = 0
        if build_vector_index(self.db, "memory_vectors", dims,
                              min_rows=0 if force else self.hnsw_min_rows):
            self._indexed_dims.add(dims)

    def build_indexes(self) -> list[int]:
        """Build the HNSW index of every vector size present now, whatever its row count
        (after a bulk load). Returns the sizes indexed."""
        rows = self.db.run(lambda conn: conn.execute(
            "SELECT DISTINCT dims FROM memory_vectors").fetchall(), what="listing sizes")
        for (d,) in rows:
            self._maybe_index(int(d), force=True)
        return sorted(self._indexed_dims)

    def _replace(self, conn: Any, record: FileRecord, chunks: Sequence[ChunkInput]) -> None:
        user = record.scope or ""
        # one writer of a document at a time: two app servers indexing the same file both
        # found no row to delete, and the second INSERT failed on the unique key. Held to
        # the commit, so the second deletes what the first wrote and writes its own
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                     (f"soulframe.document:{self.agent_id}:{user}:{record.path}",))
        conn.execute("DELETE FROM memory_documents WHERE agent_id = %s AND user_id = %s AND path = %s",
                     (self.agent_id, user, record.path))
        doc_id = conn.execute(
            "INSERT INTO memory_documents (agent_id, user_id, path, hash, mtime_ns, size, private, "
            "day, model) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (self.agent_id, user, record.path, record.hash, record.mtime_ns, record.size,
             record.private, record.day, record.model),
        ).fetchone()[0]
        if not chunks:
            return
        ids = [r[0] for r in conn.execute(
            "SELECT nextval(pg_get_serial_sequence('memory_chunks', 'id')) "
            "FROM generate_series(1, %s)", (len(chunks),)).fetchall()]
        with conn.cursor() as cur, cur.copy(
            "COPY memory_chunks (id, document_id, agent_id, user_id, private, start_line, "
            "end_line, hash, text, grams) FROM STDIN"
        ) as copy:
            for cid, ch in zip(ids, chunks, strict=True):
                copy.write_row((cid, doc_id, self.agent_id, user, record.private, ch.start_line,
                                ch.end_line, ch.hash, ch.text,
                                index_extra(ch.text, lowers_all=self.lowers_all)))
        if any(ch.vectors for ch in chunks):
            with conn.cursor() as cur, cur.copy(
                "COPY memory_vectors (chunk_id, agent_id, user_id, private, part, dims, embedding) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "uuid", "text", "bool", "int4", "int4", "vector"])
                for cid, ch in zip(ids, chunks, strict=True):
                    for part, vec in enumerate(ch.vectors):
                        copy.write_row((cid, self.agent_id, user, record.private, part,
                                        len(vec), vec))

    def touch_file(self, record: FileRecord) -> None:
        self.db.run(lambda conn: conn.execute(
            "UPDATE memory_documents SET mtime_ns = %s, size = %s "
            "WHERE agent_id = %s AND user_id = %s AND path = %s",
            (record.mtime_ns, record.size, self.agent_id, record.scope or "", record.path),
        ), what=f"touching {record.path}")

    def remove_files(self, paths: Sequence[str], scope: str | None = None) -> int:
        if not paths:
            return 0

        def go(conn: Any) -> int:
            cur = conn.execute(
                "DELETE FROM memory_documents WHERE agent_id = %s AND user_id = %s "
                "AND path = ANY(%s)", (self.agent_id, scope or "", list(paths)))
            return int(cur.rowcount)

        return self.db.run(go, what="removing files")

    def clear(self) -> None:
        self.db.run(lambda conn: conn.execute(
            "DELETE FROM memory_documents WHERE agent_id = %s", (self.agent_id,)
        ), what="clearing the index")

    # ------------------------------------------------------------------ search

    def _where(self, include_private: bool, scope: str | None, alias: str) -> tuple[str, list[Any]]:
        scopes = ["", scope] if scope else [""]
        sql = f"{alias}.agent_id = %s AND {alias}.user_id = ANY(%s)"
        if not include_private:
            sql += f" AND NOT {alias}.private"
        return sql, [self.agent_id, scopes]

    def search_text(
        self, terms: Sequence[str], limit: int, *, include_private: bool,
        scope: str | None = None,
    ) -> list[StoredChunk]:
        # each term folded, then the index words it stands for besides itself (the stem of
        # a Greek or Cyrillic word, an emoji's code points); an emoji alone is no lexeme
        forms = [f for t in terms if t and t.strip() for f in (fold(t.strip()), *search_tokens(t.strip()))]
        unique = [f for f in dict.fromkeys(forms) if raw_words(f)]
        if not unique or limit <= 0:
            return []
        query = " || ".join(["plainto_tsquery('simple', %s)"] * len(unique))
        where, args = self._where(include_private, scope, "c")
        sql = (
            f"WITH q AS (SELECT ({query}) AS q) "
            "SELECT c.id, d.path, c.start_line, c.end_line, c.text, ts_rank(c.tsv, q.q) AS score, "
            "c.private, d.day, c.user_id "
            "FROM memory_chunks c JOIN memory_documents d ON d.id = c.document_id, q "
            f"WHERE c.tsv @@ q.q AND {where} "
            "ORDER BY score DESC, c.id LIMIT %s"
        )

        def go(conn: Any) -> Any:
            return conn.execute(sql, [*unique, *args, limit]).fetchall()

        return [_stored(r) for r in self.db.run(go, what="keyword search") if float(r[5]) > 0]

    def common_words(
        self, words: Sequence[str], share: float, *, include_private: bool,
        scope: str | None = None,
    ) -> CommonWords:
        """Which of ``words`` more than ``share`` of this agent's chunks visible to the
        search hold (``plainto_tsquery('simple', ...)``, as the keyword search matches), in
        one round trip: the GIN index finds each word's chunks. Nothing is remembered
        between searches (several processes write to one database)."""
        unique = list(dict.fromkeys(w.strip() for w in words if w and w.strip()))
        folded = {w: fold(w) for w in unique}  # each word as search_text matches it
        where, args = self._where(include_private, scope, "c")
        sql = (
            f"SELECT NULL, count(*) FROM memory_chunks c WHERE {where} UNION ALL "
            f"SELECT w, (SELECT count(*) FROM memory_chunks c WHERE "
            f"c.tsv @@ plainto_tsquery('simple', w) AND {where}) FROM unnest(%s::text[]) w"
        )

        def go(conn: Any) -> Any:
            return conn.execute(sql, [*args, *args, sorted(set(folded.values()))]).fetchall()

        rows = self.db.run(go, what="counting common words")
        visible = int(next((r[1] for r in rows if r[0] is None), 0))
        common = {str(r[0]) for r in rows if r[0] is not None and int(r[1]) > share * visible}
        return CommonWords(visible, frozenset(w for w, f in folded.items() if f in common))

    def search_vector(
        self, vector: Vector, limit: int, *, include_private: bool,
        scope: str | None = None,
    ) -> list[StoredChunk]:
        import numpy as np

        if limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        dims = int(q.shape[0])
        expr, _ = vector_expr(dims, "v.embedding")
        cast = query_cast(dims)
        where, args = self._where(include_private, scope, "v")
        k = limit * VECTOR_OVERFETCH
        sql = (
            "SELECT t.chunk_id, max(t.sim) AS sim FROM ("
            f"  SELECT v.chunk_id, 1 - ({expr} <=> %b::{cast}) AS sim FROM memory_vectors v"
            f"  WHERE v.dims = {dims} AND {where}"
            f"  ORDER BY {expr} <=> %b::{cast} LIMIT %s"
            ") t GROUP BY t.chunk_id ORDER BY sim DESC, t.chunk_id LIMIT %s"
        )
        fetch = (
            "SELECT c.id, d.path, c.start_line, c.end_line, c.text, 0.0, c.private, d.day, "
            "c.user_id FROM memory_chunks c JOIN memory_documents d ON d.id = c.document_id "
            "WHERE c.id = ANY(%s)"
        )

        def go(conn: Any) -> list[StoredChunk]:
            # iterative scans keep fetching from the HNSW graph until the agent/user filter
            # has let enough rows through (pgvector >= 0.8)
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, k * 2))}")
            hits = conn.execute(sql, [q, *args, q, k, limit]).fetchall()
            if not hits:
                return []
            rows = {r[0]: r for r in conn.execute(fetch, ([h[0] for h in hits],)).fetchall()}
            return [_stored(rows[cid], float(sim)) for cid, sim in hits if cid in rows]

        return self.db.run(go, what="vector search")

    def chunk_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        import numpy as np

        if not ids:
            return {}

        def go(conn: Any) -> Any:
            with conn.cursor(binary=True) as cur:
                return cur.execute(
                    "SELECT v.chunk_id, v.embedding FROM memory_vectors v "
                    "WHERE v.chunk_id = ANY(%s) AND v.agent_id = %s ORDER BY v.chunk_id, v.part",
                    (list(ids), self.agent_id)).fetchall()

        grouped: dict[int, list[Any]] = {}
        for cid, vec in self.db.run(go, what="reading vectors"):
            grouped.setdefault(int(cid), []).append(vec)
        out: dict[int, Vector] = {}
        for cid, vecs in grouped.items():
            if len({len(v) for v in vecs}) != 1:
                continue
            mean = np.mean(np.stack(vecs), axis=0).astype(np.float32)
            norm = float(np.linalg.norm(mean))
            out[cid] = mean / norm if norm > 0 else mean
        return out

    # ------------------------------------------------------------------ embedding cache

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        if not hashes:
            return {}

        def go(conn: Any) -> Any:
            with conn.cursor(binary=True) as cur:
                return cur.execute(
                    "SELECT hash, embedding FROM embedding_cache WHERE model = %s AND hash = ANY(%s)",
                    (model_id, list(hashes))).fetchall()

        return {str(h): v for h, v in self.db.run(go, what="reading the embedding cache")}

    def put_many(self, model_id: str, items: Mapping[str, Vector]) -> None:
        if not items:
            return
        rows = [(model_id, h, len(v), v) for h, v in items.items()]

        def go(conn: Any) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO embedding_cache (model, hash, dims, embedding) "
                    "VALUES (%s, %s, %s, %b) ON CONFLICT (model, hash) DO UPDATE "
                    "SET dims = EXCLUDED.dims, embedding = EXCLUDED.embedding", rows)

        self.db.run(go, what="writing the embedding cache")

    # ------------------------------------------------------------------ health

    def stats(self) -> StoreStats:
        def go(conn: Any) -> dict[str, Any]:
            a = (self.agent_id,)

            def one(sql: str, args: tuple[Any, ...] = a) -> Any:
                return conn.execute(sql, args).fetchone()[0]

            dims = conn.execute(
                "SELECT dims FROM memory_vectors WHERE agent_id = %s GROUP BY dims "
                "ORDER BY count(*) DESC LIMIT 1", a).fetchone()
            return {
                "files": one("SELECT count(*) FROM memory_documents WHERE agent_id = %s"),
                "chunks": one("SELECT count(*) FROM memory_chunks WHERE agent_id = %s"),
                "vectors": one("SELECT count(*) FROM memory_vectors WHERE agent_id = %s"),
                "embedded_chunks": one(
                    "SELECT count(DISTINCT chunk_id) FROM memory_vectors WHERE agent_id = %s"),
                "dimensions": int(dims[0]) if dims else None,
                "cached_embeddings": one("SELECT count(*) FROM embedding_cache", ()),
                "users": one("SELECT count(DISTINCT user_id) FROM memory_documents "
                             "WHERE agent_id = %s AND user_id <> ''"),
                "server": one("SHOW server_version", ()),
                "pgvector": one("SELECT extversion FROM pg_extension WHERE extname = 'vector'", ()),
                "bytes": one("SELECT pg_database_size(current_database())", ()),
                "hnsw": bool(dims) and vector_index_state(conn, "memory_vectors", int(dims[0])) == "valid",
            }

        out = self.db.run(go, what="stats")
        # the index exists once a size has hnsw_min_rows vectors; below that, an exact scan
        search = ("HNSW (cosine), per-dimension index" if out["hnsw"] else
                  f"exact scan (cosine; an HNSW index from {self.hnsw_min_rows:,} vectors of a size)")
        return StoreStats(
            files=out["files"],
            chunks=out["chunks"],
            vectors=out["vectors"],
            embedded_chunks=out["embedded_chunks"],
            dimensions=out["dimensions"],
            cached_embeddings=out["cached_embeddings"],
            vector_backend=f"pgvector {out['pgvector']} {search}",
            text_backend=f"PostgreSQL {out['server']} tsvector 'simple' + character pairs + GIN",
            schema_version=self.schema_version,
            bytes=out["bytes"],
            extra={"users": out["users"], "agent_id": str(self.agent_id), "location": self.location},
        )

    def check(self, deep: bool = False) -> list[str]:
        problems: list[str] = []
        try:
            def go(conn: Any) -> None:
                ver = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
                if ver != LATEST:
                    problems.append(f"schema version {ver}, expected {LATEST}")
                bad = conn.execute(
                    "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = current_schema() AND NOT i.indisvalid").fetchall()
                problems.extend(f"index {r[0]} is invalid (rebuild it with REINDEX)" for r in bad)
                if deep:
                    orphans = conn.execute(
                        "SELECT count(*) FROM memory_chunks c LEFT JOIN memory_documents d "
                        "ON d.id = c.document_id WHERE d.id IS NULL").fetchone()[0]
                    if orphans:
                        problems.append(f"{orphans} chunks without a document")

            self.db.run(go, what="health check")
        except SoulframeError as exc:
            problems.append(str(exc))
        return problems

    # ------------------------------------------------------------------ recall tracking

    def record_recalls(self, recalls: Sequence[Recall], query_hash: str, day: str) -> None:
        """Count one search's returned entries: one small transaction per search."""
        if not recalls:
            return

        def go(conn: Any) -> None:
            with conn.transaction():
                for r in recalls:
                    key = (self.agent_id, r.scope or "", r.path, recall_key(r.text))
                    conn.execute(
                        "INSERT INTO memory_recalls (agent_id, user_id, path, entry_hash, line, text, "
                        "count, best_score) VALUES (%s, %s, %s, %s, %s, %s, 1, %s) "
                        "ON CONFLICT (agent_id, user_id, path, entry_hash) DO UPDATE SET "
                        "count = memory_recalls.count + 1, line = EXCLUDED.line, "
                        "best_score = greatest(memory_recalls.best_score, EXCLUDED.best_score), "
                        "last_recalled = now()",
                        (*key, r.line, r.text, float(r.score)),
                    )
                    conn.execute(
                        "INSERT INTO memory_recall_queries (agent_id, user_id, path, entry_hash, "
                        "query_hash, day) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        (*key, query_hash, day),
                    )

        self.db.run(go, what="record recalls")

    def move_recalls(self, moves: Sequence[tuple[str, str]]) -> None:
        """``MovesRecalls.move_recalls``: the agent's counts of each old path under its new
        one, merged with any there (a file moved back where it was counted before)."""
        if not moves:
            return

        def go(conn: Any) -> None:
            with conn.transaction():
                for old, new in moves:
                    conn.execute(
                        "INSERT INTO memory_recalls (agent_id, user_id, path, entry_hash, line, text, count, "
                        "best_score, first_recalled, last_recalled) SELECT agent_id, user_id, %s, entry_hash, "
                        "line, text, count, best_score, first_recalled, last_recalled FROM memory_recalls "
                        "WHERE agent_id = %s AND user_id = '' AND path = %s "
                        "ON CONFLICT (agent_id, user_id, path, entry_hash) DO UPDATE SET "
                        "count = memory_recalls.count + EXCLUDED.count, "
                        "best_score = greatest(memory_recalls.best_score, EXCLUDED.best_score), "
                        "first_recalled = least(memory_recalls.first_recalled, EXCLUDED.first_recalled), "
                        "last_recalled = greatest(memory_recalls.last_recalled, EXCLUDED.last_recalled)",
                        (new, self.agent_id, old))
                    conn.execute(
                        "INSERT INTO memory_recall_queries (agent_id, user_id, path, entry_hash, query_hash, day) "
                        "SELECT agent_id, user_id, %s, entry_hash, query_hash, day FROM memory_recall_queries "
                        "WHERE agent_id = %s AND user_id = '' AND path = %s ON CONFLICT DO NOTHING",
                        (new, self.agent_id, old))
                    for table in ("memory_recalls", "memory_recall_queries"):
                        conn.execute(f"DELETE FROM {table} WHERE agent_id = %s AND user_id = '' AND path = %s",
                                     (self.agent_id, old))

        self.db.run(go, what="move recalls")

    def recalls(self, limit: int = 20, *, scope: str | None = None, path_prefix: str | None = None) -> list[RecallStat]:
        """The most recalled entries, most first."""
        def go(conn: Any) -> Any:
            args: list[Any] = [self.agent_id, scope or ""]
            where = "r.agent_id = %s AND r.user_id = %s"
            if path_prefix:
                where += " AND starts_with(r.path, %s)"
                args.append(path_prefix)
            return conn.execute(
                "SELECT r.path, r.line, r.text, r.count, r.best_score, "
                "extract(epoch FROM r.first_recalled), extract(epoch FROM r.last_recalled), "
                "(SELECT count(DISTINCT q.query_hash) FROM memory_recall_queries q WHERE "
                " q.agent_id = r.agent_id AND q.user_id = r.user_id AND q.path = r.path "
                " AND q.entry_hash = r.entry_hash), "
                "(SELECT count(DISTINCT q.day) FROM memory_recall_queries q WHERE "
                " q.agent_id = r.agent_id AND q.user_id = r.user_id AND q.path = r.path "
                " AND q.entry_hash = r.entry_hash) "
                f"FROM memory_recalls r WHERE {where} ORDER BY r.count DESC, r.last_recalled DESC LIMIT %s",
                (*args, int(limit)),
            ).fetchall()

        return [RecallStat(path=r[0], line=int(r[1]), text=r[2], count=int(r[3]), queries=int(r[7]),
                           days=int(r[8]), best_score=float(r[4]), first_recalled=float(r[5]),
                           last_recalled=float(r[6]), scope=scope)
                for r in self.db.run(go, what="read recalls")]

    def erase(self, texts: Sequence[str], cache: Mapping[str, Sequence[str]]) -> dict[str, int]:
        """``ErasingStore.erase``: rows deleted in one transaction, then ``VACUUM FULL``
        rewrites the memory tables into new files (the old ones, which still held the
        deleted tuples, are removed) and ``CHECKPOINT`` flushes them. Write-ahead-log
        segments and base backups outside the database are beyond its reach.

        Which rows hold a text is decided in Python (``casefold``), as forget finds the
        lines and the SQLite store its rows: the server's ``lower()`` follows its locale,
        and under ``C`` leaves "JÜRGEN" as it is, so "jürgen" would not match."""
        needles = [t.casefold() for t in texts if t.strip()]

        def holding(conn: Any, sql: str) -> list[tuple[Any, ...]]:
            """The rows of ``sql`` (the text last) whose text holds a needle, read in batches."""
            found: list[tuple[Any, ...]] = []
            with conn.cursor(name="soulframe_erase") as cur:
                cur.execute(sql, (self.agent_id,))
                while rows := cur.fetchmany(2000):
                    found += [r[:-1] for r in rows if any(n in str(r[-1]).casefold() for n in needles)]
            return found

        def go(conn: Any) -> dict[str, int]:
            counts = {"chunks": 0, "recalls": 0, "cached_embeddings": 0}
            if needles:
                ids = [r[0] for r in holding(conn, "SELECT id, text FROM memory_chunks WHERE agent_id = %s")]
                counts["chunks"] = conn.execute("DELETE FROM memory_chunks WHERE id = ANY(%s)", (ids,)).rowcount
                gone = holding(conn, "SELECT user_id, path, entry_hash, text FROM memory_recalls "
                                     "WHERE agent_id = %s")
                for user_id, path, entry_hash in gone:
                    key = (self.agent_id, user_id, path, entry_hash)
                    conn.execute("DELETE FROM memory_recalls WHERE agent_id = %s AND user_id = %s "
                                 "AND path = %s AND entry_hash = %s", key)
                    conn.execute("DELETE FROM memory_recall_queries WHERE agent_id = %s AND user_id = %s "
                                 "AND path = %s AND entry_hash = %s", key)
                counts["recalls"] = len(gone)
            for model, hashes in cache.items():
                if hashes:
                    counts["cached_embeddings"] += conn.execute(
                        "DELETE FROM embedding_cache WHERE model = %s AND hash = ANY(%s)",
                        (model, list(hashes))).rowcount
            return counts

        counts = self.db.run(go, what="erasing forgotten text")
        with self.db.connection() as conn:
            conn.commit()
            conn.autocommit = True  # VACUUM cannot run inside a transaction
            try:
                for table in ("memory_chunks", "memory_vectors", "memory_recalls",
                              "memory_recall_queries", "embedding_cache"):
                    conn.execute(f"VACUUM FULL {table}".encode())
                with contextlib.suppress(Exception):  # CHECKPOINT needs pg_checkpoint or superuser
                    conn.execute(b"CHECKPOINT")
            finally:
                conn.autocommit = False
        return counts

    def analyze(self) -> None:
        """Refresh the planner's statistics of the memory tables. Autovacuum does this on
        its own within a minute or so; after a bulk load (a first sync of a large
        workspace, ``db migrate-from-sqlite``) doing it at once lets the planner pick the
        GIN and HNSW indexes straight away."""

        def go(conn: Any) -> None:
            for table in ("memory_documents", "memory_chunks", "memory_vectors"):
                conn.execute(f"ANALYZE {table}".encode())

        self.db.run(go, what="analyze")

    def close(self) -> None:
        self.db.close()


def configure_connection(conn: Any) -> None:
    """Run on every new pooled connection: numpy <-> vector adapters."""
    from .adapt import register

    register(conn)
    conn.commit()  # TypeInfo.fetch opened a transaction; return the connection idle


def _stored(r: Sequence[Any], score: float | None = None) -> StoredChunk:
    return StoredChunk(
        id=int(r[0]), path=r[1], start_line=int(r[2]), end_line=int(r[3]), text=r[4],
        score=float(r[5] if score is None else score), private=bool(r[6]), day=r[7],
        scope=r[8] or None,
    )
