"""The SQLite store on disk: where it lives, its permissions, WAL, schema versions, the
sqlite-vec mirror, and faults — corruption, kill -9 mid-index, two processes at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.memory.hashing import bytes_hash
from soulframe._engine.memory.provenance import strip as unmarked
from soulframe._engine.model import ChunkInput, FileRecord, SoulframeError
from soulframe.testing import basis, make_agent
from soulframe_memory.chunking import chunk_text


def write_workspace(ws: Path, files: int, lines: int = 12) -> None:
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    for i in range(files):
        body = "\n".join(f"- note {i}-{j}: the zebra{i} crossed at {j}" for j in range(lines))
        (ws / "memory" / f"2026-01-{i:04d}.md").write_text(f"# day {i}\n\n{body}\n")


def start_cli_process(ws: Path, state: Path, *args: str, **kw: Any) -> subprocess.Popen[str]:
    """The command line as its own process, started and not waited for: the test kills it
    (SIGKILL) mid-write, which only a real process can undergo."""
    cfg = ws / "soulframe.toml"
    if not cfg.exists():
        cfg.write_text(f'state_dir = "{state}"\n\n[embedding]\nprovider = "none"\n')
    env = {**os.environ, "SOULFRAME_CONFIG": str(cfg)}
    return subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def quiet(fn: Any, *a: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


# --------------------------------------------------------------------------- location


def test_default_path_modes_and_wal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_workspace(ws, 2)
    a = make_agent(ws, seed=False, state_dir=tmp_path / "state")
    quiet(a.memory.sync)
    # an agent on a workspace its config does not name gets an index of its own (see
    # test_the_configured_workspace_keeps_the_plain_index_name)
    db = tmp_path / "state" / "memory" / f"{a.state_key}.sqlite"
    assert a.state_key.startswith("default-") and Path(a.store.location) == db
    assert db.stat().st_mode & 0o777 == 0o600
    assert db.parent.stat().st_mode & 0o777 == 0o700
    for side in ("-wal", "-shm"):
        p = Path(f"{db}{side}")
        if p.exists():
            assert p.stat().st_mode & 0o777 == 0o600, side
    assert a.store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert a.store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    a.close()


def test_store_path_overrides_the_default(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_workspace(ws, 1)
    target = tmp_path / "elsewhere" / "index.sqlite"
    a = make_agent(ws, seed=False, state_dir=tmp_path / "state", store__path=str(target))
    quiet(a.memory.sync)
    assert target.exists() and not (tmp_path / "state" / "memory" / "default.sqlite").exists()
    a.close()


def test_a_newer_schema_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    from soulframe_sqlite.store import SqliteStore

    s = SqliteStore(tmp_path / "x.sqlite")
    s.set_meta("schema_version", "999")
    s.close()
    with pytest.raises(SoulframeError, match="newer than this soulframe"):
        SqliteStore(tmp_path / "x.sqlite")


def test_migrations_are_recorded(tmp_path: Path) -> None:
    from soulframe_sqlite.schema import LATEST
    from soulframe_sqlite.store import SqliteStore

    s = SqliteStore(tmp_path / "x.sqlite")
    assert s.get_meta("schema_version") == str(LATEST)
    s.close()
    s = SqliteStore(tmp_path / "x.sqlite")  # reopening applies nothing twice
    assert s.stats().schema_version == LATEST
    s.close()


def test_the_vec0_mirror_is_rebuilt_after_a_process_without_sqlite_vec_wrote(tmp_path: Path) -> None:
    from soulframe_sqlite.store import SqliteStore

    with_vec = SqliteStore(tmp_path / "x.sqlite", vector_scan="sqlite-vec")
    if not with_vec.vec_loaded:
        pytest.skip(f"sqlite-vec does not load here: {with_vec.vec_info}")
    with_vec.replace_file(FileRecord("a.md", "1"), [ChunkInput(1, 1, "first", "a", (basis(0),))])
    with_vec.close()
    without = SqliteStore(tmp_path / "x.sqlite", sqlite_vec=False)
    assert "numpy" in without.stats().vector_backend and "switched off" in without.stats().vector_backend
    without.replace_file(FileRecord("b.md", "1"), [ChunkInput(1, 1, "second", "b", (basis(1),))])
    without.remove_files(["a.md"])
    assert [h.path for h in without.search_vector(basis(1), 5, include_private=True)] == ["b.md"]
    without.close()
    again = SqliteStore(tmp_path / "x.sqlite", vector_scan="sqlite-vec")
    assert [h.path for h in again.search_vector(basis(1), 5, include_private=True)] == ["b.md"]
    assert again.search_vector(basis(0), 5, include_private=True)[0].path == "b.md"
    assert again.get_meta("vec_stale") is None
    again.close()


def test_the_default_numpy_scan_neither_loads_sqlite_vec_nor_writes_its_mirror(tmp_path: Path) -> None:
    """The vec0 mirror triples indexing time and the numpy scan reads none of it
    (docs/install.md): only ``vector_scan = "sqlite-vec"`` loads the extension."""
    code = (
        "import sys\n"
        "from soulframe._engine.model import ChunkInput, FileRecord\n"
        "from soulframe_sqlite.store import SqliteStore\n"
        "import numpy as np\n"
        f"s = SqliteStore({str(tmp_path / 'x.sqlite')!r})\n"
        "v = np.zeros(4, dtype=np.float32); v[0] = 1\n"
        "s.replace_file(FileRecord('a.md', '1'), [ChunkInput(1, 1, 'first', 'a', (v,))])\n"
        "assert [h.path for h in s.search_vector(v, 5, include_private=True)] == ['a.md']\n"
        "tables = {r[0] for r in s.conn.execute('SELECT name FROM sqlite_master')}\n"
        "print('sqlite_vec' in sys.modules, any(t.startswith('vec_') for t in tables), s.stats().vector_backend)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    imported, mirrored, backend = out.stdout.split(" ", 2)
    assert (imported, mirrored) == ("False", "False")
    assert "numpy" in backend and "not used" in backend


def test_the_vector_scan_ranks_exactly_as_a_full_sort(tmp_path: Path) -> None:
    """The scan's top k (found in two passes over block maxima, :func:`top_k`) are the chunks
    a full sort of every chunk's best window ranks first, in that order, private files left
    out (5 and 1 take the two-pass path over ~3,000 chunks, 40 the plain one)."""
    import numpy as np
    from soulframe_sqlite.store import SqliteStore

    rng = np.random.default_rng(3)
    store = SqliteStore(tmp_path / "x.sqlite")
    best: dict[tuple[str, int], float] = {}
    query = rng.standard_normal(16).astype(np.float32)
    query /= np.linalg.norm(query)
    for f in range(5):
        private = f == 2
        chunks = []
        for c in range(750):
            windows = 1 + int(rng.integers(0, 3))  # a chunk's score is its best window's
            vecs = rng.standard_normal((windows, 16)).astype(np.float32)
            vecs = np.round(vecs / np.linalg.norm(vecs, axis=1, keepdims=True), 1)  # some ties
            chunks.append(ChunkInput(c + 1, c + 1, f"c{f}-{c}", f"h{f}-{c}", tuple(vecs)))
            if not private:
                best[(f"f{f}.md", c + 1)] = float(np.max(vecs @ query))
        store.replace_file(FileRecord(f"f{f}.md", str(f), private=private), chunks)
    expected = sorted(best.items(), key=lambda kv: -kv[1])
    for k in (1, 5, 40):
        hits = store.search_vector(query, k, include_private=False)
        assert [round(h.score, 5) for h in hits] == [round(v, 5) for _, v in expected[:k]]
        # where scores differ, the same chunks in the same order
        got = [(h.path, h.start_line) for h in hits]
        distinct = [key for key, v in expected[:k] if sum(1 for _, w in expected if abs(w - v) < 1e-6) == 1]
        assert [g for g in got if g in distinct] == distinct
    store.close()


def test_a_setting_beside_the_index_does_not_make_the_next_search_read_every_vector(tmp_path: Path) -> None:
    """The first search with a model measures its calibration and keeps it in the meta table,
    and a file touched without a change gets its new mtime recorded: neither changes what
    is indexed, so neither may make the next search re-read the vectors table (at 100k
    chunks that re-read cost more than the search). A change of content still does."""
    from soulframe_sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "x.sqlite")
    store.replace_file(FileRecord("a.md", "1"), [ChunkInput(i + 1, i + 1, f"line {i}", f"h{i}", (basis(i),))
                                                 for i in range(4)])
    assert store.search_vector(basis(2), 1, include_private=True)[0].text == "line 2"
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    store.set_meta("calibration:local:test", '{"mean": 0.1}')
    store.touch_file(FileRecord("a.md", "1", mtime_ns=5, size=9))
    statements.clear()
    assert store.search_vector(basis(3), 1, include_private=True)[0].text == "line 3"
    assert not [s for s in statements if "FROM vectors" in s], statements
    store.replace_file(FileRecord("b.md", "2"), [ChunkInput(1, 1, "moved here", "m", (basis(5),))])
    assert store.search_vector(basis(5), 1, include_private=True)[0].path == "b.md"
    store.close()


# --------------------------------------------------------------------------- corruption


def _corrupt_header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[:16] = b"this is garbage!"
    db.write_bytes(bytes(data))


def _corrupt_pages(db: Path) -> None:
    """Keep the header, scribble over every page after the first two."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page * 2, len(data), page):
        data[start + 8 : start + 200] = os.urandom(192)
    db.write_bytes(bytes(data))


def _corrupt_pages_quoted_in_the_report(db: Path) -> None:
    """Scribbled pages that SQLite's error message quotes as bytes that are no UTF-8 (found
    with this seed: the message could not be read, and the index was never recovered)."""
    import random

    rnd = random.Random(157)
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for start in range(page * 2, len(data), page):
        data[start + 8 : start + 200] = rnd.randbytes(192)
    db.write_bytes(bytes(data))


def indexed_then_damaged(ws: Path, state: Path, damage: Any) -> Path:
    """30 daily logs indexed, then the index file damaged; its path."""
    write_workspace(ws, 30)
    a = make_agent(ws, seed=False, state_dir=state)
    quiet(a.memory.sync)
    db = Path(a.store.location)
    a.close()
    # fold the WAL into the main file so the damage hits the real data
    import sqlean

    c = sqlean.connect(db)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    damage(db)
    return db


@pytest.mark.parametrize("damage", [_corrupt_header, _corrupt_pages, _corrupt_pages_quoted_in_the_report])
def test_a_corrupted_index_is_moved_aside_and_rebuilt(tmp_path: Path, damage: Any) -> None:
    ws = tmp_path / "ws"
    db = indexed_then_damaged(ws, tmp_path / "state", damage)
    b = make_agent(ws, seed=False, state_dir=tmp_path / "state")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = b.memory.sync()
    messages = " ".join(str(w.message) for w in caught)
    assert "corrupt" in messages and "rebuilt" in messages
    aside = list(db.parent.glob(f"{db.name}.corrupt-*"))
    assert len(aside) == 1 and report.recovered_from == str(aside[0])
    assert len(report.added) == 30
    hits = quiet(b.memory.search, "zebra7", min_score=0)
    assert hits[0].path == "memory/2026-01-0007.md"
    assert b.memory.status().health == "ok"
    b.close()


# --------------------------------------------------------------------------- kill -9


def _consistent(db: Path, ws: Path) -> tuple[int, int]:
    """Every indexed file's chunks are exactly those of its content at its recorded hash."""
    import sqlean

    c = sqlean.connect(db)
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    files = c.execute("SELECT id, path, hash FROM files").fetchall()
    for fid, path, digest in files:
        data = (ws / path).read_bytes()
        assert bytes_hash(data) == digest
        # the index holds the text without its provenance comments (soulframe._engine.memory.provenance)
        expected = [(ch.start_line, ch.end_line, ch.text) for ch in chunk_text(unmarked(data.decode()), 1000)]
        got = c.execute("SELECT start_line, end_line, text FROM chunks WHERE file_id = ? ORDER BY id",
                        (fid,)).fetchall()
        assert got == expected, path
    orphans = c.execute("SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)").fetchone()[0]
    fts = c.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    chunks = c.execute("SELECT count(*) FROM chunks").fetchone()[0]
    c.close()
    assert orphans == 0 and fts == chunks
    return len(files), chunks


def searches_at_once(tmp_path: Path, ws: Path, state: Path, n: int = 4) -> list[tuple[str, str]]:
    """(stdout, stderr) of ``n`` processes that each open the index and search for zebra7,
    started at the same moment."""
    go = tmp_path / "go"
    script = textwrap.dedent(f"""
        import os, sys, time, warnings
        warnings.simplefilter("ignore")
        from soulframe.testing import make_agent
        while not os.path.exists({str(go)!r}):
            time.sleep(0.005)
        agent = make_agent({str(ws)!r}, seed=False, state_dir={str(state)!r})
        hits = agent.memory.search("zebra7", min_score=0)
        print(hits[0].path if hits else f"NOTHING: {{hits.notice}}")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    time.sleep(1.5)  # all past their imports, waiting
    go.touch()
    return [p.communicate(timeout=120) for p in procs]


def answered(out: str) -> bool:
    """The note found, or (a search does not wait for another process's indexing unless the
    index is empty) nothing yet, saying that another sync is part way through."""
    last = out.strip().splitlines()[-1:] or [""]
    return last[0] == "memory/2026-01-0007.md" or (
        last[0].startswith("NOTHING") and "another sync is indexing this memory" in last[0])


def test_processes_finding_a_corrupted_index_at_once_recover_it_once(tmp_path: Path) -> None:
    """Four searches start together on a corrupted index: one moves it aside, the others
    use the fresh one it made, and every one of them finds the note."""
    ws, state = tmp_path / "ws", tmp_path / "state"
    db = indexed_then_damaged(ws, state, _corrupt_header)
    outs = searches_at_once(tmp_path, ws, state)
    for out, err in outs:
        assert answered(out), (out, err[-1500:])
    assert len(list(db.parent.glob(f"{db.name}.corrupt-*"))) == 1
    b = make_agent(ws, seed=False, state_dir=state)
    assert quiet(b.memory.search, "zebra7", min_score=0)[0].path == "memory/2026-01-0007.md"
    b.close()


def test_processes_opening_a_new_index_at_once_all_find_the_note(tmp_path: Path) -> None:
    """The first run of a server and a command together: both create the schema of the same
    new file (a migration applied twice failed with "duplicate column name")."""
    ws, state = tmp_path / "ws", tmp_path / "state"
    write_workspace(ws, 30)
    for out, err in searches_at_once(tmp_path, ws, state):
        assert answered(out), (out, err[-1500:])
    b = make_agent(ws, seed=False, state_dir=state)
    assert quiet(b.memory.search, "zebra7", min_score=0)[0].path == "memory/2026-01-0007.md"
    b.close()


def test_kill_9_during_indexing_leaves_a_consistent_index(tmp_path: Path) -> None:
    import sqlean

    ws, state = tmp_path / "ws", tmp_path / "state"
    write_workspace(ws, 1500, lines=30)
    db = state / "memory" / f"{make_agent(ws, seed=False, state_dir=state).state_key}.sqlite"
    proc = start_cli_process(ws, state, "memory", "index")
    indexed = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if db.exists():
            try:
                c = sqlean.connect(db, timeout=0.1)
                indexed = c.execute("SELECT count(*) FROM files").fetchone()[0]
                c.close()
            except sqlean.OperationalError:
                continue
            if indexed >= 50:
                break
    assert proc.poll() is None, "indexing finished before it could be killed: use more files"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    files, _ = _consistent(db, ws)
    assert 50 <= files < 1500
    a = make_agent(ws, seed=False, state_dir=state)
    report = quiet(a.memory.sync)
    assert report.unchanged == files and len(report.added) == 1500 - files
    assert _consistent(db, ws)[0] == 1500
    a.close()


# --------------------------------------------------------------------------- two processes


def test_two_processes_indexing_and_remembering_lose_nothing(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    write_workspace(ws, 200)
    script = textwrap.dedent(f"""
        import sys, warnings
        warnings.simplefilter("ignore")
        from soulframe._engine.agent import Agent
        from soulframe._engine.config import load_config
        cfg = load_config(search=False, workspace={str(ws)!r},
                          overrides={{"state_dir": {str(state)!r}, "embedding.provider": "none"}})
        agent = Agent(cfg)
        name = sys.argv[1]
        agent.memory.sync()
        for i in range(25):
            agent.memory.append_daily(f"{{name}} wrote entry {{i}} kiwi{{name}}{{i}}")
            agent.memory.sync()
            agent.memory.search(f"kiwi{{name}}{{i}}")
        agent.close()
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, n], stderr=subprocess.PIPE, text=True)
             for n in ("alpha", "beta")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    a = make_agent(ws, seed=False, state_dir=state)
    today = a.now().date().isoformat()
    log = ws / "memory" / f"{today}.md"
    lines = log.read_text().splitlines()
    assert sum(1 for ln in lines if " wrote entry " in ln) == 50
    # the index already holds the final file: nothing for a new sync to do
    stored = a.store.files()[f"memory/{today}.md"]
    assert stored.hash == bytes_hash(log.read_bytes())
    for name in ("alpha", "beta"):
        for i in (0, 24):
            hits = a.memory.search(f"kiwi{name}{i}", sync=False, min_score=0)
            assert hits and hits[0].path == f"memory/{today}.md", (name, i)
    assert _consistent(Path(a.store.location), ws)[0] == 201
    a.close()


def test_a_search_does_not_wait_for_another_process_indexing(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    write_workspace(ws, 5)
    a = make_agent(ws, seed=False, state_dir=state)
    quiet(a.memory.sync)
    b = make_agent(ws, seed=False, state_dir=state)
    (ws / "memory" / "2026-02-01.md").write_text("# x\n\n- the okapi arrived\n")
    with a.memory.syncer.lock(blocking=True):  # "another process" is indexing
        started = time.monotonic()
        results = quiet(b.memory.search, "zebra3")
        assert time.monotonic() - started < 5
        assert results and results[0].path == "memory/2026-01-0003.md"
        assert "another sync" not in (results.notice or "")  # it has not said how far it got
        a.memory.syncer.indexing(2, 6)  # ... and now it has
        b.memory.changed()
        results = quiet(b.memory.search, "zebra3")
        assert results[0].path == "memory/2026-01-0003.md"
        assert (results.notice or "").endswith(
            "another sync is indexing this memory (file 2 of 6): results may miss what it has "
            "not reached yet")
    assert quiet(b.memory.search, "okapi")[0].path == "memory/2026-02-01.md"
    a.close()
    b.close()


def test_a_search_does_not_wait_behind_another_process_writing_and_its_counts_arrive_later(
        tmp_path: Path) -> None:
    """A long sync holds SQLite's write lock for each file it writes. Opening the index
    (which checks whose workspace it is) and counting what a search returned used to
    queue behind it for up to the 30-second busy timeout."""
    import threading

    import sqlean

    ws, state = tmp_path / "ws", tmp_path / "state"
    write_workspace(ws, 5)
    a = make_agent(ws, seed=False, state_dir=state)
    quiet(a.memory.sync)
    path = a.store_location()
    a.close()
    writer = sqlean.connect(str(path), isolation_level=None, timeout=30)
    writer.execute("BEGIN IMMEDIATE")  # "another process" is writing
    done: list[Any] = []
    try:
        def search() -> None:
            b = make_agent(ws, seed=False, state_dir=state)
            done.append([h.path for h in quiet(b.memory.search, "zebra3", min_score=0)])
            b.close()

        t = threading.Thread(target=search, daemon=True)
        t.start()
        t.join(20)  # well under the busy timeout (30 s): it did not queue
        assert done and done[0][0] == "memory/2026-01-0003.md", done
    finally:
        writer.execute("COMMIT")
        writer.close()
    pending = Path(f"{path}.recalls-pending")
    assert pending.exists() and pending.stat().st_mode & 0o777 == 0o600
    c = make_agent(ws, seed=False, state_dir=state)
    quiet(c.memory.search, "zebra3", min_score=0)
    zebra = [r for r in c.store.recalls(20) if "zebra3" in r.text]
    assert zebra and max(r.count for r in zebra) == 2  # the waiting count was added, once
    assert not pending.exists()
    # a count left waiting quotes a memory line: erasing it (forget) takes that copy too
    pending.write_text(json.dumps({"scope": "", "path": "memory/2026-01-0004.md", "line": 3,
                                   "text": "- note 4-0: the zebra4 crossed at 0", "score": 0.9,
                                   "query": "q", "day": "2026-01-05", "at": 1.0}) + "\n")
    c.store.erase(["zebra4"], {})
    assert not pending.exists()
    assert not [r for r in c.store.recalls(50) if "zebra4" in r.text]
    assert b"zebra4" not in path.read_bytes()
    c.close()


def test_a_search_waits_a_little_for_another_process_building_the_index_from_nothing(
        tmp_path: Path) -> None:
    """An empty index and another process part way through its first build: answering at
    once would answer nothing, so the search waits for that build (up to a few seconds)."""
    import threading

    ws, state = tmp_path / "ws", tmp_path / "state"
    write_workspace(ws, 5)
    a = make_agent(ws, seed=False, state_dir=state)
    b = make_agent(ws, seed=False, state_dir=state)
    holding, answered = threading.Event(), []

    def first_build() -> None:
        with a.memory.syncer.lock(blocking=True):
            holding.set()
            time.sleep(1.0)  # the build takes a while
            quiet(a.memory.sync)

    t = threading.Thread(target=first_build)
    t.start()
    holding.wait(10)
    answered.append(quiet(b.memory.search, "zebra3"))
    t.join()
    assert answered[0] and answered[0][0].path == "memory/2026-01-0003.md"
    a.close()
    b.close()


def test_the_configured_workspace_keeps_the_plain_index_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_workspace(ws, 1)
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text(f'workspace = "{ws}"\nstate_dir = "{tmp_path / "state"}"\n[embedding]\nprovider = "none"\n')

    a = Agent(load_config(cfg))
    assert a.state_key == "default"
    assert Path(a.store.location) == tmp_path / "state" / "memory" / "default.sqlite"
    a.close()


def test_chunk_means_when_sqlite_reused_ids_out_of_order() -> None:
    """The in-memory matrix finds a chunk's rows by binary search over chunk ids; where a
    reused id put rows out of chunk-id order it sorts them once, with the same means."""
    import numpy as np
    from soulframe_sqlite.vectors import VectorMatrix

    rng = np.random.default_rng(7)
    for chunk_ids in ([1, 1, 2, 3, 3, 3, 4], [1, 1, 9, 9, 2, 3, 3, 3, 4]):
        m = VectorMatrix()
        m.chunk_ids = np.array(chunk_ids, dtype=np.int64)
        m.ids = np.arange(len(chunk_ids), dtype=np.int64)
        m.matrix = rng.standard_normal((len(chunk_ids), 8)).astype(np.float32)
        got = m.mean_vectors([9, 3, 1, 5, 4])
        assert set(got) == {1, 3, 4} | ({9} if 9 in chunk_ids else set())
        for cid, vec in got.items():
            mean = m.matrix[m.chunk_ids == cid].mean(axis=0)
            assert np.allclose(vec, mean / np.linalg.norm(mean), atol=1e-5), (chunk_ids, cid)


def test_a_vec0_scanning_store_does_not_load_every_vector_for_chunk_means(tmp_path: Path) -> None:
    """``vector_scan = "sqlite-vec"`` exists so as not to hold every vector in memory; the
    chunk means a search now asks for (memory.chunk_context) are read for those chunks."""
    import numpy as np
    from soulframe_sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "x.sqlite", vector_scan="sqlite-vec")
    if not store.vec_loaded:
        pytest.skip(f"sqlite-vec does not load here: {store.vec_info}")
    store.replace_file(FileRecord("a.md", "1"), [ChunkInput(1, 1, "two", "a", (basis(0), basis(1))),
                                                ChunkInput(2, 2, "one", "b", (basis(2),))])
    hits = store.search_vector(basis(1), 5, include_private=True)
    means = store.chunk_vectors([h.id for h in hits])
    assert store._matrix is None  # the whole matrix was never loaded
    by_text = {h.text: means[h.id] for h in hits}
    assert np.allclose(by_text["two"], (basis(0) + basis(1)) / np.sqrt(2), atol=1e-5)
    assert np.allclose(by_text["one"], basis(2), atol=1e-5)
    store.close()


def test_an_index_file_deleted_while_open_is_made_again_not_written_into_the_void(tmp_path: Path) -> None:
    """A long-lived process (memory watch, serve) holds the index open; the user deletes it
    (to rebuild, to free space). Its syncs went on writing into the unlinked file: every
    other process found an empty index, and every note it indexed was lost."""
    ws = tmp_path / "ws"
    write_workspace(ws, 2)
    a = make_agent(ws, seed=False, state_dir=tmp_path / "state")
    quiet(a.memory.sync)
    db = Path(a.store.location)
    for side in ("", "-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    (ws / "memory" / "2026-02-01.md").write_text("# day\n\n- the okapi came after the delete\n")
    quiet(a.memory.sync)
    assert db.exists() and db.stat().st_mode & 0o777 == 0o600
    other = make_agent(ws, seed=False, state_dir=tmp_path / "state")
    try:
        assert [h.path for h in quiet(other.memory.search, "okapi", min_score=0.0, sync=False)] == [
            "memory/2026-02-01.md"]
        assert quiet(other.memory.search, "zebra1", min_score=0.0, sync=False)  # the old notes again
    finally:
        other.close()
        a.close()
