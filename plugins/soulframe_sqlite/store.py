"""``SqliteStore``: the embedded default store (seed 001 §3's schema, grown).

* one file, ``<state_dir>/memory/<agent>.sqlite`` (mode 0600, its directory 0700);
* WAL journal and a busy timeout, so two processes can index and search at once; every
  write is one ``BEGIN IMMEDIATE`` transaction (one file's chunks are replaced atomically);
* FTS5 with the ``porter unicode61`` tokenizer for keyword search, over each chunk's text
  and its ``grams`` (the character pairs of Chinese, Japanese, Korean and Thai runs, plain
  spellings, the stems of Greek and Cyrillic words and emoji, see
  :mod:`soulframe._engine.textsplit`);
* vectors as float32 BLOBs in the ``vectors`` table, scanned with numpy
  (:mod:`soulframe_sqlite.vectors`); with ``vector_scan = "sqlite-vec"`` in
  ``[plugins.config.soulframe_sqlite]`` (and the ``soulframe[sqlite-vec]`` extra) they are
  mirrored into a ``vec0`` table too and searched there;
* a corrupted file is detected on open, moved aside as ``<name>.corrupt-<timestamp>`` and
  a fresh index is created; the memory index then rebuilds it from the Markdown.

One module, over the usual size, because it is one thing: the ``Store`` protocol on one
SQLite file, every method a transaction against the same schema (the vector scan and the
per-user files live in their own modules).
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soulframe import (
    ChunkInput,
    CommonWords,
    FileRecord,
    Recall,
    RecallStat,
    SoulframeError,
    SoulframeWarning,
    StoredChunk,
    StoreStats,
)
from soulframe.kit import index_grams, search_spelling, search_tokens
from soulframe.memorykit import recall_key

from .driver import load_sqlite_vec, sqlite_module
from .schema import LATEST, MIGRATIONS, SCHEMA_VERSION_KEY

if TYPE_CHECKING:
    from soulframe import AgentLike, Vector

    from .vectors import VectorMatrix

log = logging.getLogger("soulframe.sqlite")

BUSY_TIMEOUT_MS = 30_000
#: how long a search waits for the write lock to count what it returned; past it the
#: counts wait in ``<index>.recalls-pending`` for the next search
RECALL_WAIT_MS = 200
#: ``PRAGMA quick_check`` reads every page; above this size it is left to `memory status --deep`
QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024


class StoreCorruptWarning(SoulframeWarning):
    """The index file was unreadable; it was moved aside and a new one created."""


class SqliteStore:
    """The ``sqlite`` store. Thread-safe (one connection behind a lock)."""

    name = "sqlite"

    def __init__(
        self, path: str | os.PathLike[str], *, vector_scan: str = "numpy",
        sqlite_vec: bool | None = None, workspace: str | os.PathLike[str] | None = None,
    ) -> None:
        if vector_scan not in ("numpy", "sqlite-vec"):
            raise SoulframeError(
                f"[plugins.config.soulframe_sqlite] vector_scan = {vector_scan!r} — expected "
                "'numpy' or 'sqlite-vec'"
            )
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self.vector_scan = vector_scan
        # the vec0 mirror costs ~3x the indexing time: kept only where a search reads it
        self.want_vec = vector_scan == "sqlite-vec" if sqlite_vec is None else sqlite_vec
        self._vec_default = sqlite_vec is None
        self._lock = threading.RLock()
        self._matrix: VectorMatrix | None = None
        self._count_cache: tuple[str | None, int] | None = None
        self._df_cache: dict[str, int] = {}
        #: (include_private, scope) -> (generation, chunks a search with that visibility sees)
        self._visible_counts: dict[tuple[bool, str | None], tuple[str | None, int]] = {}
        self._matrix_lock = threading.Lock()
        self._reader_lock = threading.Lock()
        self._read_conn: Any = None
        #: where a corrupted file was moved, when this open had to recover
        self.recovered_from: Path | None = None
        self.module, self.driver = sqlite_module()
        _prepare_path(self.path)
        found = _identity(self.path)
        try:
            self._open()
        except self.module.DatabaseError as exc:
            from soulframe.kit import StorageFullError, storage_full

            why = storage_full(exc) if _identity(self.path) == found else None
            if why is not None:  # a full disk is not a corrupted index: keep it (and its recalls)
                raise StorageFullError(f"{why}; {self.path.name} was left as it was") from exc
            # (an I/O error on a file another process just moved aside is no full disk: the
            # fresh index it made is there to open)
            self._recover(exc, found)
        #: the file this connection writes into, to tell when the path names another one
        self._opened = _identity(self.path)
        self._workspace = None if workspace is None else str(workspace)
        if self._workspace is not None:
            try:
                self._claim_workspace(self._workspace)
            except BaseException:
                self.close()
                raise

    # ------------------------------------------------------------------ opening

    def _open(self) -> None:
        conn = self.module.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # reading the schema is the first thing that fails on a file that is not a DB
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if self.path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
                result = conn.execute("PRAGMA quick_check").fetchone()[0]
                if result != "ok":
                    raise self.module.DatabaseError(f"quick_check: {result}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                log.warning("%s: journal_mode is %s, not WAL", self.path, mode)
            conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL: no corruption on crash
            # deleted rows are overwritten with zeros, not left in free pages: a chunk cut
            # again (an upgrade masking a secret an older release stored) or forgotten is
            # gone from the file, not only from the tables
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("PRAGMA foreign_keys = ON")
            if self.want_vec:
                self.vec_loaded, self.vec_info = load_sqlite_vec(conn)
            else:
                self.vec_loaded, self.vec_info = False, (
                    "not used (vector_scan = numpy)" if self._vec_default else "switched off (sqlite_vec = false)")
            self.conn = conn
            # migration 3 fills the grams of chunks indexed before it
            conn.create_function("soulframe_grams", 1, index_grams, deterministic=True)
            self._migrate()
            self._check_fts5()
        except UnicodeDecodeError as exc:
            # SQLite's message about a damaged file (or quick_check's report) quotes the
            # damaged bytes, which need not be UTF-8: the file is corrupted all the same
            conn.close()
            raise self.module.DatabaseError(f"the file is damaged ({exc})") from exc
        except BaseException:
            conn.close()
            raise
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.chmod(f"{self.path}{suffix}", 0o600)
        if self.vec_loaded:
            self._sync_vec_mirror()

    def _follow_file(self) -> None:
        """Open the index the path names now when it is not the file this connection has
        open. A long-lived process (memory watch, serve) keeps its connection while the user
        deletes the index to rebuild it or another process moves a damaged one aside: SQLite
        goes on writing into the unlinked file, which no other process can open, and every
        note indexed from then on would be lost. Called where a sync starts (:meth:`files`)."""
        if _identity(self.path) == self._opened:
            return
        with self._lock, self._reader_lock:
            if _identity(self.path) == self._opened:
                return
            log.warning("%s was deleted or replaced while open; indexing into the file there now",
                        self.path)
            if self._read_conn is not None:
                with contextlib.suppress(Exception):
                    self._read_conn.close()
                self._read_conn = None
            with contextlib.suppress(Exception):
                self.conn.close()
            self._matrix = None
            self._count_cache = None
            self._df_cache = {}
            self._visible_counts = {}
            _prepare_path(self.path)
            self._open()
            self._opened = _identity(self.path)
            if self._workspace is not None:
                self._claim_workspace(self._workspace)

    def _claim_workspace(self, workspace: str) -> None:
        """Bind this index to one workspace, as the PostgreSQL store binds an agent key.
        Two configs declaring the same agent id with their own workspace (and one state
        directory) would share this file: each sync would remove the other's files and a
        search in one would find the other's notes. Refused while the workspace recorded
        here still exists and has memory indexed; a workspace that was moved (the recorded
        directory is gone) takes its index along."""
        # read before taking the write lock: the index is almost always this workspace's
        # already, and a search must not wait behind another process's long indexing
        if self.get_meta("workspace") == workspace:
            return
        with self._write():
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'workspace'").fetchone()
            recorded = None if row is None else str(row[0])
            if recorded == workspace:
                return
            if recorded is not None and Path(recorded).is_dir():
                indexed = self.conn.execute("SELECT count(*) FROM files WHERE scope = ''").fetchone()[0]
                if indexed:
                    raise SoulframeError(
                        f"{self.path} holds the memory index of the workspace {recorded}; this "
                        f"workspace is {workspace}. Indexing both in one file would delete each "
                        "other's documents: give this workspace its own agent ([[agents]] id = "
                        '"...", workspace = ... in soulframe.toml, then --agent ID) or its own '
                        "store.path"
                    )
            self._set_meta("workspace", workspace)
            if recorded is not None:
                log.warning("%s: the memory index moves from the workspace %s (gone) to %s",
                            self.path, recorded, workspace)

    def _recover(self, exc: BaseException, found: tuple[int, int] | None) -> None:
        """Move the corrupted file aside and start a fresh one, one process at a time:
        several processes finding it corrupted at once must not each move the next one's
        fresh index aside (their syncs would fill files no search opens)."""
        from soulframe.kit import locked

        with locked(self.path.with_name(self.path.name + ".recover.lock")):
            # another process may have moved it aside while this one looked (its fresh index
            # is there now), or the failure was another process's lock on a sound file (a
            # fresh index being set up): either way the file opens now
            try:
                self._open()
                return
            except self.module.DatabaseError as again:
                if _identity(self.path) == found and _busy(again):
                    raise  # still held: a sound file, never moved aside for that
                exc = again
            self._move_aside(exc)
            self._open()

    def _move_aside(self, exc: BaseException) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
        os.replace(self.path, target)
        for suffix in ("-wal", "-shm"):
            side = Path(f"{self.path}{suffix}")
            if side.exists():
                os.replace(side, Path(f"{target}{suffix}"))
        self.recovered_from = target
        warnings.warn(
            f"memory index {self.path} is corrupted ({exc}); moved it to {target.name} and "
            "created a new one — it is rebuilt from the Markdown files on the next sync",
            StoreCorruptWarning,
            stacklevel=4,
        )
        _prepare_path(self.path)

    def _migrate(self) -> None:
        self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        current = int(self.get_meta(SCHEMA_VERSION_KEY) or 0)
        if current > LATEST:
            raise SoulframeError(
                f"{self.path}: memory index schema version {current} is newer than this "
                f"soulframe understands ({LATEST}); upgrade soulframe or run "
                "`soulframe memory rebuild` after moving the file away"
            )
        for number, sql in MIGRATIONS:
            if number <= current:
                continue
            with self._write():
                # read again under the write lock: another process opening the same new file
                # may have applied it meanwhile (twice would fail: "duplicate column")
                if int(self.get_meta(SCHEMA_VERSION_KEY) or 0) >= number:
                    continue
                for statement in _statements(sql):
                    self.conn.execute(statement)
                self._set_meta(SCHEMA_VERSION_KEY, str(number))

    def _check_fts5(self) -> None:
        try:
            self.conn.execute("SELECT rowid FROM chunks_fts LIMIT 0").fetchall()
        except self.module.OperationalError as exc:
            raise SoulframeError(
                f"{self.path}: this SQLite has no FTS5 ({exc}); install sqlean-py>=3.50"
            ) from exc

    # ------------------------------------------------------------------ transactions

    @contextlib.contextmanager
    def _write(self, *, bump: bool = True) -> Iterator[None]:
        """One write transaction. ``BEGIN IMMEDIATE`` takes the write lock up front, so two
        processes queue (busy timeout) instead of failing at commit. ``bump``: the content
        changed (files, chunks, vectors): readers holding the matrix must refresh."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                if bump:
                    self._bump_generation()
                self.conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    self.conn.execute("ROLLBACK")
                raise

    def _bump_generation(self) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT(key) DO "
            "UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
        )

    # ------------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def set_meta(self, key: str, value: str) -> None:
        # a setting beside the index (the model's calibration, the chunker's name), not a
        # change of its content: no generation bump, so the in-memory vector matrix is not
        # reloaded (a first search that measured the calibration reloaded all of it)
        with self._write(bump=False):
            self._set_meta(key, value)

    # ------------------------------------------------------------------ files

    def files(self, scope: str | None = None) -> dict[str, FileRecord]:
        self._follow_file()
        with self._lock:
            rows = self.conn.execute(
                "SELECT path, hash, mtime_ns, size, private, day, model, scope FROM files "
                "WHERE scope = ?",
                (scope or "",),
            ).fetchall()
        return {
            r[0]: FileRecord(path=r[0], hash=r[1], mtime_ns=r[2], size=r[3], private=bool(r[4]),
                             day=r[5], model=r[6], scope=r[7] or None)
            for r in rows
        }

    def files_named(self, paths: Sequence[str], scope: str | None = None) -> dict[str, FileRecord]:
        if not paths:
            return {}
        self._follow_file()
        marks = ",".join("?" * len(paths))
        with self._lock:
            rows = self.conn.execute(
                "SELECT path, hash, mtime_ns, size, private, day, model, scope FROM files "
                f"WHERE scope = ? AND path IN ({marks})",
                (scope or "", *paths),
            ).fetchall()
        return {
            r[0]: FileRecord(path=r[0], hash=r[1], mtime_ns=r[2], size=r[3], private=bool(r[4]),
                             day=r[5], model=r[6], scope=r[7] or None)
            for r in rows
        }

    def replace_file(self, record: FileRecord, chunks: Sequence[ChunkInput]) -> None:
        from soulframe.memorykit import vector_to_bytes

        scope = record.scope or ""
        with self._write():
            self._delete_file(record.path, scope)
            cur = self.conn.execute(
                "INSERT INTO files(scope, path, hash, mtime_ns, size, private, day, model, indexed_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope, record.path, record.hash, record.mtime_ns, record.size, int(record.private),
                 record.day, record.model, time.time()),
            )
            file_id = cur.lastrowid
            vec_rows: list[tuple[int, bytes]] = []
            for ch in chunks:
                cid = self.conn.execute(
                    "INSERT INTO chunks(file_id, start_line, end_line, hash, text, grams) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (file_id, ch.start_line, ch.end_line, ch.hash, ch.text, index_grams(ch.text)),
                ).lastrowid
                for part, vec in enumerate(ch.vectors):
                    blob = vector_to_bytes(vec)
                    vid = self.conn.execute(
                        "INSERT INTO vectors(chunk_id, part, embedding) VALUES (?, ?, ?)",
                        (cid, part, blob),
                    ).lastrowid
                    vec_rows.append((int(vid), blob))
            if vec_rows:
                dims = len(vec_rows[0][1]) // 4
                if self.get_meta("vector_dims") != str(dims):
                    self._set_meta("vector_dims", str(dims))
                self._mirror_insert(vec_rows, dims)

    def touch_file(self, record: FileRecord) -> None:
        with self._write(bump=False):  # the same content under a new mtime: nothing to reload
            self.conn.execute(
                "UPDATE files SET mtime_ns = ?, size = ? WHERE scope = ? AND path = ?",
                (record.mtime_ns, record.size, record.scope or "", record.path),
            )

    def remove_files(self, paths: Sequence[str], scope: str | None = None) -> int:
        if not paths:
            return 0
        removed = 0
        with self._write():
            for path in paths:
                removed += self._delete_file(path, scope or "")
        return removed

    def _delete_file(self, path: str, scope: str) -> int:
        row = self.conn.execute(
            "SELECT id FROM files WHERE scope = ? AND path = ?", (scope, path)
        ).fetchone()
        if row is None:
            return 0
        file_id = row[0]
        if self._has_vec_table():
            if self.vec_loaded:
                self.conn.execute(
                    "DELETE FROM vec_vectors WHERE rowid IN (SELECT v.id FROM vectors v "
                    "JOIN chunks c ON c.id = v.chunk_id WHERE c.file_id = ?)", (file_id,)
                )
            else:
                self._set_meta("vec_stale", "1")
        self.conn.execute(
            "DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE file_id = ?)",
            (file_id,),
        )
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return 1

    def clear(self) -> None:
        with self._write():
            self.conn.execute("DELETE FROM vectors")
            self.conn.execute("DELETE FROM chunks")
            self.conn.execute("DELETE FROM files")
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
            self.conn.execute("DELETE FROM meta WHERE key IN ('vector_dims', 'vec_stale', 'vec_dims')")
            if self._has_vec_table():
                if self.vec_loaded:
                    self.conn.execute("DROP TABLE vec_vectors")
                else:
                    self._set_meta("vec_stale", "1")

    # ------------------------------------------------------------------ sqlite-vec mirror

    def _has_vec_table(self) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'vec_vectors'"
        ).fetchone() is not None

    def _mirror_insert(self, rows: Sequence[tuple[int, bytes]], dims: int) -> None:
        """Copy new vectors into the vec0 table (inside the caller's transaction)."""
        if not self.vec_loaded:
            if self._has_vec_table():
                self._set_meta("vec_stale", "1")
            return
        if self.get_meta("vec_dims") != str(dims) or not self._has_vec_table():
            if self._has_vec_table():
                self.conn.execute("DROP TABLE vec_vectors")
            self.conn.execute(
                f"CREATE VIRTUAL TABLE vec_vectors USING vec0(embedding float[{dims}] "
                "distance_metric=cosine)"
            )
            self._set_meta("vec_dims", str(dims))
            # re-mirror everything of this size (rows of an old model are left out)
            self.conn.execute(
                "INSERT INTO vec_vectors(rowid, embedding) SELECT id, embedding FROM vectors "
                "WHERE length(embedding) = ?", (dims * 4,),
            )
            return
        self.conn.executemany(
            "INSERT INTO vec_vectors(rowid, embedding) VALUES (?, ?)", list(rows)
        )

    def _sync_vec_mirror(self) -> None:
        """Rebuild the vec0 mirror if a process without sqlite-vec wrote since."""
        if self.get_meta("vec_stale") != "1" or not self._has_vec_table():
            return
        dims = self.get_meta("vector_dims")
        with self._write():
            self.conn.execute("DROP TABLE vec_vectors")
            self.conn.execute("DELETE FROM meta WHERE key IN ('vec_stale', 'vec_dims')")
            if dims:
                rows = self.conn.execute(
                    "SELECT id, embedding FROM vectors WHERE length(embedding) = ?", (int(dims) * 4,)
                ).fetchall()
                self._mirror_insert([(r[0], r[1]) for r in rows], int(dims))

    # ------------------------------------------------------------------ search

    def _visibility_sql(self, include_private: bool, scope: str | None) -> tuple[str, list[Any]]:
        sql = "" if include_private else " AND f.private = 0"
        if scope:
            return sql + " AND f.scope IN ('', ?)", [scope]
        return sql + " AND f.scope = ''", []

    def search_text(
        self, terms: Sequence[str], limit: int, *, include_private: bool,
        scope: str | None = None,
    ) -> list[StoredChunk]:
        if limit <= 0 or not fts_or_query(terms):
            return []
        # a connection of its own, so a hybrid search's vector half (which needs the main
        # connection for a couple of small queries) does not queue behind this one
        with self._reader_lock:
            conn = self._reader()
            query = fts_or_query(with_spellings(self._informative(conn, terms)))
            vis, args = self._visibility_sql(include_private, scope)
            # rank inside FTS5 first (no join per matching row), then join the best rows;
            # ask for more when a filter may drop some, and fall back to no limit if it did
            rows = self._text_rows(conn, query, vis, args, limit, limit * 4)
            if len(rows) < limit:  # few matches (cheap to redo), or the filter dropped many
                rows = self._text_rows(conn, query, vis, args, limit, None)
        return [_stored(r) for r in rows]

    def _reader(self) -> Any:
        if self._read_conn is None:
            conn = self.module.connect(
                str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA query_only = 1")
            self._read_conn = conn
        return self._read_conn

    def _text_rows(self, conn: Any, query: str, vis: str, args: list[Any], limit: int,
                   inner: int | None) -> list[Any]:
        cap = "" if inner is None else f" LIMIT {int(inner)}"
        sql = (
            "SELECT c.id, f.path, c.start_line, c.end_line, c.text, -m.r, f.private, f.day, "
            "f.scope FROM (SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts "
            f"MATCH ? ORDER BY r{cap}) m JOIN chunks c ON c.id = m.rowid "
            f"JOIN files f ON f.id = c.file_id WHERE 1{vis} ORDER BY m.r LIMIT ?"
        )
        rows: list[Any] = conn.execute(sql, [query, *args, limit]).fetchall()
        return rows

    #: a keyword query scores at most this share of the index's chunks (summed over its
    #: terms, rarest first); applies from TERM_BUDGET_MIN_CHUNKS chunks on
    TERM_BUDGET = 0.05
    TERM_BUDGET_MIN_CHUNKS = 5000

    def _informative(self, conn: Any, terms: Sequence[str]) -> list[str]:
        """The terms worth scoring: rarest first, while their chunks add up to at most
        :attr:`TERM_BUDGET` of the index (the rarest term is always kept).

        A common term's BM25 weight is small, yet ranking every chunk that holds it is what
        a keyword search costs: at 100k chunks scoring the OR of a question's terms took
        18 ms (p90 45 ms); with a 10 % budget 6 ms (p90 8 ms), with 5 % 3 ms (p90 5 ms).
        On tests/data/memory_eval, with the budget forced on at its small size, hybrid
        recall@6 stayed at 0.82 (0.813 -> 0.817) while keyword-only recall@6 fell from 0.63
        to 0.55: the vector channel carries what the dropped common words would add.
        """
        unique = list(dict.fromkeys(t for t in terms if t.strip()))
        if len(unique) < 2:
            return unique
        total = self._chunk_count(conn)
        if total < self.TERM_BUDGET_MIN_CHUNKS:
            return unique
        # a Greek or Cyrillic word is searched with its stem, which most of its chunks hold
        df = {t: self._document_frequency(conn, t, search_tokens(t)) for t in unique}
        kept: list[str] = []
        postings = 0
        for t in sorted(unique, key=lambda t: df[t]):
            if kept and postings + df[t] > self.TERM_BUDGET * total:
                break
            kept.append(t)
            postings += df[t]
        return kept

    def _chunk_count(self, conn: Any) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        gen = None if row is None else str(row[0])
        if self._count_cache is None or self._count_cache[0] != gen:
            n = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            self._count_cache = (gen, int(n))
            self._df_cache = {}
        return self._count_cache[1]

    #: document frequencies kept per generation (terms recur across questions); bounded
    DF_CACHE_MAX = 4096

    def _document_frequency(self, conn: Any, term: str, forms: Sequence[str] = ()) -> int:
        """How many chunks hold ``term`` (or any of ``forms``), remembered until the index
        changes (counting a common term's postings was ~0.4 ms per term per search at 100k
        chunks). Called after :meth:`_chunk_count`, which empties the cache when the
        generation moved."""
        query = fts_or_query([term, *forms])
        n = self._df_cache.get(query)
        if n is None:
            n = int(conn.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (query,)
            ).fetchone()[0])
            if len(self._df_cache) >= self.DF_CACHE_MAX:
                self._df_cache.clear()
            self._df_cache[query] = n
        return n

    def common_words(
        self, words: Sequence[str], share: float, *, include_private: bool,
        scope: str | None = None,
    ) -> CommonWords:
        """Which of ``words`` more than ``share`` of the chunks a search sees hold. A word's
        count over the whole index is cheap (FTS5 reads its postings: ~1.5 ms for a word in
        40,000 of 100,000 chunks) and remembered per generation; joining each match to its
        file to drop chunks the search cannot see costs ten times that or more. So the whole-index
        count decides whenever it can — at or below the limit, or above it even if every
        hidden chunk held the word — and only a word between the two is counted among the
        visible chunks alone."""
        with self._reader_lock:
            conn = self._reader()
            total = self._chunk_count(conn)
            visible, hidden = self._visible_chunks(conn, include_private, scope, total)
            limit = share * visible
            common: set[str] = set()
            for w in dict.fromkeys(w.strip() for w in words):
                if not w:
                    continue
                everywhere = self._document_frequency(conn, w)
                if everywhere <= limit:
                    continue
                if everywhere - hidden > limit or self._visible_frequency(
                        conn, w, include_private, scope) > limit:
                    common.add(w)
        return CommonWords(visible, frozenset(common))

    def _visible_chunks(self, conn: Any, include_private: bool, scope: str | None,
                        total: int) -> tuple[int, int]:
        """The chunks a search with this visibility sees, and the ones it does not, counted
        once per generation and visibility (a server answers main, group and per-user
        sessions in turn; called after :meth:`_chunk_count`, which notices a change)."""
        gen = self._count_cache[0] if self._count_cache else None
        known = self._visible_counts.get((include_private, scope))
        if known is None or known[0] != gen:
            vis, args = self._visibility_sql(include_private, scope)
            n = int(conn.execute(
                f"SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE 1{vis}", args,
            ).fetchone()[0])
            if len(self._visible_counts) >= self.DF_CACHE_MAX:  # one entry per user seen
                self._visible_counts.clear()
            known = self._visible_counts[(include_private, scope)] = (gen, n)
        return known[1], max(0, total - known[1])

    def _visible_frequency(self, conn: Any, word: str, include_private: bool, scope: str | None) -> int:
        vis, args = self._visibility_sql(include_private, scope)
        return int(conn.execute(
            "SELECT count(*) FROM chunks_fts m JOIN chunks c ON c.id = m.rowid "
            f"JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ?{vis}",
            [fts_or_query([word]), *args],
        ).fetchone()[0])

    def _vectors(self) -> VectorMatrix:
        """The in-memory matrix, refreshed if any process changed the index."""
        from .vectors import VectorMatrix

        with self._lock:
            if self._matrix is None:
                self._matrix = VectorMatrix()
            meta = dict(self.conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('generation', 'vector_dims')").fetchall())
            gen, dims = meta.get("generation"), meta.get("vector_dims")
            self._matrix.refresh(self.conn, None if gen is None else str(gen), int(dims) if dims else None)
            return self._matrix

    def search_vector(
        self, vector: Vector, limit: int, *, include_private: bool,
        scope: str | None = None,
    ) -> list[StoredChunk]:
        if limit <= 0:
            return []
        if self.vector_scan == "sqlite-vec" and self.vec_loaded:
            hits = self._search_vec0(vector, limit, include_private=include_private, scope=scope)
        else:
            scopes = ("", scope) if scope else ("",)
            with self._matrix_lock:  # not the connection's lock: SQL may run meanwhile
                hits = self._vectors().search(vector, limit, include_private=include_private,
                                              scopes=scopes)
        return self._chunks_with_scores(hits)

    def _search_vec0(
        self, vector: Vector, limit: int, *, include_private: bool, scope: str | None
    ) -> list[tuple[int, float]]:
        from soulframe.memorykit import vector_to_bytes

        if not self._has_vec_table():
            return []
        vis, args = self._visibility_sql(include_private, scope)
        # KNN first, then the visibility filter: ask for more than needed so filtered-out
        # rows and extra windows of one chunk do not leave the result short
        k = max(limit * 8, 64)
        sql = (
            "SELECT v.chunk_id, 1 - knn.distance FROM (SELECT rowid, distance FROM vec_vectors "
            "WHERE embedding MATCH ? AND k = ?) knn JOIN vectors v ON v.id = knn.rowid "
            f"JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.id = c.file_id WHERE 1{vis} "
            "ORDER BY knn.distance"
        )
        with self._lock:
            rows = self.conn.execute(sql, [vector_to_bytes(vector), k, *args]).fetchall()
        best: dict[int, float] = {}
        for cid, sim in rows:
            if cid not in best:
                best[int(cid)] = float(sim)
        return list(best.items())[:limit]

    def _chunks_with_scores(self, hits: Sequence[tuple[int, float]]) -> list[StoredChunk]:
        if not hits:
            return []
        ids = [h[0] for h in hits]
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self.conn.execute(
                "SELECT c.id, f.path, c.start_line, c.end_line, c.text, 0.0, f.private, f.day, "
                f"f.scope FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                ids,
            ).fetchall()
        by_id = {r[0]: r for r in rows}
        out = []
        for cid, score in hits:
            r = by_id.get(cid)
            if r is not None:  # removed by another process since the matrix was loaded
                out.append(_stored(r, score))
        return out

    def chunk_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        if self.vector_scan == "sqlite-vec" and self.vec_loaded and self._matrix is None:
            # this store scans with vec0 so as not to hold every vector in memory: a
            # search's ~100 candidates are read from the table instead of loading them all
            return self._chunk_means_from_table(ids)
        with self._matrix_lock:
            return dict(self._vectors().mean_vectors(ids))

    def _chunk_means_from_table(self, ids: Sequence[int]) -> dict[int, Vector]:
        import numpy as np
        from soulframe.memorykit import vector_from_bytes

        wanted = sorted({int(i) for i in ids})
        grouped: dict[int, list[Any]] = {}
        with self._lock:
            for start in range(0, len(wanted), 900):
                part = wanted[start : start + 900]
                marks = ",".join("?" * len(part))
                for cid, blob in self.conn.execute(
                    f"SELECT chunk_id, embedding FROM vectors WHERE chunk_id IN ({marks}) "
                    "ORDER BY chunk_id, part", part,
                ):
                    grouped.setdefault(int(cid), []).append(vector_from_bytes(blob))
        out: dict[int, Vector] = {}
        for cid, vecs in grouped.items():
            if len({len(v) for v in vecs}) != 1:  # mid re-embedding with another model
                continue
            mean = np.mean(np.stack(vecs), axis=0).astype(np.float32)
            norm = float(np.linalg.norm(mean))
            out[cid] = mean / norm if norm > 0 else mean
        return out

    # ------------------------------------------------------------------ embedding cache

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        from soulframe.memorykit import vector_from_bytes

        out: dict[str, Vector] = {}
        hs = list(hashes)
        with self._lock:
            for start in range(0, len(hs), 900):
                part = hs[start : start + 900]
                marks = ",".join("?" * len(part))
                for h, blob in self.conn.execute(
                    f"SELECT hash, embedding FROM embedding_cache WHERE model = ? AND hash IN ({marks})",
                    [model_id, *part],
                ):
                    out[h] = vector_from_bytes(blob)
        return out

    def put_many(self, model_id: str, items: Mapping[str, Vector]) -> None:
        from soulframe.memorykit import vector_to_bytes

        if not items:
            return
        now = time.time()
        rows = []
        for h, v in items.items():
            blob = vector_to_bytes(v)
            rows.append((model_id, h, len(blob) // 4, blob, now))
        with self._lock:
            # the cache is not part of the index: no generation bump, its own transaction
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO embedding_cache(model, hash, dims, embedding, created_at)"
                    " VALUES (?, ?, ?, ?, ?)", rows,
                )
                self.conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    self.conn.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ health

    def stats(self) -> StoreStats:
        with self._lock:
            def one(sql: str) -> Any:
                return self.conn.execute(sql).fetchone()[0]

            files = one("SELECT count(*) FROM files")
            chunks = one("SELECT count(*) FROM chunks")
            vectors = one("SELECT count(*) FROM vectors")
            embedded = one("SELECT count(DISTINCT chunk_id) FROM vectors")
            cached = one("SELECT count(*) FROM embedding_cache")
            sqlite_version = one("SELECT sqlite_version()")
        size = sum(
            Path(f"{self.path}{s}").stat().st_size
            for s in ("", "-wal") if Path(f"{self.path}{s}").exists()
        )
        if self.vector_scan == "sqlite-vec" and self.vec_loaded:
            backend = f"sqlite-vec {self.vec_info} vec0 KNN"
        else:
            mirror = (
                f"vec0 mirror via sqlite-vec {self.vec_info}" if self.vec_loaded
                else f"no sqlite-vec: {self.vec_info}"
            )
            backend = f"numpy scan of float32 BLOBs in SQLite ({mirror})"
        dims = self.get_meta("vector_dims")
        return StoreStats(
            files=files,
            chunks=chunks,
            vectors=vectors,
            embedded_chunks=embedded,
            dimensions=int(dims) if dims else None,
            cached_embeddings=cached,
            vector_backend=backend,
            text_backend=f"FTS5 porter unicode61 + character pairs (SQLite {sqlite_version} via {self.driver})",
            schema_version=int(self.get_meta(SCHEMA_VERSION_KEY) or 0),
            bytes=size,
            extra={"path": str(self.path)},
        )

    def check(self, deep: bool = False) -> list[str]:
        problems: list[str] = []
        pragma = "integrity_check" if deep else "quick_check"
        try:
            with self._lock:
                rows = [r[0] for r in self.conn.execute(f"PRAGMA {pragma}")]
                if rows != ["ok"]:
                    problems.extend(f"{pragma}: {r}" for r in rows[:10])
                if deep:
                    self.conn.execute(
                        "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)"
                    )
        except self.module.DatabaseError as exc:
            problems.append(f"{pragma} failed: {exc}")
        mode = os.stat(self.path).st_mode & 0o777
        if mode & 0o077:
            problems.append(f"{self.path} is readable by others (mode {mode:o}); expected 600")
        return problems

    # ------------------------------------------------------------------ recall tracking

    def record_recalls(self, recalls: Sequence[Recall], query_hash: str, day: str) -> None:
        """Count one search's returned entries: one small transaction per search. While
        another process holds the write lock (a long sync), the counts wait in a file beside
        the index for the next search to add: a search never waits behind indexing."""
        if not recalls:
            return
        now = time.time()
        rows = [{"scope": r.scope or "", "path": r.path, "line": r.line, "text": r.text,
                 "score": float(r.score), "query": query_hash, "day": day, "at": now} for r in recalls]
        # counters are not part of the index: no generation bump (that would make every
        # search reload the vector matrix), their own short transaction
        with self._lock:
            if not self._begin_quickly():
                _append_pending(self._pending_path(), rows)
                return
            pending: list[dict[str, Any]] = []
            try:
                pending = self._take_pending()
                self._count_recalls([*pending, *rows])
                self.conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    self.conn.execute("ROLLBACK")
                _append_pending(self._pending_path(), pending)
                raise
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(self._draining_path())

    def _begin_quickly(self) -> bool:
        """``BEGIN IMMEDIATE`` if the write lock is free within RECALL_WAIT_MS."""
        self.conn.execute(f"PRAGMA busy_timeout = {RECALL_WAIT_MS}")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            return True
        except self.module.OperationalError as exc:
            if not _busy(exc):
                raise
            return False
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def _pending_path(self) -> Path:
        return self.path.with_name(self.path.name + ".recalls-pending")

    def _draining_path(self) -> Path:
        return self.path.with_name(f"{self.path.name}.recalls-draining-{os.getpid()}")

    def _take_pending(self, *, leftovers: bool = False) -> list[dict[str, Any]]:
        """The counts other searches left while the index was busy (moved aside first, so
        a search appending meanwhile starts a new file; called inside a write transaction).
        With ``leftovers`` (and whenever there are counts waiting), also what a process
        killed while adding them left behind: looking costs a directory listing, which a
        search does not pay when nothing is waiting."""
        draining = self._draining_path()
        try:
            os.replace(self._pending_path(), draining)
        except FileNotFoundError:
            if not leftovers:
                return []
        rows = self._leftover_counts(draining)
        return rows + _read_pending(draining) if draining.exists() else rows

    def _leftover_counts(self, draining: Path) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for left in self.path.parent.glob(f"{glob.escape(self.path.name)}.recalls-draining-*"):
            pid = left.name.rsplit("-", 1)[-1]
            if left != draining and pid.isdigit() and not _alive(int(pid)):
                rows += _read_pending(left)
                with contextlib.suppress(OSError):
                    os.unlink(left)
        return rows

    def _count_recalls(self, rows: Sequence[Mapping[str, Any]]) -> None:
        keys = [(r["scope"], r["path"], recall_key(r["text"])) for r in rows]
        self.conn.executemany(
            "INSERT INTO recalls (scope, path, entry_hash, line, text, count, best_score, "
            "first_recalled, last_recalled) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?) "
            "ON CONFLICT (scope, path, entry_hash) DO UPDATE SET count = count + 1, "
            "line = excluded.line, best_score = max(best_score, excluded.best_score), "
            "last_recalled = max(last_recalled, excluded.last_recalled)",
            [(*k, r["line"], r["text"], r["score"], r["at"], r["at"]) for k, r in zip(keys, rows, strict=True)],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO recall_queries (scope, path, entry_hash, query_hash, day) "
            "VALUES (?, ?, ?, ?, ?)", [(*k, r["query"], r["day"]) for k, r in zip(keys, rows, strict=True)],
        )

    def move_recalls(self, moves: Sequence[tuple[str, str]]) -> None:
        """``MovesRecalls.move_recalls``: the agent's counts of each old path under its new
        one, merged with any there (a file moved back where it was counted before)."""
        if not moves:
            return
        with self._write(bump=False):  # counters, not the index
            for old, new in moves:
                self.conn.execute(
                    "INSERT INTO recalls (scope, path, entry_hash, line, text, count, best_score, "
                    "first_recalled, last_recalled) SELECT scope, ?, entry_hash, line, text, count, "
                    "best_score, first_recalled, last_recalled FROM recalls WHERE scope = '' AND path = ? "
                    "ON CONFLICT (scope, path, entry_hash) DO UPDATE SET count = count + excluded.count, "
                    "best_score = max(best_score, excluded.best_score), "
                    "first_recalled = min(first_recalled, excluded.first_recalled), "
                    "last_recalled = max(last_recalled, excluded.last_recalled)", (new, old))
                self.conn.execute(
                    "INSERT OR IGNORE INTO recall_queries (scope, path, entry_hash, query_hash, day) "
                    "SELECT scope, ?, entry_hash, query_hash, day FROM recall_queries "
                    "WHERE scope = '' AND path = ?", (new, old))
                self.conn.execute("DELETE FROM recalls WHERE scope = '' AND path = ?", (old,))
                self.conn.execute("DELETE FROM recall_queries WHERE scope = '' AND path = ?", (old,))

    def recalls(self, limit: int = 20, *, scope: str | None = None, path_prefix: str | None = None) -> list[RecallStat]:
        """The most recalled entries, most first."""
        args: list[Any] = [scope or ""]
        where = "r.scope = ?"
        if path_prefix:
            # not LIKE: SQLite's LIKE ignores case, and memory/ is not MEMORY.md
            where += " AND substr(r.path, 1, ?) = ?"
            args += [len(path_prefix), path_prefix]
        with self._lock:
            rows = self.conn.execute(
                "SELECT r.path, r.line, r.text, r.count, r.best_score, r.first_recalled, r.last_recalled, "
                "(SELECT count(DISTINCT q.query_hash) FROM recall_queries q WHERE q.scope = r.scope "
                " AND q.path = r.path AND q.entry_hash = r.entry_hash), "
                "(SELECT count(DISTINCT q.day) FROM recall_queries q WHERE q.scope = r.scope "
                " AND q.path = r.path AND q.entry_hash = r.entry_hash) "
                f"FROM recalls r WHERE {where} ORDER BY r.count DESC, r.last_recalled DESC LIMIT ?",
                (*args, int(limit)),
            ).fetchall()
        return [RecallStat(path=r[0], line=int(r[1]), text=r[2], count=int(r[3]), queries=int(r[7]),
                           days=int(r[8]), best_score=float(r[4]), first_recalled=float(r[5]),
                           last_recalled=float(r[6]), scope=scope) for r in rows]

    # ------------------------------------------------------------------ forgetting

    def erase(self, texts: Sequence[str], cache: Mapping[str, Sequence[str]]) -> dict[str, int]:
        """``ErasingStore.erase``: see :mod:`soulframe_sqlite.erase`."""
        from .erase import erase

        return erase(self, texts, cache)

    def context_files(self, agent: AgentLike) -> Any:
        """Per-user context files of a standalone agent (``userfiles.py``): kept in
        ``<state_dir>/agents.sqlite``, apart from this index, which may be rebuilt."""
        from .userfiles import open_context_files

        return open_context_files(agent)

    def close(self) -> None:
        with self._reader_lock:
            if self._read_conn is not None:
                with contextlib.suppress(Exception):
                    self._read_conn.close()
                self._read_conn = None
        with self._lock:
            with contextlib.suppress(Exception):
                self.conn.close()


# --------------------------------------------------------------------------- helpers


def _append_pending(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append recall counts as JSON lines, in one write (0600: they quote memory lines)."""
    if not rows:
        return
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:  # counting must never cost the user their search
        log.debug("recall counts dropped: %s", exc)
        return
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _busy(exc: BaseException) -> bool:
    """SQLite's answer while another connection holds a lock: not a sign of damage."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` names now (device, inode): a file replaced by another is another."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) there sends CTRL_C_EVENT: assume it lives
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _read_pending(path: Path) -> list[dict[str, Any]]:
    """The counts in ``path``; a line a killed search left half-written is skipped."""
    keys = {"scope": str, "path": str, "line": int, "text": str, "score": float,
            "query": str, "day": str, "at": float}
    out = []
    with contextlib.suppress(OSError):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError, TypeError, AttributeError, KeyError):
                row = json.loads(line)
                out.append({k: kind(row[k]) for k, kind in keys.items()})
    return out


def _prepare_path(path: Path) -> None:
    """Create the directory 0700 and the file 0600 before SQLite opens it (SQLite gives
    its -wal and -shm files the database file's mode)."""
    from soulframe.kit import ensure_private_dir

    ensure_private_dir(path.parent)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
    os.chmod(path, 0o600)


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (triggers contain ';' inside BEGIN ... END)."""
    out: list[str] = []
    buf: list[str] = []
    depth = 0
    for line in sql.splitlines():
        stripped = line.split("--", 1)[0].strip()
        if not stripped and not buf:
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.startswith("CREATE TRIGGER"):
            depth += 1
        if upper == "END;":
            depth -= 1
        if stripped.endswith(";") and depth == 0:
            out.append("\n".join(buf))
            buf = []
    if "".join(buf).strip():
        out.append("\n".join(buf))
    return out


def with_spellings(terms: Sequence[str]) -> list[str]:
    """``terms``, each followed by its :func:`~soulframe.kit.search_spelling` where that
    differs: "αθηνα" finds "Αθήνα" (whose plain spelling the index holds beside it), and
    "Αθήνα" finds "ΑΘΗΝΑ"; then the stem of a Greek or Cyrillic word ("петербург" finds
    "Петербурге") and an emoji's code points (:func:`~soulframe.kit.search_tokens`)."""
    out: list[str] = []
    for t in terms:
        out.append(t)
        plain = search_spelling(t)
        if plain != t.lower():
            out.append(plain)
        out.extend(search_tokens(t))
    return out


def fts_or_query(terms: Sequence[str]) -> str:
    """An FTS5 query matching ANY of ``terms``: each term quoted (so FTS5 syntax in user
    text is inert), joined with OR."""
    quoted = []
    seen: set[str] = set()
    for t in terms:
        t = t.strip()
        if not t or t in seen:
            continue
        seen.add(t)
        quoted.append('"' + t.replace('"', '""') + '"')
    return " OR ".join(quoted)


def _stored(r: Sequence[Any], score: float | None = None) -> StoredChunk:
    return StoredChunk(
        id=int(r[0]), path=r[1], start_line=int(r[2]), end_line=int(r[3]), text=r[4],
        score=float(r[5] if score is None else score), private=bool(r[6]), day=r[7],
        scope=r[8] or None,
    )
