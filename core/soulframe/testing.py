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

Every test uses real data through the public :class:`~soulframe.Store` methods only.
Class attributes switch off what a store legitimately does not do (``stemming``,
``per_user_files``).

The other suites follow the same pattern, one per thing a plugin can provide:

=============================  =========================  ==================================
suite                          fixture to provide         checks
=============================  =========================  ==================================
``StoreContract``              ``make_store``             memory index, per-user context
                                                          files, recalls, every session kind
``ContextFileContract``        ``make_context_files``     :class:`~soulframe.ContextFileStore`
``RecallLogContract``          ``recall_log``             :class:`~soulframe.TracksRecalls`
``EmbeddingProviderContract``  ``provider``               :class:`~soulframe.EmbeddingProvider`
                                                          and the optional capabilities it
                                                          declares, memory search through it
``SectionContract``            ``section``                a prompt :class:`~soulframe.Section`
                                                          in main, group and per-user prompts
=============================  =========================  ==================================

:func:`make_agent` builds a real agent on a workspace with the installed plugins plus the
ones a test names.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pytest

from soulframe._engine.agentstore import BOOTSTRAP, ContextFileStore
from soulframe._engine.model import (
    ChunkInput,
    CountingStore,
    CountsTokens,
    Describes,
    EmbeddingProvider,
    ErasingStore,
    ExplainsUnavailability,
    FileRecord,
    FindsFiles,
    MovesRecalls,
    Recall,
    Registration,
    Section,
    ServesContextFiles,
    Session,
    SoulframeError,
    Store,
    StoreStats,
    TracksRecalls,
)

from .hookspecs import hookimpl

if TYPE_CHECKING:
    from soulframe._engine.agent import Agent

StoreFactory = Callable[..., Store]
ContextFilesFactory = Callable[..., ContextFileStore]


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


def make_agent(workspace: str | os.PathLike[str], *, plugins: Iterable[Any] = (),
               disabled: Iterable[str] = (), seed: bool = True, **config: Any) -> Agent:
    """A real agent on ``workspace``, for a test.

    :param workspace: the workspace directory, created (0700) when missing and seeded with
        the templates unless ``seed=False`` (a test that writes its own files).
    :param plugins: plugin objects or modules registered after the installed plugins, so
        their names win (``Provides(...)``, or a module of ``@hookimpl`` functions). Your
        plugin's own module, installed (``pip install -e .``), is loaded already by its
        entry point and not registered twice.
    :param disabled: installed plugins to leave out, as ``plugins.disabled`` does.
    :param config: config keys, ``__`` for dots (``store__backend="mine"``) or dotted in a
        ``**{...}``; a path value is given as text. The agent's state goes to
        ``<workspace>-state`` beside the workspace unless ``state_dir`` is set, and
        semantic search is off (``embedding.provider = "none"``) unless configured.

    No config file is read (not ``$SOULFRAME_CONFIG``, the workspace's ``soulframe.toml``
    or the user's config directory), so a test's agent is the same on every machine.
    """
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe._engine.workspace import seed_workspace

    root = Path(workspace)
    dotted = {k.replace("__", "."): os.fspath(v) if isinstance(v, os.PathLike) else v
              for k, v in config.items()}
    dotted.setdefault("state_dir", str(root.parent / f"{root.name}-state"))
    dotted.setdefault("embedding.provider", "none")
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    if seed:
        seed_workspace(root, agent_type=str(dotted.get("agent_type", "open")))
    pm = make_plugin_manager(list(disabled), plugins=list(plugins))
    cfg = load_config(search=False, workspace=root, overrides=dotted, pm=pm)
    return Agent(cfg, pm=pm)


@runtime_checkable
class _Closes(Protocol):
    """A context-file store holding a connection it closes (optional)."""

    def close(self) -> None: ...


class Provides:
    """A plugin object offering one registration from a test: ``Provides(stores=[reg])``,
    ``Provides(embedding_providers=[reg])`` or ``Provides(prompt_sections=[section])``."""

    KINDS = ("stores", "embedding_providers", "prompt_sections")

    def __init__(self, name: str = "contract", **offers: list[Any]) -> None:
        unknown = sorted(set(offers) - set(self.KINDS))
        if unknown:  # a typo (store=...) would otherwise offer nothing, and the test pass on the default
            raise TypeError(f"Provides offers {', '.join(self.KINDS)}, not {', '.join(unknown)}")
        self.__name__ = name
        self.offers = offers

    @hookimpl
    def register_stores(self) -> list[Any]:
        return list(self.offers.get("stores", ()))

    @hookimpl
    def register_embedding_providers(self) -> list[Any]:
        return list(self.offers.get("embedding_providers", ()))

    @hookimpl
    def register_prompt_sections(self) -> list[Any]:
        return list(self.offers.get("prompt_sections", ()))


def write_memory(workspace: Path) -> None:
    """A private fact in MEMORY.md and a shared one in a daily log, both about a heron."""
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The secret heron nests by the mill\n")
    (workspace / "memory").mkdir(mode=0o700, exist_ok=True)
    (workspace / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- A public heron was seen at the lake\n")


def check_sessions(agent: Agent) -> None:
    """What every store, provider and section must keep working: memory search shows
    MEMORY.md to a main session only; main, group and per-user prompts build; each user
    sees their own USER.md and never another user's."""
    from soulframe._engine.agentstore import context_store

    agent.memory.sync()
    main = {h.path for h in agent.memory.search("heron", session=Session.main())}
    group = {h.path for h in agent.memory.search("heron", session=Session.group())}
    assert main == {"MEMORY.md", "memory/2026-01-02.md"}, main
    assert group == {"memory/2026-01-02.md"}, group
    assert agent.system_prompt(Session.main()).text
    assert "secret heron" not in agent.system_prompt(Session.group()).text
    alice = agent.system_prompt(Session.main(user_id="alice")).text
    files = context_store(agent)
    files.write_user_file("alice", "USER.md", "# USER.md\n\n- Alice takes her tea with lemon\n")
    alice = agent.system_prompt(Session.main(user_id="alice")).text
    bob = agent.system_prompt(Session.main(user_id="bob")).text
    assert "tea with lemon" in alice
    assert "tea with lemon" not in bob
    assert {"alice", "bob"} <= set(files.users())


class ContextFileContract:
    """The per-user context-file contract (:class:`soulframe.ContextFileStore`, returned by
    a store's ``context_files(agent)``). Provide ``make_context_files``: a fixture returning
    ``make(key="a") -> ContextFileStore``, the same files again when a key is reused."""

    @pytest.fixture
    def make_context_files(self) -> ContextFilesFactory:  # pragma: no cover - overridden
        raise NotImplementedError("provide a make_context_files fixture")

    @pytest.fixture
    def files(self, make_context_files: ContextFilesFactory) -> ContextFileStore:
        return make_context_files("files")

    def test_context_files_implement_the_protocol(self, files: ContextFileStore) -> None:
        assert isinstance(files, ContextFileStore)
        assert isinstance(files.managed, bool) and files.agent_key
        assert files.agent_type in ("open", "predefined")

    def test_each_user_has_their_own_files(self, files: ContextFileStore) -> None:
        files.write_user_file("alice", "USER.md", "alice likes tea")
        files.write_user_file("bob", "USER.md", "bob likes coffee")
        files.write_user_file("alice", "USER.md", "alice likes green tea")
        assert files.user_files("alice") == {"USER.md": "alice likes green tea"}
        assert files.user_files("bob") == {"USER.md": "bob likes coffee"}
        assert files.user_files("carol") == {}
        assert {"alice", "bob"} <= set(files.users()) and "carol" not in files.users()

    def test_append_starts_a_new_line_and_a_missing_file_with_its_heading(self, files: ContextFileStore) -> None:
        files.append_user_file("alice", "USER.md", "- likes tea\n", heading="# USER.md\n\n")
        files.write_user_file("bob", "USER.md", "# USER.md\n- first")
        files.append_user_file("bob", "USER.md", "- second\n", heading="# ignored\n")
        files.append_user_file("alice", "USER.md", "- and lemon\n", heading="# ignored\n")
        assert files.user_files("alice")["USER.md"] == "# USER.md\n\n- likes tea\n- and lemon\n"
        assert files.user_files("bob")["USER.md"] == "# USER.md\n- first\n- second\n"

    def test_seeding_fills_only_missing_or_empty_files(self, files: ContextFileStore) -> None:
        files.write_user_file("alice", "USER.md", "mine")
        files.write_user_file("alice", "SOUL.md", "   ")
        written = files.seed_user_files("alice", {"USER.md": "template", "SOUL.md": "soul", "TOOLS.md": "tools"})
        assert sorted(written) == ["SOUL.md", "TOOLS.md"]
        assert files.user_files("alice") == {"USER.md": "mine", "SOUL.md": "soul", "TOOLS.md": "tools"}
        assert files.seed_user_files("alice", {"USER.md": "template"}) == []

    def test_a_finished_bootstrap_never_comes_back(self, files: ContextFileStore) -> None:
        assert files.seed_user_files("alice", {BOOTSTRAP: "hello"}) == [BOOTSTRAP]
        assert files.bootstrap_completed("alice") is False
        assert files.delete_user_file("alice", BOOTSTRAP) is True
        assert files.bootstrap_completed("alice") is True
        assert files.seed_user_files("alice", {BOOTSTRAP: "hello"}) == []
        assert BOOTSTRAP not in files.user_files("alice")
        assert files.seed_user_files("bob", {BOOTSTRAP: "hello"}) == [BOOTSTRAP]
        assert files.delete_user_file("alice", "USER.md") is False

    def test_unicode_and_large_files_round_trip(self, files: ContextFileStore) -> None:
        text = "# USER.md\n\n- 東京に住んでいる — café ☕\n" + "x" * 200_000
        files.write_user_file("alice", "USER.md", text)
        assert files.user_files("alice")["USER.md"] == text

    def test_agent_level_files(self, files: ContextFileStore) -> None:
        if not files.managed:  # standalone: the agent's own files are its workspace on disk
            with pytest.raises(SoulframeError):
                files.agent_files()
            assert files.seed_agent_files({"SOUL.md": "soul"}) == []
            return
        files.write_agent_file("SOUL.md", "kind")
        assert sorted(files.seed_agent_files({"SOUL.md": "x", "TOOLS.md": "tools"})) == ["TOOLS.md"]
        assert files.agent_files()["SOUL.md"] == "kind"
        assert files.delete_agent_file("TOOLS.md") is True
        assert "TOOLS.md" not in files.agent_files()

    def test_context_files_persist_across_reopen(self, make_context_files: ContextFilesFactory) -> None:
        first = make_context_files("reopen")
        first.write_user_file("alice", "USER.md", "durable")
        first.delete_user_file("alice", BOOTSTRAP)
        again = make_context_files("reopen")
        assert again.user_files("alice") == {"USER.md": "durable"}
        assert again.bootstrap_completed("alice") is True


def check_recall_log(log: Any) -> None:
    lease = Recall("memory/2026-11-02.md", 3, "- Lease renewed until 2027-10", 0.8)
    log.record_recalls([lease, Recall("memory/2026-11-02.md", 4, "- Bins go out on Tuesday", 0.4)], "q1", "2026-11-10")
    log.record_recalls([lease], "q1", "2026-11-10")  # the same query again: one more recall only
    moved = Recall("memory/2026-11-02.md", 5, "-  lease renewed UNTIL 2027-10", 0.9)  # lines moved
    log.record_recalls([moved], "q2", "2026-11-11")
    log.record_recalls([Recall("memory/2026-11-02.md", 3, "- Lease renewed until 2027-10", 0.5, "alice")],
                       "q3", "2026-11-11")
    top = log.recalls(10)
    assert [(r.text, r.count, r.queries, r.days) for r in top] == [
        ("- Lease renewed until 2027-10", 3, 2, 2), ("- Bins go out on Tuesday", 1, 1, 1)]
    assert top[0].line == 5 and abs(top[0].best_score - 0.9) < 1e-6 and top[0].last_recalled >= top[0].first_recalled
    assert [(r.count, r.queries) for r in log.recalls(10, scope="alice")] == [(1, 1)]
    assert log.recalls(10, path_prefix="MEMORY") == [] and len(log.recalls(1)) == 1


def check_moved_recalls(log: Any) -> None:
    """:class:`soulframe.MovesRecalls`: counts follow a file to its new path, merged with any
    there, and another scope's stay where they were."""
    lease = Recall("memory/2026-11-02.md", 3, "- Lease renewed until 2027-10", 0.8)
    log.record_recalls([lease], "q1", "2026-11-10")
    log.record_recalls([lease, Recall("memory/2026-11-02.md", 3, lease.text, 0.5, "alice")], "q2", "2026-11-11")
    # counted at the archive path before (the file was moved there and back)
    log.record_recalls([Recall("memory/archive/2026-11-02.md", 3, lease.text, 0.9)], "q3", "2026-11-12")
    log.move_recalls([("memory/2026-11-02.md", "memory/archive/2026-11-02.md")])
    top = log.recalls(10)
    assert [(r.path, r.count, r.queries, r.days) for r in top] == [("memory/archive/2026-11-02.md", 3, 3, 3)]
    assert abs(top[0].best_score - 0.9) < 1e-6
    assert [r.path for r in log.recalls(10, scope="alice")] == ["memory/2026-11-02.md"]


class RecallLogContract:
    """The recall-tracking contract (:class:`soulframe.TracksRecalls`). Provide a
    ``recall_log`` fixture returning a fresh, empty one."""

    @pytest.fixture
    def recall_log(self) -> TracksRecalls:  # pragma: no cover - overridden
        raise NotImplementedError("provide a recall_log fixture")

    def test_implements_the_recall_protocol(self, recall_log: TracksRecalls) -> None:
        assert isinstance(recall_log, TracksRecalls)
        assert recall_log.recalls(10) == []

    def test_recall_counts_queries_days_and_scopes(self, recall_log: TracksRecalls) -> None:
        """Each entry's recalls, distinct queries and days, per scope, keyed by the entry's
        text (not its line)."""
        check_recall_log(recall_log)

    def test_recall_counts_follow_a_moved_file(self, recall_log: TracksRecalls) -> None:
        """Optional (:class:`soulframe.MovesRecalls`): counts follow a renamed file."""
        if not isinstance(recall_log, MovesRecalls):
            pytest.skip("this recall log does not move counts")
        check_moved_recalls(recall_log)


class StoreContract(ContextFileContract):
    """The memory-store contract (see :class:`soulframe.Store`)."""

    #: the store's keyword search stems words ("screenshots" finds "screenshot")
    stemming: bool = True
    #: the store keeps per-user context files (:class:`soulframe.ServesContextFiles`);
    #: without them it cannot serve a session with a ``user_id``
    per_user_files: bool = True

    @pytest.fixture
    def make_context_files(self, make_store: StoreFactory, tmp_path: Path) -> Iterator[ContextFilesFactory]:
        """The store's own ``context_files(agent)``, for an agent whose state is per key."""
        if not self.per_user_files:
            pytest.skip("this store keeps no per-user context files")
        opened: list[Any] = []

        def make(key: str = "a") -> ContextFileStore:
            store = make_store(key)
            opened.append(store)
            assert isinstance(store, ServesContextFiles), (
                f"store {store.name!r} has no context_files(agent): it cannot serve "
                "Session.main(user_id=...) (set per_user_files = False if that is intended)")
            agent = make_agent(tmp_path / "agents" / key, seed=False)
            files = store.context_files(agent)
            opened.append(files)
            return files

        yield make
        for thing in reversed(opened):
            if isinstance(thing, _Closes):  # closing is optional for context files
                thing.close()

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
        (character pairs, :mod:`soulframe._engine.textsplit`)."""
        from soulframe._engine.memory.querying import query_terms

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

    def test_common_words_count_only_the_chunks_a_search_sees(self, store: Store) -> None:
        """Optional (:class:`soulframe.CountingStore`): ``common_words`` names the asked
        words more than the share of the visible chunks hold, counting a private file's or
        another user's chunks for no one else, and notices a change of the index."""
        if not isinstance(store, CountingStore):
            pytest.skip("this store does not implement CountingStore.common_words")
        store.replace_file(record("memory/d.md"), [
            ChunkInput(i, i, text, f"d{i}", (basis(0),)) for i, text in enumerate(
                ["Kate hiked the ridge", "coffee with Kate", "Kate's new bike", "rain all day"], 1)])
        store.replace_file(record("MEMORY.md", private=True), [
            ChunkInput(i, i, f"Lisbon note {i}", f"m{i}", (basis(1),)) for i in range(1, 7)])
        store.replace_file(record("memory/u.md", scope="alice"), [
            ChunkInput(i, i, f"otter sighting {i}", f"u{i}", (basis(2),)) for i in range(1, 5)])
        asked = ["kate", "lisbon", "otter", "heron"]
        public = store.common_words(asked, 0.5, include_private=False)
        assert (public.chunks, public.words) == (4, frozenset({"kate"}))  # 3 of 4
        owner = store.common_words(asked, 0.5, include_private=True)
        assert (owner.chunks, owner.words) == (10, frozenset({"lisbon"}))  # kate 3, lisbon 6 of 10
        alice = store.common_words(asked, 0.2, include_private=False, scope="alice")
        assert (alice.chunks, alice.words) == (8, frozenset({"kate", "otter"}))  # 3 and 4 of 8
        assert store.common_words(asked, 0.3, include_private=False, scope="bob").words == {"kate"}
        store.replace_file(record("memory/d.md", "2"), [ChunkInput(1, 1, "rain again", "d9", (basis(0),))])
        after = store.common_words(asked, 0.5, include_private=False)
        assert (after.chunks, after.words) == (1, frozenset())

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
        """Search blends a candidate's best window with its chunk's mean
        (``memory.chunk_context``), asking for ~100 chunks at once: each id asked for gets
        the unit mean of exactly its own windows, whatever else the index holds."""
        import numpy as np

        store.replace_file(record("m.md"), [ChunkInput(1, 1, "two", "a", (basis(0), basis(1)))])
        store.replace_file(record("n.md"), [
            ChunkInput(1, 1, "three", "b", (basis(2), basis(3), basis(4))),
            ChunkInput(2, 2, "one", "c", (basis(5),)),
        ])
        by_text = {h.text: h.id for b in range(6)
                   for h in store.search_vector(basis(b), 10, include_private=True)}
        vec = store.chunk_vectors([by_text["one"], by_text["two"], 987654, by_text["three"]])
        assert set(vec) == {by_text["one"], by_text["two"], by_text["three"]}
        assert np.allclose(vec[by_text["two"]], unit([1, 1, 0, 0, 0, 0, 0, 0]), atol=1e-5)
        assert np.allclose(vec[by_text["three"]], unit([0, 0, 1, 1, 1, 0, 0, 0]), atol=1e-5)
        assert np.allclose(vec[by_text["one"]], basis(5), atol=1e-5)

    def test_a_model_change_of_dimensions(self, store: Store) -> None:
        store.replace_file(record("m.md", "1"), [ChunkInput(1, 1, "small", "a", (basis(0, 8),))])
        assert store.search_vector(basis(0, 8), 5, include_private=True)
        store.clear()
        store.replace_file(record("m.md", "1"), [ChunkInput(1, 1, "large", "a", (basis(3, 16),))])
        hits = store.search_vector(basis(3, 16), 5, include_private=True)
        assert [h.text for h in hits] == ["large"]
        assert store.stats().dimensions == 16

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
        assert isinstance(stats, StoreStats), f"stats() returns a StoreStats, not {type(stats).__name__}"
        assert (stats.files, stats.chunks, stats.vectors, stats.embedded_chunks, stats.dimensions) == (1, 1, 2, 1, 8)
        assert stats.vector_backend and stats.text_backend  # said in words, for `memory status`
        assert isinstance(stats.schema_version, int) and isinstance(stats.cached_embeddings, int)
        assert stats.bytes is None or stats.bytes > 0
        assert store.check() == []
        assert store.check(deep=True) == []

    # ------------------------------------------------------------------ two connections

    # ------------------------------------------------------------------ recall tracking

    def test_recall_counts_queries_days_and_scopes(self, store: Store) -> None:
        """Optional (:class:`soulframe.TracksRecalls`): the same checks as RecallLogContract."""
        if not isinstance(store, TracksRecalls):
            pytest.skip("this store does not track recalls")
        check_recall_log(store)

    def test_recall_counts_follow_a_moved_file(self, store: Store) -> None:
        """Optional (:class:`soulframe.MovesRecalls`): counts follow a renamed file."""
        if not isinstance(store, MovesRecalls):
            pytest.skip("this store does not move recall counts")
        check_moved_recalls(store)

    def test_files_named_returns_those_records_alone(self, store: Store) -> None:
        """Optional (:class:`soulframe.FindsFiles`): a few records without reading all."""
        if not isinstance(store, FindsFiles):
            pytest.skip("this store does not look files up by name")
        a = record("memory/a.md", "1", day="2026-01-01")
        store.replace_file(a, [ChunkInput(1, 1, "otter", "x")])
        store.replace_file(record("memory/b.md", "2"), [ChunkInput(1, 1, "heron", "y")])
        mine = record("memory/a.md", "3", scope="alice")
        store.replace_file(mine, [ChunkInput(1, 1, "alice's otter", "z")])
        assert store.files_named(["memory/a.md", "memory/gone.md"]) == {"memory/a.md": a}
        assert store.files_named(["memory/a.md"], "alice") == {"memory/a.md": mine}
        assert store.files_named([]) == {}

    # ------------------------------------------------------------------ end to end

    def test_serves_main_group_and_per_user_sessions(self, make_store: StoreFactory, tmp_path: Path) -> None:
        """The store, selected by ``store.backend``, under a real agent: memory search keeps
        MEMORY.md to main sessions, and each user's prompt shows their own USER.md."""
        if not self.per_user_files:
            pytest.skip("this store keeps no per-user context files")
        opened: list[Store] = []

        def factory(agent: Any) -> Store:
            opened.append(make_store("sessions"))
            return opened[-1]

        ws = tmp_path / "ws"
        agent = make_agent(ws, plugins=[Provides(stores=[Registration("contract-store", factory)])],
                           store__backend="contract-store")
        write_memory(ws)
        try:
            check_sessions(agent)
        finally:
            for s in opened:
                s.close()

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


class EmbeddingProviderContract:
    """The embedding-provider contract (:class:`soulframe.EmbeddingProvider`), plus each
    optional capability the provider declares (:class:`soulframe.CountsTokens`,
    :class:`soulframe.ExplainsUnavailability`, :class:`soulframe.Describes`). Provide a
    ``provider`` fixture returning an available provider."""

    @pytest.fixture
    def provider(self) -> EmbeddingProvider:  # pragma: no cover - overridden
        raise NotImplementedError("provide a provider fixture")

    def test_implements_the_provider_protocol(self, provider: EmbeddingProvider) -> None:
        assert isinstance(provider, EmbeddingProvider)
        assert isinstance(provider.name, str) and provider.name
        assert isinstance(provider.model_id, str) and provider.model_id
        assert isinstance(provider.dimensions, int) and provider.dimensions > 0
        assert provider.available() is True

    def test_documents_are_unit_float32_rows(self, provider: EmbeddingProvider) -> None:
        import numpy as np

        texts = ["The heron nests by the mill", "Café in Zürich — 東京", "x" * 5000]
        vecs = np.asarray(provider.embed_documents(texts))
        assert vecs.shape == (3, provider.dimensions) and vecs.dtype == np.float32
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)

    def test_a_query_is_one_unit_float32_vector(self, provider: EmbeddingProvider) -> None:
        import numpy as np

        vec = np.asarray(provider.embed_query("where does the heron nest?"))
        assert vec.shape == (provider.dimensions,) and vec.dtype == np.float32
        assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3

    def test_a_text_gets_the_same_vector_alone_or_in_a_batch(self, provider: EmbeddingProvider) -> None:
        import numpy as np

        batch = np.asarray(provider.embed_documents(["alpha beta", "a heron by the mill"]))
        alone = np.asarray(provider.embed_documents(["a heron by the mill"]))
        assert np.allclose(batch[1], alone[0], atol=1e-3)
        assert np.allclose(alone, np.asarray(provider.embed_documents(["a heron by the mill"])), atol=1e-5)

    def test_declared_capabilities_answer(self, provider: EmbeddingProvider) -> None:
        if isinstance(provider, CountsTokens):
            assert isinstance(provider.max_tokens, int) and provider.max_tokens > 0
            short, long = provider.count_tokens("heron"), provider.count_tokens("heron " * 50)
            assert isinstance(short, int) and 1 <= short < long
        if isinstance(provider, ExplainsUnavailability):
            assert provider.unavailable_reason() is None  # it is available
        if isinstance(provider, Describes):
            json.dumps(dict(provider.describe()))

    def test_serves_memory_search_in_every_session(self, provider: EmbeddingProvider, tmp_path: Path) -> None:
        """Selected by ``embedding.provider``: the memory index embeds every chunk with it,
        and search still keeps MEMORY.md to main sessions."""
        ws = tmp_path / "ws"
        reg = Registration("contract-provider", lambda agent: provider)
        # no score floor: the floor judges how good the vectors are, the contract only that
        # they are used and that visibility holds
        agent = make_agent(ws, plugins=[Provides(embedding_providers=[reg])],
                           embedding__provider="contract-provider", memory__min_score=0.0)
        write_memory(ws)
        check_sessions(agent)
        stats = agent.store.stats()
        assert stats.vectors >= 2 and stats.dimensions == provider.dimensions
        hits = agent.memory.search("heron", session=Session.main())
        assert hits.mode == "hybrid", hits.notice


class SectionContract:
    """The prompt-section contract. Provide a ``section`` fixture returning the
    :class:`soulframe.Section` a plugin registers; set ``expected`` to a text the section
    shows in a main session's full prompt, and ``shown_in`` to another session when the
    section is for that kind only (a group chat's, a heartbeat's)."""

    #: a text the section renders into the prompt of ``shown_in``
    expected: str = ""
    #: a session whose prompt shows the section (default: the owner's main session)
    shown_in: Session | None = None

    @pytest.fixture
    def section(self) -> Section:  # pragma: no cover - overridden
        raise NotImplementedError("provide a section fixture")

    @pytest.fixture
    def agent(self, section: Section, tmp_path: Path) -> Agent:
        return make_agent(tmp_path / "ws", plugins=[Provides(prompt_sections=[section])])

    def test_is_a_section(self, section: Section) -> None:
        assert isinstance(section, Section) and section.name and section.render is not None
        assert section.modes and section.zone in ("stable", "dynamic")

    def test_renders_in_a_main_prompt(self, agent: Agent, section: Section) -> None:
        session = self.shown_in or Session.main()
        prompt = agent.system_prompt(session)
        shown = [s for s in prompt.sections if s.name == section.name]
        assert shown, f"section {section.name!r} is not in a {session.kind} session's prompt"
        assert shown[0].plugin == "contract"
        if self.expected:
            assert self.expected in shown[0].text and self.expected in prompt.text

    def test_every_session_kind_builds(self, agent: Agent, section: Section) -> None:
        for session in (Session.main(), Session.group(chat_title="Team"), Session.main(user_id="alice"),
                        Session.subagent(), Session.cron(), Session.heartbeat()):
            prompt = agent.system_prompt(session)
            for s in prompt.sections:
                if s.name == section.name:
                    assert prompt.mode in section.modes


__all__ = [
    "ContextFileContract",
    "EmbeddingProviderContract",
    "Provides",
    "RecallLogContract",
    "SectionContract",
    "StoreContract",
    "basis",
    "check_recall_log",
    "check_sessions",
    "make_agent",
    "record",
    "unit",
    "write_memory",
]
