"""The PostgreSQL schema, as numbered migrations recorded in ``schema_version``.

One database serves many agents and users (managed mode), so every row of memory and
context files carries its ``agent_id`` and, where it is per-user, its ``user_id``
(``''`` = the agent's own). Tables are created in the connection's ``current_schema()``,
so a DSN with ``options=-csearch_path=...`` can keep several installations apart.

Vectors: ``memory_vectors.embedding`` and ``skills.embedding`` are dimension-less
``vector`` columns with a ``dims`` column beside them. Each embedding size in use gets its
own partial HNSW index on ``embedding::vector(d)`` (built once that size has enough rows
to be worth it, see :func:`build_vector_index`), so switching
embedding models - or two
agents using different ones - needs no table rewrite: queries filter on ``dims`` and the
old vectors are replaced as files are re-embedded.

Never edit a released migration: append the next number.
"""

from __future__ import annotations

import contextlib
from typing import Any

from .connection import Database, StoreUnavailableError

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "agents, context files, memory, skills and grants",
        """
        CREATE TABLE agents (
            id           uuid PRIMARY KEY,
            key          text NOT NULL UNIQUE,
            type         text NOT NULL DEFAULT 'open' CHECK (type IN ('open', 'predefined')),
            display_name text,
            status       text NOT NULL DEFAULT 'active',
            created_at   timestamptz NOT NULL DEFAULT now(),
            updated_at   timestamptz NOT NULL DEFAULT now()
        );
        -- agent-level files of predefined agents (shared by every user)
        CREATE TABLE agent_context_files (
            agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            file_name  text NOT NULL,
            content    text NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (agent_id, file_name)
        );
        -- per-user copies: USER.md and BOOTSTRAP.md (predefined), all seven (open)
        CREATE TABLE user_context_files (
            agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            user_id    text NOT NULL,
            file_name  text NOT NULL,
            content    text NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (agent_id, user_id, file_name)
        );
        -- users an agent has met: when each was seeded and finished the first-run ritual
        CREATE TABLE agent_users (
            agent_id               uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            user_id                text NOT NULL,
            first_seen_at          timestamptz NOT NULL DEFAULT now(),
            bootstrap_completed_at timestamptz,
            PRIMARY KEY (agent_id, user_id)
        );
        CREATE TABLE store_meta (
            agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            key      text NOT NULL,
            value    text NOT NULL,
            PRIMARY KEY (agent_id, key)
        );
        CREATE TABLE memory_documents (
            id         bigserial PRIMARY KEY,
            agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            user_id    text NOT NULL DEFAULT '',
            path       text NOT NULL,
            hash       text NOT NULL,
            mtime_ns   bigint NOT NULL DEFAULT 0,
            size       bigint NOT NULL DEFAULT 0,
            private    boolean NOT NULL DEFAULT false,
            day        text,
            model      text,
            indexed_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (agent_id, user_id, path)
        );
        CREATE TABLE memory_chunks (
            id          bigserial PRIMARY KEY,
            document_id bigint NOT NULL REFERENCES memory_documents(id) ON DELETE CASCADE,
            agent_id    uuid NOT NULL,
            user_id     text NOT NULL DEFAULT '',
            private     boolean NOT NULL DEFAULT false,
            start_line  integer NOT NULL,
            end_line    integer NOT NULL,
            hash        text NOT NULL,
            text        text NOT NULL,
            tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
        );
        CREATE INDEX memory_chunks_document ON memory_chunks (document_id);
        CREATE INDEX memory_chunks_scope ON memory_chunks (agent_id, user_id);
        CREATE INDEX memory_chunks_tsv ON memory_chunks USING gin (tsv);
        -- one row per window of a chunk the embedding model saw whole
        CREATE TABLE memory_vectors (
            id        bigserial PRIMARY KEY,
            chunk_id  bigint NOT NULL REFERENCES memory_chunks(id) ON DELETE CASCADE,
            agent_id  uuid NOT NULL,
            user_id   text NOT NULL DEFAULT '',
            private   boolean NOT NULL DEFAULT false,
            part      integer NOT NULL,
            dims      integer NOT NULL,
            embedding vector NOT NULL
        );
        CREATE INDEX memory_vectors_chunk ON memory_vectors (chunk_id);
        CREATE INDEX memory_vectors_scope ON memory_vectors (agent_id, user_id, dims);
        CREATE TABLE embedding_cache (
            model      text NOT NULL,
            hash       text NOT NULL,
            dims       integer NOT NULL,
            embedding  vector NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (model, hash)
        );
        CREATE TABLE skills (
            id              uuid PRIMARY KEY,
            slug            text NOT NULL UNIQUE,
            name            text NOT NULL,
            description     text NOT NULL DEFAULT '',
            visibility      text NOT NULL DEFAULT 'private'
                            CHECK (visibility IN ('public', 'private', 'internal')),
            owner_id        text,
            version         integer NOT NULL DEFAULT 1,
            status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
            embedding       vector,
            dims            integer,
            embedding_model text,
            created_at      timestamptz NOT NULL DEFAULT now(),
            updated_at      timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE skill_versions (
            skill_id     uuid NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
            version      integer NOT NULL,
            content      text NOT NULL,
            files        jsonb NOT NULL DEFAULT '{}'::jsonb,
            digest       text NOT NULL,
            published_by text,
            created_at   timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (skill_id, version)
        );
        CREATE TABLE skill_agent_grants (
            skill_id       uuid NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
            agent_id       uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            pinned_version integer,
            granted_by     text,
            granted_at     timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (skill_id, agent_id)
        );
        CREATE TABLE skill_user_grants (
            skill_id   uuid NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
            user_id    text NOT NULL,
            granted_by text,
            granted_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (skill_id, user_id)
        );
        CREATE INDEX skill_user_grants_user ON skill_user_grants (user_id);
        -- bumped by every publish, grant and revoke: the managed skill tier reloads on change
        CREATE TABLE skill_generation (
            id         integer PRIMARY KEY CHECK (id = 1),
            generation bigint NOT NULL
        );
        CREATE INDEX skill_agent_grants_agent ON skill_agent_grants (agent_id);
        """,
    ),
    (
        2,
        "recall tracking",
        """
        -- each memory entry (a line of a memory file, by its text's hash) that search
        -- returned to an agent; consolidation's gates read these
        CREATE TABLE memory_recalls (
            agent_id       uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            user_id        text NOT NULL DEFAULT '',
            path           text NOT NULL,
            entry_hash     text NOT NULL,
            line           integer NOT NULL,
            text           text NOT NULL,
            count          bigint NOT NULL DEFAULT 0,
            best_score     double precision NOT NULL DEFAULT 0,
            first_recalled timestamptz NOT NULL DEFAULT now(),
            last_recalled  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (agent_id, user_id, path, entry_hash)
        );
        CREATE TABLE memory_recall_queries (
            agent_id   uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
            user_id    text NOT NULL DEFAULT '',
            path       text NOT NULL,
            entry_hash text NOT NULL,
            query_hash text NOT NULL,
            day        text NOT NULL,
            PRIMARY KEY (agent_id, user_id, path, entry_hash, query_hash, day)
        );
        """,
    ),
    (
        3,
        "keyword search in scripts written without spaces",
        """
        -- Chinese, Japanese, Korean and Thai: grams holds each unspaced run's character pairs
        -- and characters (soulframe.kit.index_grams; '' for other text, whose lexemes
        -- stay what they were), so a two-character word inside a sentence is found
        ALTER TABLE memory_chunks ADD COLUMN grams text NOT NULL DEFAULT '';
        ALTER TABLE memory_chunks DROP COLUMN tsv;
        ALTER TABLE memory_chunks ADD COLUMN tsv tsvector
            GENERATED ALWAYS AS (to_tsvector('simple', text || ' ' || grams)) STORED;
        CREATE INDEX memory_chunks_tsv ON memory_chunks USING gin (tsv);
        """,
    ),
    (
        4,
        "keyword search without case or accents in every script",
        """
        -- grams also holds each word lower-cased and without accents where the server's
        -- 'simple' lexeme is not (a C-locale server lower-cases ASCII only; none drops
        -- accents): soulframe_postgres.textfold. The data step fills it for existing rows
        SELECT 1;
        """,
    ),
    (
        5,
        "keyword search of inflected Greek and Cyrillic words and of emoji",
        """
        -- grams also holds each Greek, Cyrillic and Armenian word's stem and each emoji's
        -- code points (soulframe.kit.index_grams). The data step fills it for existing rows
        SELECT 1;
        """,
    ),
)

LATEST = MIGRATIONS[-1][0]


def _fill_grams(conn: Any) -> None:
    """Migration 3's data step: the grams of chunks written before it (computed in Python,
    the same function every write uses)."""
    from soulframe.kit import UNSPACED_CLASS, index_grams

    rows = conn.execute("SELECT id, text FROM memory_chunks WHERE text ~ %s",
                        (UNSPACED_CLASS,)).fetchall()
    updates = [(g, cid) for cid, text in rows if (g := index_grams(text))]
    if updates:
        with conn.cursor() as cur:
            cur.executemany("UPDATE memory_chunks SET grams = %s WHERE id = %s", updates)


def _fill_folded(conn: Any) -> None:
    """Migration 4's data step: the grams of chunks holding non-ASCII text, recomputed with
    their folded words (read in batches: a large index need not fit in memory)."""
    from .textfold import index_extra, server_lowers_all

    lowers_all = server_lowers_all(conn)
    with conn.cursor(name="soulframe_fold") as read, conn.cursor() as write:
        read.execute("SELECT id, text, grams FROM memory_chunks WHERE text ~ %s", ("[^\u0001-\u007f]",))
        while rows := read.fetchmany(2000):
            updates = [(g, cid) for cid, text, old in rows
                       if (g := index_extra(text, lowers_all=lowers_all)) != old]
            if updates:
                write.executemany("UPDATE memory_chunks SET grams = %s WHERE id = %s", updates)


#: Python steps run right after a migration's SQL, in the same savepoint; migration 5 adds
#: stems and emoji to the grams of non-ASCII text, which is what migration 4's step recomputes
DATA_STEPS = {3: _fill_grams, 4: _fill_folded, 5: _fill_folded}

#: HNSW indexes ``vector`` up to 2,000 dimensions and ``halfvec`` up to 4,000
HNSW_MAX_VECTOR = 2000
HNSW_MAX_HALFVEC = 4000


def vector_expr(dims: int, column: str = "embedding") -> tuple[str, str]:
    """The typed expression a ``dims``-sized index is built on, and its cosine opclass.

    Queries must use exactly this expression for the planner to pick the index.
    """
    d = int(dims)
    if d <= HNSW_MAX_VECTOR:
        return f"({column}::vector({d}))", "vector_cosine_ops"
    return f"({column}::halfvec({d}))", "halfvec_cosine_ops"


def query_cast(dims: int) -> str:
    d = int(dims)
    return f"vector({d})" if d <= HNSW_MAX_VECTOR else f"halfvec({d})"


def migrate(db: Database) -> int:
    """Bring the schema up to date; returns the version. Safe to run from several
    processes at once (an advisory lock serialises them)."""
    import psycopg

    conn = db.connect(autocommit=True)
    try:
        _ensure_vector_extension(db, conn)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('soulframe.migrate.' || current_schema()))")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
            current = int(row[0]) if row else 0
            if current > LATEST:
                raise StoreUnavailableError(
                    f"PostgreSQL {db.location}: schema version {current} is newer than this "
                    f"soulframe understands ({LATEST}); upgrade soulframe"
                )
            for version, name, sql in MIGRATIONS:
                if version <= current:
                    continue
                # each migration in its own savepoint: a failure leaves the previous version
                with conn.transaction():
                    conn.execute(sql.encode())
                    if version in DATA_STEPS:
                        DATA_STEPS[version](conn)
                    conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)",
                                 (version, name))
                current = version
        return current
    except psycopg.Error as exc:
        raise db.error("migration failed", exc) from None
    finally:
        conn.close()


def _ensure_vector_extension(db: Database, conn: Any) -> None:
    import psycopg

    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.FeatureNotSupported as exc:
        raise db.error("pgvector is not installed on this server (install the "
                       "postgresql-NN-pgvector package, or run `soulframe db start` for a "
                       "local server that has it)", exc) from None
    except psycopg.errors.UndefinedFile as exc:
        raise db.error("pgvector is not installed on this server (install the "
                       "postgresql-NN-pgvector package, or run `soulframe db start` for a "
                       "local server that has it)", exc) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise db.error("the pgvector extension is missing and this user may not create it; "
                       "ask an administrator to run CREATE EXTENSION vector", exc) from None


def index_name(table: str, dims: int) -> str:
    return f"{table}_hnsw_{int(dims)}"


def vector_index_state(conn: Any, table: str, dims: int) -> str | None:
    """``"valid"``, ``"invalid"`` (a concurrent build that died) or ``None`` (missing)."""
    row = conn.execute(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relname = %s",
        (index_name(table, dims),),
    ).fetchone()
    if row is None:
        return None
    return "valid" if row[0] else "invalid"


def build_vector_index(db: Database, table: str, dims: int, *, min_rows: int = 0) -> bool:
    """Build the HNSW index for ``dims``-sized vectors of ``table`` if it is missing and the
    table holds at least ``min_rows`` of them. Returns True when the index exists after.

    Below a few thousand vectors an exact scan is as fast as the index and exact; and an
    HNSW index built once over many rows is far cheaper than one grown row by row (a bulk
    load of 100,000 vectors). So the index is built when a size first has ``min_rows``
    vectors, ``CONCURRENTLY`` on its own autocommit connection: writers are not blocked.
    A build that died half-way leaves an invalid index, which is dropped and rebuilt.
    Vectors larger than HNSW supports (4,000 dimensions) get none: they are scanned.
    """
    import psycopg

    d = int(dims)
    if d > HNSW_MAX_HALFVEC or d <= 0:
        return False
    name = index_name(table, d)
    conn = db.connect(autocommit=True)
    try:
        state = vector_index_state(conn, table, d)
        if state == "valid":
            return True
        if min_rows > 0 and state is None:
            count = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE dims = %s LIMIT %s) t".encode(),
                (d, min_rows)).fetchone()[0]
            if count < min_rows:
                return False
        # one builder per index across processes; the others skip it this time
        got = conn.execute("SELECT pg_try_advisory_lock(hashtext('soulframe.index.' || "
                           "current_schema() || %s))", (name,)).fetchone()[0]
        if not got:
            return False
        try:
            if vector_index_state(conn, table, d) == "invalid":
                conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}".encode())
            with contextlib.suppress(psycopg.Error):
                conn.execute("SET maintenance_work_mem = '256MB'")
            expr, ops = vector_expr(d)
            conn.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} "
                f"USING hnsw ({expr} {ops}) WHERE dims = {d}".encode()
            )
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('soulframe.index.' || "
                         "current_schema() || %s))", (name,))
        return vector_index_state(conn, table, d) == "valid"
    except psycopg.Error as exc:
        raise db.error(f"building index {name} failed", exc) from None
    finally:
        conn.close()
