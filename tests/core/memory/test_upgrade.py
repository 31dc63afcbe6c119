"""An index left by an older release is brought up to what this one promises on its next
sync, though no memory file changed: releases before 0.2's index-time masking stored a
secret written into a file by hand as it was, and a later release may mask more formats."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from soulframe._engine.memory.users import UserMemory
from soulframe._engine.model import Session
from soulframe.testing import make_agent

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _as_an_older_release_left_it(db: Path) -> None:
    """Each chunk as a release without index-time masking stored it: the token as written
    (the triggers keep the full-text index in step), and no note of how the text was made."""
    conn = sqlite3.connect(db, isolation_level=None)
    rows = conn.execute("SELECT id, file_id, start_line, end_line, hash, text, grams FROM chunks").fetchall()
    assert rows and all(TOKEN not in r[5] for r in rows)
    for cid, file_id, start, end, digest, text, grams in rows:
        conn.execute("DELETE FROM chunks WHERE id = ?", (cid,))
        conn.execute("INSERT INTO chunks (id, file_id, start_line, end_line, hash, text, grams) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (cid, file_id, start, end, digest, text.replace("ghp***", TOKEN), grams))
    conn.execute("DELETE FROM meta WHERE key LIKE 'indexed_text%'")
    assert conn.execute("SELECT count(*) FROM chunks WHERE text LIKE ?", (f"%{TOKEN}%",)).fetchone()[0] == 2
    conn.close()


def test_a_secret_an_older_release_indexed_is_masked_after_the_upgrade(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-02.md").write_text(
        f"- deploy token {TOKEN}\n- the blue cabinet key is in the kitchen drawer\n")
    db = tmp_path / "index.sqlite"
    agent = make_agent(ws, seed=False, **{"store.path": str(db)})
    try:
        agent.memory.sync()
        # a user's own memory, in the store (kept there by hand: remember refuses a secret)
        UserMemory(agent, "bob").files.seed_user_files("bob", {"memory/2026-01-02.md": f"- bob's token {TOKEN}\n"})
        UserMemory(agent, "bob").sync()
    finally:
        agent.close()
    _as_an_older_release_left_it(db)

    agent = make_agent(ws, seed=False, **{"store.path": str(db)})
    try:
        for session in (None, Session.main(user_id="bob")):  # the agent's files, then bob's
            hits = agent.memory.search("token", session=session)
            assert hits and all(TOKEN not in h.snippet for h in hits)
            assert "ghp***" in hits[0].snippet
        # nothing the old release stored is left: neither text nor keyword index
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT count(*) FROM chunks WHERE text LIKE ?", (f"%{TOKEN}%",)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                            (f'"{TOKEN}"',)).fetchone()[0] == 0
        conn.close()
        # done once: the next sync cuts nothing again
        assert agent.memory.sync().changed == []
        assert UserMemory(agent, "bob").sync() == 0
    finally:
        agent.close()
    # nor in the file's free pages or its write-ahead log, where `strings` would find it
    for part in (db, Path(f"{db}-wal")):
        if part.exists():
            assert TOKEN.encode() not in part.read_bytes(), part.name
