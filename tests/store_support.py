"""Building indexes as an older soulframe wrote them, for the migration tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

ZH = "我女儿每周三学钢琴，老师姓王。"


def old_sqlite_index(path: Path, schema: int = 2, text: str = ZH) -> None:
    """An index as an older soulframe wrote it: ``schema`` (2: soulframe 0.2), one chunk
    holding ``text``."""
    from soulframe.kit import index_grams
    from soulframe_sqlite.schema import MIGRATIONS
    from soulframe_sqlite.store import _statements

    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("soulframe_grams", 1, index_grams, deterministic=True)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for number, sql in MIGRATIONS[:schema]:
        for statement in _statements(sql):
            if not statement.strip().upper().startswith("CREATE TABLE IF NOT EXISTS META"):
                conn.execute(statement)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(number),))
    conn.execute("INSERT INTO files(id, path, hash, mtime_ns, size, indexed_at) "
                 "VALUES (1, 'memory/2026-01-02.md', 'h', 1, 1, 0)")
    conn.execute("INSERT INTO chunks(file_id, start_line, end_line, hash, text) "
                 "VALUES (1, 3, 3, 'c', ?)", (text,))
    conn.close()
