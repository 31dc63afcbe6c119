"""One Store contract, two stores: every test here runs against the embedded SQLite store
and against PostgreSQL (a real server with pgvector), through one parametrised fixture.

``soulframe.testing.StoreContract`` (the memory index's own contract suite) runs on both;
the tests below add what managed mode needs: scopes combined with the private filter,
several agents in one database, and the same memory search results through the same
fusion with the real offline model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from soulframe._engine.model import ChunkInput, FileRecord
from soulframe.testing import StoreContract

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def make_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest, key: str = "agent-1"):
    if kind == "sqlite":
        from soulframe_sqlite.store import SqliteStore

        return SqliteStore(tmp_path / f"{key}.sqlite")
    from soulframe_postgres.store import PostgresStore

    dsn = request.getfixturevalue("pg_dsn")
    return PostgresStore(dsn, agent_key=key)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    s = make_store(request.param, tmp_path, request)
    yield s
    s.close()


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def basis(i: int, dims: int = 8) -> np.ndarray:
    v = np.zeros(dims, dtype=np.float32)
    v[i] = 1.0
    return v


def rec(path: str, h: str = "h", scope: str | None = None, private: bool = False, **kw) -> FileRecord:
    return FileRecord(path=path, hash=h, mtime_ns=kw.pop("mtime_ns", 1), size=kw.pop("size", 1),
                      private=private, scope=scope, **kw)


class TestStoreContractOnBothStores(StoreContract):
    """soulframe.testing.StoreContract, once per store, through one parametrised fixture."""

    @pytest.fixture(params=STORES)
    def make_store(self, request: pytest.FixtureRequest, tmp_path: Path):
        if request.param == "postgres":
            # 'simple' text search by design (seed 000 §15): language-neutral, no stemming
            self.stemming = False
            # now, not inside the factory: the schema must outlive what the contract's
            # fixtures open with it (they close it after this fixture's setup order)
            request.getfixturevalue("pg_dsn")
        else:
            self.stemming = True
        return lambda key="a": make_store(request.param, tmp_path, request, key)


def test_user_scope_and_private_filter_combine(store):
    store.replace_file(rec("MEMORY.md", scope="alice", private=True),
                       [ChunkInput(1, 1, "alice secret wren", "a", (basis(0),))])
    store.replace_file(rec("memory/d.md", scope="alice"),
                       [ChunkInput(1, 1, "alice public wren", "b", (basis(0),))])
    group = store.search_text(["wren"], 10, include_private=False, scope="alice")
    assert [h.text for h in group] == ["alice public wren"]
    assert [h.text for h in store.search_vector(basis(0), 10, include_private=False,
                                                scope="alice")] == ["alice public wren"]
    assert store.search_text(["wren"], 10, include_private=True, scope="bob") == []


def test_two_agents_in_one_database_do_not_mix(request, tmp_path):
    kind = "postgres"
    pytest.importorskip("psycopg")
    request.applymarker(pytest.mark.postgres)
    a = make_store(kind, tmp_path, request, "agent-a")
    b = make_store(kind, tmp_path, request, "agent-b")
    a.replace_file(rec("MEMORY.md"), [ChunkInput(1, 1, "agent a's puffin", "x", (basis(0),))])
    assert b.files() == {} and b.search_text(["puffin"], 5, include_private=True) == []
    assert b.search_vector(basis(0), 5, include_private=True) == []
    b.clear()
    assert set(a.files()) == {"MEMORY.md"}


# --------------------------------------------------------------------------- same search


@pytest.fixture(scope="module")
def minilm(shared_minilm):
    provider = shared_minilm
    if not provider.available():
        pytest.skip(f"offline model not installed: {provider.unavailable_reason()}")
    return provider


def _provider_plugin(provider):
    """A plugin registering the real offline model under the name 'local'."""
    from soulframe import hookimpl
    from soulframe._engine.model import Registration

    class TestMiniLM:
        __name__ = "test_minilm"

        @hookimpl
        def register_embedding_providers(self):
            return [Registration("local", lambda agent: provider, "all-MiniLM-L6-v2")]

    return TestMiniLM()


def memory_agent(kind: str, workspace: Path, request, provider):
    from soulframe._engine import plugins
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    overrides = {"embedding.provider": "local", "store.backend": kind}
    if kind == "postgres":
        overrides["store.dsn"] = request.getfixturevalue("pg_dsn")
    pm = plugins.make_plugin_manager(plugins=[_provider_plugin(provider)])
    return Agent(load_config(search=False, workspace=workspace, overrides=overrides), pm=pm)


@pytest.mark.model
@pytest.mark.postgres
def test_same_memory_search_results_on_both_stores(tmp_path, request, minilm):
    import shutil

    src = Path(__file__).parents[2] / "data" / "memory_eval" / "workspace"
    ws = tmp_path / "ws"
    shutil.copytree(src, ws)
    # a third of the daily logs is plenty to compare the stores, and each is embedded twice
    for day in sorted((ws / "memory").glob("*.md"))[15:]:
        day.unlink()
    results = {}
    queries = ["screenshot appearance", "when do we deploy", "database migration plan",
               "who is allergic", "travel plans"]
    for kind in ("sqlite", "postgres"):
        agent = memory_agent(kind, ws, request, minilm)
        agent.memory.sync()
        results[kind] = {
            q: [(h.path, h.start_line, h.score)
                for h in agent.memory.search(q, 5, min_score=0, channels="vector")]
            for q in queries
        }
        results[kind + "-hybrid"] = {
            q: agent.memory.search(q, 5, min_score=0).mode for q in queries}
        agent.close()
    # the vector channel is cosine on both: the same chunks, in the same order, same scores
    for q in queries:
        lite, pg = results["sqlite"][q], results["postgres"][q]
        assert [h[:2] for h in lite] == [h[:2] for h in pg], q
        assert [h[2] for h in lite] == pytest.approx([h[2] for h in pg], abs=1e-4)
    assert set(results["postgres-hybrid"].values()) == {"hybrid"}


# --------------------------------------------------------------------------- case and accents


@pytest.mark.parametrize(("note", "query"), [
    ("Übermäßig lange Sitzung mit dem Vermieter", "übermäßig"),  # a capital beyond ASCII
    ("Ärger mit der Heizung", "ÄRGER"),
    ("Встреча с Ольгой в Москве", "москве ольгой"),
    ("ΣΥΝΑΝΤΗΣΗ στην Αθήνα", "συναντηση"),
    ("Meeting at Café Müller in München", "Muller"),  # typed without its accents
    ("Meeting at Cafe Muller in Munchen", "müller"),  # typed with them
    ("Bà Nguyễn Thị Hương sống ở Huế", "huong hue"),
])
def test_keyword_search_ignores_case_and_accents_beyond_ascii(store, note, query):
    """As SQLite's unicode61 does, and the snippet and term coverage after it: on a server
    whose locale is C (the embedded one, many hosted ones) PostgreSQL itself lower-cases
    ASCII only and drops no accent, so "Übermäßig" was not found by "übermäßig"."""
    import unicodedata

    from soulframe._engine.memory.querying import query_terms

    store.replace_file(rec("memory/a.md"), [ChunkInput(1, 1, note, "a"),
                                            ChunkInput(2, 2, "unrelated: paid the rent", "b")])
    store.replace_file(rec("memory/b.md"), [ChunkInput(1, 1, unicodedata.normalize("NFD", note), "c")])
    hits = store.search_text(query_terms(query), 5, include_private=True)
    assert sorted((h.path, h.start_line) for h in hits) == [("memory/a.md", 1), ("memory/b.md", 1)]
    common = store.common_words(query_terms(query), 0.1, include_private=True)
    assert common.words == frozenset(query_terms(query)), common


@pytest.mark.postgres
def test_an_index_from_before_finds_capitalised_and_accented_words_after_the_migration(pg_dsn):
    """Chunks written before the folded words were indexed get them from the migration,
    without a re-index."""
    import psycopg
    from soulframe_postgres.store import PostgresStore

    store = PostgresStore(pg_dsn, agent_key="old")
    try:
        store.replace_file(rec("MEMORY.md"), [ChunkInput(1, 1, "Übermäßig: Café Müller, Москва", "a")])
    finally:
        store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as the version before wrote it
        conn.execute("UPDATE memory_chunks SET grams = ''")
        conn.execute("DELETE FROM schema_version WHERE version >= 4")
    again = PostgresStore(pg_dsn, agent_key="old")
    try:
        for term in ("übermäßig", "muller", "москва"):
            assert [h.path for h in again.search_text([term], 5, include_private=True)] == ["MEMORY.md"], term
    finally:
        again.close()


def test_erase_matches_a_forgotten_text_in_any_case_beyond_ascii(store):
    """forget finds "JÜRGEN" when told "jürgen" (casefold); the store must then drop the
    chunk and the recall row that quote it too, not only on SQLite: a C-locale server's
    lower() leaves Ü as it is."""
    from soulframe._engine.model import Recall

    line = "- Termin mit JÜRGEN ÖZDEMİR wegen der Straße"
    store.replace_file(rec("memory/a.md"), [ChunkInput(1, 1, line, "h1", (basis(0),)),
                                            ChunkInput(2, 2, "- Ölwechsel am Freitag", "h2", (basis(1),))])
    store.record_recalls([Recall("memory/a.md", 1, line, 0.7, scope="alice")], "q", "2026-11-10")
    counts = store.erase(["jürgen özdemi"], {})
    assert counts["chunks"] == 1 and counts["recalls"] == 1, counts
    assert [h.start_line for h in store.search_vector(basis(0), 5, include_private=True)] == [2]
    assert store.recalls(10, scope="alice") == []
