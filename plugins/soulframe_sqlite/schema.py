"""The SQLite schema, as numbered migrations.

``meta.schema_version`` records the last migration applied. Each migration runs in its own
transaction, so a crash mid-upgrade leaves the previous version intact. Never edit a released
migration: add the next number.
"""

from __future__ import annotations

from soulframe.kit import MARKS

SCHEMA_VERSION_KEY = "schema_version"

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE IF NOT EXISTS meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE files (
            id         INTEGER PRIMARY KEY,
            scope      TEXT NOT NULL DEFAULT '',      -- '' = the agent's own; else a user id
            path       TEXT NOT NULL,                 -- workspace-relative, forward slashes
            hash       TEXT NOT NULL,                 -- sha256, first 16 bytes, hex
            mtime_ns   INTEGER NOT NULL,
            size       INTEGER NOT NULL,
            private    INTEGER NOT NULL DEFAULT 0,    -- 1: main private sessions only
            day        TEXT,                          -- YYYY-MM-DD of a daily log
            model      TEXT,                          -- embedding model of its vectors
            indexed_at REAL NOT NULL,
            UNIQUE (scope, path)
        );
        CREATE TABLE chunks (
            id         INTEGER PRIMARY KEY,
            file_id    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            start_line INTEGER NOT NULL,
            end_line   INTEGER NOT NULL,
            hash       TEXT NOT NULL,
            text       TEXT NOT NULL
        );
        CREATE INDEX chunks_file ON chunks(file_id);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, content='chunks', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        -- one row per window of a chunk the model saw whole (see docs/memory.md)
        CREATE TABLE vectors (
            id        INTEGER PRIMARY KEY,
            chunk_id  INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            part      INTEGER NOT NULL,
            embedding BLOB NOT NULL                   -- little-endian float32
        );
        CREATE INDEX vectors_chunk ON vectors(chunk_id);
        CREATE TABLE embedding_cache (
            model      TEXT NOT NULL,
            hash       TEXT NOT NULL,
            dims       INTEGER NOT NULL,
            embedding  BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (model, hash)
        ) WITHOUT ROWID;
        """,
    ),
    (
        2,
        """
        -- recall tracking: each memory entry (one line of a memory file, by its text's hash)
        -- that search returned to an agent; consolidation's gates read these
        CREATE TABLE recalls (
            scope          TEXT NOT NULL DEFAULT '',
            path           TEXT NOT NULL,
            entry_hash     TEXT NOT NULL,
            line           INTEGER NOT NULL,
            text           TEXT NOT NULL,
            count          INTEGER NOT NULL DEFAULT 0,
            best_score     REAL NOT NULL DEFAULT 0,
            first_recalled REAL NOT NULL,
            last_recalled  REAL NOT NULL,
            PRIMARY KEY (scope, path, entry_hash)
        ) WITHOUT ROWID;
        CREATE TABLE recall_queries (
            scope      TEXT NOT NULL DEFAULT '',
            path       TEXT NOT NULL,
            entry_hash TEXT NOT NULL,
            query_hash TEXT NOT NULL,
            day        TEXT NOT NULL,
            PRIMARY KEY (scope, path, entry_hash, query_hash, day)
        ) WITHOUT ROWID;
        """,
    ),
    (
        3,
        # Chinese, Japanese, Korean and Thai: ``grams`` holds each unspaced run's character
        # pairs and characters (soulframe.kit.index_grams; "" for other text, whose
        # scores stay what they were), so a two-character word inside a sentence is found.
        # The marks of Thai and Indic scripts become letters, not separators. Existing rows
        # get their grams from the function the store registers on its connection.
        f"""
        DROP TRIGGER chunks_ai;
        DROP TRIGGER chunks_ad;
        DROP TABLE chunks_fts;
        ALTER TABLE chunks ADD COLUMN grams TEXT NOT NULL DEFAULT '';
        UPDATE chunks SET grams = soulframe_grams(text);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, grams, content='chunks', content_rowid='id',
            tokenize="porter unicode61 tokenchars '{MARKS}'"
        );
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, text, grams) VALUES (new.id, new.text, new.grams);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, text, grams)
            VALUES ('delete', old.id, old.text, old.grams);
        END;
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        """,
    ),
    (
        4,
        # Greek, Arabic, Hebrew, German ß, Turkish ı: grams also holds the plain spelling
        # of words unicode61 keeps as written (soulframe.kit.search_spelling), so "αθηνα"
        # finds "Αθήνα" and "محمد" finds "مُحَمَّد". Only rows whose grams change are
        # rewritten; the full-text index is rebuilt from the table once.
        """
        UPDATE chunks SET grams = soulframe_grams(text) WHERE soulframe_grams(text) != grams;
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        """,
    ),
    (
        5,
        # Greek, Cyrillic and Armenian words inflect at the end: grams also holds each
        # one's stem (its first five letters, marked: soulframe.kit.search_tokens), so
        # "петербург" finds "Петербурге"; Cyrillic ё and й get their plain spelling (е, и);
        # and each emoji its code points (unicode61 drops emoji). Filled as in 4, but the
        # full-text index is rebuilt only when a row changed: an index of English notes
        # alone opens at once after the upgrade.
        """
        UPDATE chunks SET grams = soulframe_grams(text) WHERE soulframe_grams(text) != grams;
        INSERT INTO chunks_fts(chunks_fts) SELECT 'rebuild' WHERE changes() > 0;
        """,
    ),
)

LATEST = MIGRATIONS[-1][0]
