"""Test helpers for plugin authors, opt-in (like ``tox.pytest``)::

    # conftest.py of your plugin
    pytest_plugins = ["soulframe.testing"]

``StoreContract`` is the contract every memory store runs — the SQLite and PostgreSQL
default stores and any third-party one. Subclass it and provide ``make_store``: a fixture
returning a factory ``make(key="a") -> Store`` that opens the store for ``key`` (a fresh,
empty one the first time a key is used; the same data again when the key is reused, so
persistence and two-connection behaviour can be tested)::

    from soulframe.testing import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda key="a": MyStore(tmp_path / key)

Every test uses real data through the public :class:`~soulframe.model.Store` methods only.
Class attributes switch off what a store legitimately does not do (``stemming``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .model import ChunkInput, ErasingStore, FileRecord, Recall, Store

StoreFactory = Callable[..., Store]


def unit(values: Any) -> Any:
    """A float32 unit vector."""
    import numpy as np

    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def basis(i: int, dims: int = 8) -> Any:
    """The ``i``-th standard basis vector: cosine 1 with itself, 0 with every other."""
    import numpy as np

    v = np.zeros(dims, dtype=np.float32)
    v[i] = 1.0
    return v


def record(path: str, digest: str = "h", **kw: Any) -> FileRecord:
    kw.setdefault("mtime_ns", 1)
    kw.setdefault("size", 1)
    return FileRecord(path=path, hash=digest, **kw)


class StoreContract:
    """The memory-store contract (see :class:`soulframe.model.Store`)."""

    #: the store's keyword search stems words ("screenshots" finds "screenshot")
    stemming: bool = True

    @pytest.fixture
    def make_store(self) -> StoreFactory:  # pragma: no cover - overridden
        raise NotImplementedError("subclass StoreContract and provide a make_store fixture")

    @pytest.fixture
    def store(self, make_store: StoreFactory) -> Iterator[Store]:
        s = make_store("contract")
        yield s
        s.close()

    # ------------------------------------------------------------------ shape

    def test_implements_the_protocol(self, store: Store) -> None:
        assert isinstance(store, Store)
        assert isinstance(store.name, str) and store.name
        assert isinstance(store.location, str)

    def test_a_new_store_is_empty(self, store: Store) -> None:
        assert store.files() == {}
        assert store.search_text(["anything"], 5, include_private=True) == []
        assert store.search_vector(basis(0), 5, include_private=True) == []
        assert store.get_meta("embedding_model") is None

    # ------------------------------------------------------------------ files

    def test_files_round_trip_and_touch(self, store: Store) -> None:
        r = record("MEMORY.md", "a1", private=True, model="local:m:8", mtime_ns=5, size=10)
        store.replace_file(r, [ChunkInput(1, 2, "alpha beta", "c1")])
        d = record("memory/2026-01-02.md", "b2", day="2026-01-02")
        store.replace_file(d, [ChunkInput(1, 1, "gamma", "c2")])
        assert store.files() == {"MEMORY.md": r, "memory/2026-01-02.md": d}
        moved = record("MEMORY.md", "a1", private=True, model="local:m:8", mtime_ns=99, size=11)
        store.touch_file(moved)
        assert store.files()["MEMORY.md"] == moved

    def test_replace_file_replaces_only_that_file(self, store: Store) -> None:
        store.replace_file(record("a.md", "1"), [ChunkInput(1, 1, "old walrus", "x", (basis(0),))])
        store.replace_file(record("b.md", "1"), [ChunkInput(1, 1, "kept walrus", "y", (basis(1),))])
        store.replace_file(record("a.md", "2"), [ChunkInput(5, 6, "new narwhal", "z", (basis(2),))])
        assert [h.path for h in store.search_text(["walrus"], 10, include_private=True)] == ["b.md"]
        hit = store.search_text(["narwhal"], 10, include_private=True)
        assert [(h.path, h.start_line, h.end_line) for h in hit] == [("a.md", 5, 6)]
        assert store.files()["a.md"].hash == "2"
        vec = store.search_vector(basis(0), 10, include_private=True)
        assert all(h.text != "old walrus" for h in vec)

    def test_a_failed_replace_leaves_the_old_chunks(self, store: Store) -> None:
        store.replace_file(record("a.md", "1"), [ChunkInput(1, 1, "original puffin", "x")])
        bad = [ChunkInput(1, 1, "new puffin", "y"), ChunkInput(2, 2, None, "z")]  # type: ignore[arg-type]
        with pytest.raises(Exception):  # noqa: B017 - any driver error; what matters is after
            store.replace_file(record("a.md", "2"), bad)
        hits = store.search_text(["puffin"], 10, include_private=True)
        assert [h.text for h in hits] == ["original puffin"]
        assert store.files()["a.md"].hash == "1"

    def test_remove_files(self, store: Store) -> None:
        store.replace_file(record("a.md"), [ChunkInput(1, 1, "lynx", "x", (basis(0),))])
        store.replace_file(record("b.md"), [ChunkInput(1, 1, "lynx", "y", (basis(0),))])
        assert store.remove_files(["a.md", "missing.md"]) == 1
        assert set(store.files()) == {"b.md"}
        assert [h.path for h in store.search_text(["lynx"], 5, include_private=True)] == ["b.md"]
        assert [h.path for h in store.search_vector(basis(0), 5, include_private=True)] == ["b.md"]
        assert store.remove_files([]) == 0

    # ------------------------------------------------------------------ keyword search

    def test_keyword_search_matches_any_term_best_first(self, store: Store) -> None:
        store.replace_file(record("m.md"), [
            ChunkInput(1, 1, "screenshots in dark mode please", "a"),
            ChunkInput(2, 2, "dark chocolate", "b"),
            ChunkInput(3, 3, "nothing relevant", "c"),
        ])
        hits = store.search_text(["dark", "screenshots"], 10, include_private=True)
        assert [h.start_line for h in hits] == [1, 2]
        assert all(h.score > 0 for h in hits) and hits[0].score > hits[1].score
        assert len(store.search_text(["dark", "screenshots"], 1, include_private=True)) == 1

    def test_keyword_search_finds_words_inside_unspaced_scripts(self, store: Store) -> None:
        """A two-character Chinese word, a Japanese or Thai word inside a sentence and a
        Korean word with its particle attached are found by the query terms the core makes
        (character pairs, :mod:`soulframe.textsplit`)."""
        from .memory.querying import query_terms

        notes = {
            "zh.md": "我女儿每周三学钢琴，老师姓王。",
            "ja.md": "私の娘は毎週水曜日にピアノを習っています。",
            "ko.md": "딸은 수요일마다 피아노를 배운다.",
            "th.md": "ลูกสาวของฉันเรียนเปียโนทุกวันพุธ",
            "en.md": "Her daughter takes piano lessons every Wednesday.",
        }
        for i, (path, text) in enumerate(notes.items()):
            store.replace_file(record(path), [ChunkInput(1, 1, text, f"u{i}")])
        for query, path in (("钢琴", "zh.md"), ("学钢琴", "zh.md"), ("王", "zh.md"),
                            ("水曜日", "ja.md"), ("ピアノ", "ja.md"), ("피아노", "ko.md"),
                            ("수요일", "ko.md"), ("เปียโน", "th.md"), ("piano", "en.md")):
            hits = store.search_text(query_terms(query), 5, include_private=True)
            assert [h.path for h in hits][:1] == [path], query

    def test_query_syntax_in_terms_is_inert(self, store: Store) -> None:
        store.replace_file(record("m.md"), [ChunkInput(1, 1, "a quote \" and NEAR OR AND star", "a")])
        for terms in (['"'], ["OR"], ["*"], ["NEAR(a"], ["a:b"], ["-x"], ["^"]):
            store.search_text(terms, 5, include_private=True)  # must not raise
        assert store.search_text([], 5, include_private=True) == []

    def test_keyword_search_stems(self, store: Store) -> None:
        if not self.stemming:
            pytest.skip("this store does not stem")
        store.replace_file(record("m.md"), [ChunkInput(1, 1, "Prefers dark-mode screenshots", "a")])
        assert len(store.search_text(["screenshot"], 5, include_private=True)) == 1

    def test_unicode_text(self, store: Store) -> None:
        store.replace_file(record("m.md"), [ChunkInput(1, 1, "Café in Zürich — naïve résumé 東京", "a")])
        assert len(store.search_text(["zürich"], 5, include_private=True)) == 1

    # ------------------------------------------------------------------ visibility

    def test_private_files_never_reach_a_non_private_search(self, store: Store) -> None:
        store.replace_file(record("MEMORY.md", private=True), [ChunkInput(1, 1, "secret heron", "a", (basis(0),))])
        store.replace_file(record("memory/d.md"), [ChunkInput(1, 1, "public heron", "b", (basis(0),))])
        assert [h.path for h in store.search_text(["heron"], 10, include_private=False)] == ["memory/d.md"]
        assert [h.path for h in store.search_vector(basis(0), 10, include_private=False)] == ["memory/d.md"]
        both = store.search_text(["heron"], 10, include_private=True)
        assert sorted(h.path for h in both) == ["MEMORY.md", "memory/d.md"]
        assert {h.path: h.private for h in both} == {"MEMORY.md": True, "memory/d.md": False}

    def test_scopes_keep_users_apart(self, store: Store) -> None:
        store.replace_file(record("memory/a.md"), [ChunkInput(1, 1, "agent otter", "a", (basis(0),))])
        store.replace_file(record("memory/u.md", scope="alice"), [ChunkInput(1, 1, "alice otter", "b", (basis(0),))])
        store.replace_file(record("memory/u.md", scope="bob"), [ChunkInput(1, 1, "bob otter", "c", (basis(0),))])

        def scopes(hits: list[Any]) -> list[str]:
            return sorted(h.scope or "" for h in hits)

        assert scopes(store.search_text(["otter"], 10, include_private=True)) == [""]
        assert scopes(store.search_text(["otter"], 10, include_private=True, scope="alice")) == ["", "alice"]
        assert scopes(store.search_vector(basis(0), 10, include_private=True, scope="bob")) == ["", "bob"]
        assert set(store.files("alice")) == {"memory/u.md"} and set(store.files()) == {"memory/a.md"}
        assert store.remove_files(["memory/u.md"], "alice") == 1
        assert set(store.files("bob")) == {"memory/u.md"}

    # ------------------------------------------------------------------ vectors

    def test_vector_search_is_cosine_best_window_first(self, store: Store) -> None:
        store.replace_file(record("m.md"), [
            ChunkInput(1, 1, "two windows", "a", (basis(0), basis(1))),
            ChunkInput(2, 2, "one window", "b", (unit([0.6, 0.8, 0, 0, 0, 0, 0, 0]),)),
            ChunkInput(3, 3, "far away", "c", (basis(5),)),
            ChunkInput(4, 4, "no vector", "d"),
        ])
        hits = store.search_vector(basis(1), 10, include_private=True)
        assert [h.start_line for h in hits][:2] == [1, 2]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert hits[1].score == pytest.approx(0.8, abs=1e-5)
        assert 4 not in [h.start_line for h in hits]
        assert len(store.search_vector(basis(1), 1, include_private=True)) == 1

    def test_chunk_vectors_are_unit_means(self, store: Store) -> None:
        import numpy as np

        store.replace_file(record("m.md"), [ChunkInput(1, 1, "two", "a", (basis(0), basis(1)))])
        hit = store.search_vector(basis(0), 1, include_private=True)[0]
        vec = store.chunk_vectors([hit.id, 987654])
        assert set(vec) == {hit.id}
        assert np.allclose(vec[hit.id], unit([1, 1, 0, 0, 0, 0, 0, 0]), atol=1e-5)

    def test_a_model_change_of_dimensions(self, store: Store) -> None:
        store.replace_file(record("m.md", "1"), [ChunkInput(1, 1, "small", "a", (basis(0, 8),))])
        assert store.search_vector(basis(0, 8), 5, include_private=True)
        store.clear()
        store.replace_file(record("m.md", "1"), [ChunkInput(1, 1, "large", "a", (basis(3, 16),))])
        hits = store.search_vector(basis(3, 16), 5, include_private=True)
        assert [h.text for h in hits] == ["large"]
        assert store.stats()["dimensions"] == 16

    # ------------------------------------------------------------------ meta, cache, health

    def test_meta_and_embedding_cache(self, store: Store) -> None:
        import numpy as np

        store.set_meta("embedding_model", "local:x:8")
        store.set_meta("embedding_model", "local:y:8")
        assert store.get_meta("embedding_model") == "local:y:8"
        v = unit(np.arange(1, 9))
        store.put_many("model-a", {"h1": v, "h2": basis(2)})
        got = store.get_many("model-a", ["h1", "h2", "missing"])
        assert set(got) == {"h1", "h2"} and np.allclose(got["h1"], v)
        assert store.get_many("model-b", ["h1"]) == {}
        store.replace_file(record("m.md"), [ChunkInput(1, 1, "text", "a", (v,))])
        store.clear()
        assert store.files() == {} and store.search_text(["text"], 5, include_private=True) == []
        assert set(store.get_many("model-a", ["h1"])) == {"h1"}  # the cache survives a clear

    def test_stats_and_check(self, store: Store) -> None:
        store.replace_file(record("m.md"), [ChunkInput(1, 1, "text", "a", (basis(0), basis(1)))])
        stats = store.stats()
        assert (stats["files"], stats["chunks"], stats["vectors"], stats["dimensions"]) == (1, 1, 2, 8)
        for key in ("vector_backend", "text_backend", "schema_version", "cached_embeddings"):
            assert key in stats
        assert store.check() == []
        assert store.check(deep=True) == []

    # ------------------------------------------------------------------ two connections

    # ------------------------------------------------------------------ recall tracking

    def test_recall_counts_queries_days_and_scopes(self, store: Store) -> None:
        """Optional: a store with ``record_recalls``/``recalls`` counts each entry's recalls,
        distinct queries and days, per scope, keyed by the entry's text (not its line)."""
        if not hasattr(store, "record_recalls"):
            pytest.skip("this store does not track recalls")
        s: Any = store
        lease = Recall("memory/2026-11-02.md", 3, "- Lease renewed until 2027-10", 0.8)
        s.record_recalls([lease, Recall("memory/2026-11-02.md", 4, "- Bins go out on Tuesday", 0.4)], "q1", "2026-11-10")
        s.record_recalls([lease], "q1", "2026-11-10")  # the same query again: one more recall only
        moved = Recall("memory/2026-11-02.md", 5, "-  lease renewed UNTIL 2027-10", 0.9)  # lines moved
        s.record_recalls([moved], "q2", "2026-11-11")
        s.record_recalls([Recall("memory/2026-11-02.md", 3, "- Lease renewed until 2027-10", 0.5, "alice")],
                         "q3", "2026-11-11")
        top = s.recalls(10)
        assert [(r.text, r.count, r.queries, r.days) for r in top] == [
            ("- Lease renewed until 2027-10", 3, 2, 2), ("- Bins go out on Tuesday", 1, 1, 1)]
        assert top[0].line == 5 and abs(top[0].best_score - 0.9) < 1e-6 and top[0].last_recalled >= top[0].first_recalled
        assert [(r.count, r.queries) for r in s.recalls(10, scope="alice")] == [(1, 1)]
        assert s.recalls(10, path_prefix="MEMORY") == [] and len(s.recalls(1)) == 1

    def test_erase_removes_forgotten_text_everywhere(self, store: Store) -> None:
        """Optional (``ErasingStore``): ``erase`` drops the chunks and recall rows holding a
        forgotten text, whatever its case, and the named embedding-cache entries; the rest
        stays searchable."""
        if not isinstance(store, ErasingStore):
            pytest.skip("this store does not implement ErasingStore.erase")
        store.replace_file(record("memory/a.md", "1"), [
            ChunkInput(1, 1, "- The heron nests at DAWN by the weir", "h1", (basis(0),)),
            ChunkInput(2, 2, "- The kingfisher fishes at noon", "h2", (basis(1),))])
        s: Any = store
        s.record_recalls([Recall("memory/a.md", 1, "- The heron nests at DAWN by the weir", 0.7),
                          Recall("memory/a.md", 2, "- The kingfisher fishes at noon", 0.6)], "q", "2026-11-10")
        store.put_many("m", {"h1": basis(0), "h2": basis(1)})
        counts = store.erase(["heron nests at dawn"], {"m": ["h1"]})
        assert counts == {"chunks": 1, "recalls": 1, "cached_embeddings": 1}
        assert store.search_text(["heron"], 5, include_private=True) == []
        assert [h.text for h in store.search_text(["kingfisher"], 5, include_private=True)] == [
            "- The kingfisher fishes at noon"]
        assert [h.start_line for h in store.search_vector(basis(0), 5, include_private=True)] == [2]
        assert [r.text for r in s.recalls(10)] == ["- The kingfisher fishes at noon"]
        assert set(store.get_many("m", ["h1", "h2"])) == {"h2"}
        assert store.check() == []

    def test_data_persists_across_reopen(self, make_store: StoreFactory) -> None:
        a = make_store("persist")
        a.replace_file(record("m.md", "1"), [ChunkInput(1, 1, "durable kestrel", "a", (basis(2),))])
        a.close()
        b = make_store("persist")
        try:
            assert set(b.files()) == {"m.md"}
            assert [h.text for h in b.search_vector(basis(2), 5, include_private=True)] == ["durable kestrel"]
        finally:
            b.close()

    def test_a_second_connection_sees_writes(self, make_store: StoreFactory) -> None:
        """Two processes share one index: a searcher must see what an indexer wrote after
        the searcher's first search (vector caches must notice)."""
        a, b = make_store("shared"), make_store("shared")
        try:
            a.replace_file(record("one.md"), [ChunkInput(1, 1, "first ibis", "a", (basis(0),))])
            assert [h.path for h in b.search_vector(basis(0), 5, include_private=True)] == ["one.md"]
            a.replace_file(record("two.md"), [ChunkInput(1, 1, "second ibis", "b", (basis(0),))])
            a.remove_files(["one.md"])
            assert [h.path for h in b.search_vector(basis(0), 5, include_private=True)] == ["two.md"]
            assert [h.path for h in b.search_text(["ibis"], 5, include_private=True)] == ["two.md"]
        finally:
            a.close()
            b.close()
