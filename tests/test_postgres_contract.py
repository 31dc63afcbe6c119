"""One Store contract, two stores: every test here runs against the embedded SQLite store
and against PostgreSQL (a real server with pgvector), through one parametrised fixture.

When ``soulframe.testing.StoreContract`` (the memory index's own contract suite) is
available it runs against PostgreSQL too; the tests below add what managed mode needs on
both: per-user scopes kept apart, private files filtered in the query, one transaction per
file, and the same memory search results through the same fusion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from soulframe.model import ChunkInput, FileRecord, Store

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


def test_implements_the_protocol(store):
    assert isinstance(store, Store)
    assert store.name in ("sqlite", "postgres")
    assert isinstance(store.location, str) and "password" not in store.location


def test_files_round_trip_per_scope(store):
    store.replace_file(rec("MEMORY.md", "a", private=True, model="m:1"), [ChunkInput(1, 2, "alpha", "c1")])
    store.replace_file(rec("memory/2026-01-01.md", "b", scope="u1", day="2026-01-01"),
                       [ChunkInput(1, 1, "beta", "c2")])
    assert store.files() == {"MEMORY.md": rec("MEMORY.md", "a", private=True, model="m:1")}
    assert store.files("u1") == {"memory/2026-01-01.md": rec("memory/2026-01-01.md", "b", scope="u1",
                                                              day="2026-01-01")}
    assert store.files("u2") == {}
    store.touch_file(rec("MEMORY.md", "a", private=True, model="m:1", mtime_ns=9, size=7))
    assert (store.files()["MEMORY.md"].mtime_ns, store.files()["MEMORY.md"].size) == (9, 7)


def test_replace_file_replaces_everything_of_that_file_only(store):
    store.replace_file(rec("a.md", "1"), [ChunkInput(1, 1, "old walrus text", "x", (basis(0),))])
    store.replace_file(rec("b.md", "1"), [ChunkInput(1, 1, "keep walrus", "y", (basis(1),))])
    store.replace_file(rec("a.md", "2"), [ChunkInput(3, 4, "new narwhal text", "z", (basis(2),))])
    assert [h.path for h in store.search_text(["walrus"], 10, include_private=True)] == ["b.md"]
    assert [(h.path, h.start_line) for h in store.search_text(["narwhal"], 10, include_private=True)] == [("a.md", 3)]
    assert store.files()["a.md"].hash == "2"
    hits = store.search_vector(basis(0), 10, include_private=True)
    assert all(h.path != "a.md" or h.start_line == 3 for h in hits)


def test_keyword_search_matches_any_term_best_first(store):
    store.replace_file(rec("m.md"), [
        ChunkInput(1, 1, "screenshots in dark mode please", "a"),
        ChunkInput(2, 2, "dark chocolate", "b"),
        ChunkInput(3, 3, "nothing relevant here", "c"),
    ])
    hits = store.search_text(["dark", "screenshots"], 10, include_private=True)
    assert [h.start_line for h in hits] == [1, 2]
    assert all(h.score > 0 for h in hits) and hits[0].score > hits[1].score
    assert store.search_text([], 10, include_private=True) == []
    assert store.search_text(["dark"], 0, include_private=True) == []
    # user text is data, never query syntax
    assert store.search_text(['dark"', "OR", "*", "&", "!"], 10, include_private=True) is not None


def test_private_files_are_filtered_in_the_query(store):
    store.replace_file(rec("MEMORY.md", private=True), [ChunkInput(1, 1, "secret heron", "a", (basis(0),))])
    store.replace_file(rec("memory/d.md"), [ChunkInput(1, 1, "public heron", "b", (basis(0),))])
    assert [h.path for h in store.search_text(["heron"], 10, include_private=False)] == ["memory/d.md"]
    assert [h.path for h in store.search_vector(basis(0), 10, include_private=False)] == ["memory/d.md"]
    assert len(store.search_text(["heron"], 10, include_private=True)) == 2


def test_a_user_scope_sees_the_agent_and_itself_never_another_user(store):
    store.replace_file(rec("memory/a.md"), [ChunkInput(1, 1, "agent otter note", "a", (basis(0),))])
    store.replace_file(rec("memory/u.md", scope="alice"), [ChunkInput(1, 1, "alice otter note", "b", (basis(0),))])
    store.replace_file(rec("memory/u.md", scope="bob"), [ChunkInput(1, 1, "bob otter note", "c", (basis(0),))])

    def who(hits):
        return sorted(h.scope or "" for h in hits)

    assert who(store.search_text(["otter"], 10, include_private=True)) == [""]
    assert who(store.search_text(["otter"], 10, include_private=True, scope="alice")) == ["", "alice"]
    assert who(store.search_vector(basis(0), 10, include_private=True, scope="bob")) == ["", "bob"]
    assert store.remove_files(["memory/u.md"], "alice") == 1
    assert who(store.search_text(["otter"], 10, include_private=True, scope="bob")) == ["", "bob"]
    assert set(store.files("bob")) == {"memory/u.md"}


def test_vector_search_scores_a_chunk_by_its_best_window(store):
    store.replace_file(rec("m.md"), [
        ChunkInput(1, 1, "two windows", "a", (basis(0), basis(1))),
        ChunkInput(2, 2, "one window", "b", (unit([0.6, 0.8, 0, 0, 0, 0, 0, 0]),)),
        ChunkInput(3, 3, "no vector", "c"),
    ])
    hits = store.search_vector(basis(1), 10, include_private=True)
    assert [h.start_line for h in hits] == [1, 2]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[1].score == pytest.approx(0.8, abs=1e-5)
    means = store.chunk_vectors([h.id for h in hits])
    assert np.allclose(means[hits[0].id], unit([1, 1, 0, 0, 0, 0, 0, 0]), atol=1e-5)
    assert np.linalg.norm(means[hits[1].id]) == pytest.approx(1.0, abs=1e-5)


def test_meta_cache_clear_stats_and_check(store):
    assert store.get_meta("embedding_model") is None
    store.set_meta("embedding_model", "local:x:8")
    assert store.get_meta("embedding_model") == "local:x:8"
    v = unit(np.arange(1, 9))
    store.put_many("model-a", {"h1": v})
    got = store.get_many("model-a", ["h1", "missing"])
    assert set(got) == {"h1"} and np.allclose(got["h1"], v)
    assert store.get_many("model-b", ["h1"]) == {}
    store.replace_file(rec("m.md"), [ChunkInput(1, 1, "text", "a", (v,))])
    stats = store.stats()
    assert (stats["files"], stats["chunks"], stats["vectors"], stats["dimensions"]) == (1, 1, 1, 8)
    assert {"vector_backend", "text_backend", "schema_version", "cached_embeddings"} <= set(stats)
    assert store.check() == []
    store.clear()
    assert store.files() == {} and store.search_text(["text"], 5, include_private=True) == []
    assert store.get_many("model-a", ["h1"])  # the embedding cache survives a clear


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
def minilm():
    try:
        from soulframe_embeddings.local import LocalProvider
    except ImportError:
        pytest.skip("the offline embedding plugin is not importable")
    provider = LocalProvider()
    if not provider.available():
        pytest.skip(f"offline model not installed: {provider.unavailable_reason()}")
    return provider


def _provider_plugin(provider):
    """A plugin registering the real offline model under the name 'local'."""
    from soulframe import hookimpl
    from soulframe.model import Registration

    class TestMiniLM:
        __name__ = "test_minilm"

        @hookimpl
        def register_embedding_providers(self):
            return [Registration("local", lambda config: provider, "all-MiniLM-L6-v2")]

    return TestMiniLM()


def memory_agent(kind: str, workspace: Path, request, provider):
    from soulframe import plugins
    from soulframe.agent import Agent
    from soulframe.config import load_config

    overrides = {"embedding.provider": "local", "store.backend": kind}
    if kind == "postgres":
        overrides["store.dsn"] = request.getfixturevalue("pg_dsn")
    pm = plugins.make_plugin_manager(plugins=[_provider_plugin(provider)])
    return Agent(load_config(search=False, workspace=workspace, overrides=overrides), pm=pm)


@pytest.mark.model
@pytest.mark.postgres
def test_same_memory_search_results_on_both_stores(tmp_path, request, minilm):
    import shutil

    src = Path(__file__).parent / "data" / "memory_eval" / "workspace"
    ws = tmp_path / "ws"
    shutil.copytree(src, ws)
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
