"""The plugin contract is typed: every hookspec and registration field says what it takes
and gives (no ``Any``), each registry hands back its own registration type, and a store's
extra fields live in :class:`StoreRegistration`, not in every registration."""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import attrs
import pytest
import soulframe
from soulframe import (
    CHAT_MODELS,
    STORES,
    Agent,
    AgentLike,
    Registration,
    Session,
    SoulframeError,
    StoreRegistration,
    StoreStats,
    hookimpl,
    hookspecs,
)
from soulframe._engine.model import SessionFields
from soulframe.testing import make_agent

#: aliases a hookspec may name that still hold ``Any``, with why
ALLOWED_ANY: dict[str, str] = {}


def names_in(annotation: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(annotation, mode="eval")) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(ast.parse(annotation, mode="eval")) if isinstance(n, ast.Attribute)}


def test_no_hookspec_takes_or_returns_any() -> None:
    found = []
    for name in hookspecs.HOOK_NAMES:
        fn = getattr(hookspecs, name)
        for param, annotation in inspect.get_annotations(fn).items():
            if "Any" in names_in(str(annotation)):
                found.append(f"{name}({param}: {annotation})")
    assert not found, found


def test_the_aliases_hookspecs_name_hold_no_any_but_the_justified_ones() -> None:
    import soulframe._engine.model as model

    source = inspect.getsource(model)
    aliases = {node.targets[0].id: ast.unparse(node.value) for node in ast.parse(source).body
               if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}
    spec_names = set().union(*(names_in(str(a)) for n in hookspecs.HOOK_NAMES
                               for a in inspect.get_annotations(getattr(hookspecs, n)).values()))
    with_any = {a for a in spec_names & set(aliases) if "Any" in names_in(aliases[a])}
    assert with_any == set(ALLOWED_ANY)


@pytest.mark.parametrize("cls", [Registration, StoreRegistration])
def test_no_registration_field_is_any(cls: type) -> None:
    hints = {f.name: str(f.type) for f in attrs.fields(cls)}
    assert not [n for n, t in hints.items() if "Any" in names_in(t)], hints
    assert "managed" not in {f.name for f in attrs.fields(Registration)}, "store-only fields live in StoreRegistration"


def test_a_store_registry_holds_store_registrations_even_for_a_plain_registration(tmp_path: Path) -> None:
    class Plain:
        __name__ = "plainstore"

        @hookimpl
        def register_stores(self):
            # a third-party store written against the old API: still a store, no shortcuts
            return [Registration("plain", lambda agent: agent.registry(STORES)["sqlite"].factory(agent))]

    agent = make_agent(tmp_path / "ws", plugins=[Plain()], store__backend="plain")
    stores = agent.registry(STORES)
    assert isinstance(stores["sqlite"], StoreRegistration) and stores["sqlite"].location is not None
    plain = stores["plain"]
    assert isinstance(plain, StoreRegistration) and plain.plugin == "plainstore"
    assert (plain.managed, plain.context_files, plain.location) == (False, None, None)
    assert agent.store_location() is None  # the plain store declares no file
    agent.memory.sync()  # and it works as the store
    assert agent.store.name == "sqlite"
    agent.close()


def test_a_plugin_offering_something_else_than_a_registration_is_told_so(tmp_path: Path) -> None:
    class Wrong:
        __name__ = "wrongmodel"

        @hookimpl
        def register_chat_models(self):
            return [attrs.make_class("NotARegistration", {"name": attrs.field(default="gpt")})()]

    agent = make_agent(tmp_path / "ws", plugins=[Wrong()], model__provider="gpt")
    with pytest.raises(SoulframeError, match="register_chat_models: a plugin offered .*not a soulframe.Registration"):
        agent.select(CHAT_MODELS)
    agent.close()



def test_memory_status_is_typed_and_its_json_keeps_its_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from click.testing import CliRunner
    from soulframe._engine.memory.results import MemoryStatus
    from soulframe.cli import build_cli

    agent = make_agent(tmp_path / "ws")
    (agent.root / "memory").mkdir(exist_ok=True)
    (agent.root / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- the bins go out on Tuesday\n")
    st = agent.memory.status()
    assert isinstance(st, MemoryStatus) and st.health == "ok" and "memory/2026-01-02.md" in st.stale_files
    agent.memory.sync()
    assert agent.memory.status(deep=True).stale_files == ()
    agent.close()
    monkeypatch.setenv("SOULFRAME_STATE_DIR", str(tmp_path / "state"))
    out = CliRunner().invoke(build_cli(), ["-w", str(tmp_path / "ws"), "memory", "status", "--deep", "--index", "--json"])
    assert out.exit_code == 0, out.output
    # the --json shape scripts read, key for key and in order, as it was while status was a dict
    assert list(json.loads(out.output)) == [
        "agent", "state_key", "workspace", "store", "location", "files", "indexed_files", "chunks",
        "embedded_chunks", "provider", "model", "dimensions", "index_dimensions", "mode", "notice",
        "vector_backend", "text_backend", "fusion", "stale_files", "skipped_files", "cached_embeddings",
        "schema_version", "bytes", "health", "problems", "most_recalled", "reindexed", "provider_probe"]


#: what docs/architecture.md promises plugins of an agent, and nothing of the engine
PLUGIN_VIEW = {"id", "spec", "config", "root", "workspace", "state_dir", "state_key", "pm", "memory",
               "skills", "store", "store_is_open", "embedder", "now", "registry", "select", "tools",
               "system_prompt"}


class OnlyAgentLike:
    """An agent that offers only the plugin view: every member is the wrapped real agent's,
    nothing else is reachable (what a third-party agent class would offer)."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    def __getattr__(self, name: str) -> object:
        if name not in PLUGIN_VIEW:
            raise AttributeError(f"{name!r} is not part of what plugins see of an agent")
        return getattr(self._agent, name)


def test_the_engine_memo_is_not_part_of_what_plugins_see() -> None:
    # AgentLike holds only what plugins may use; the engine's memo has its own protocol
    assert {n for n in vars(AgentLike) if not n.startswith("_")} == PLUGIN_VIEW
    assert not hasattr(soulframe, "AgentCache") and not hasattr(soulframe, "KeepsEngineCache")


def test_the_engine_serves_an_agent_that_is_only_agent_like(tmp_path: Path) -> None:
    """A prompt, its context files and memory chunks are built for any AgentLike, memoised
    beside it, not only for ``soulframe.Agent`` (which keeps the memo itself)."""
    from soulframe._engine.memory.pipeline import chunk
    from soulframe._engine.prompt.build import build_system_prompt

    real = make_agent(tmp_path / "ws")
    (tmp_path / "ws" / "SOUL.md").write_text("# Soul\n\nSpeak plainly, like a lighthouse keeper.\n")
    other = OnlyAgentLike(real)
    first = build_system_prompt(other, Session.main())  # type: ignore[arg-type]
    assert "lighthouse keeper" in first.text
    assert build_system_prompt(other, Session.main()).text == first.text  # type: ignore[arg-type]
    chunks = chunk(other, "# Notes\n\nThe boat is blue.\n", "MEMORY.md")  # type: ignore[arg-type]
    assert any("boat is blue" in c.text for c in chunks)
    assert first.text == real.system_prompt(Session.main()).text


def test_store_stats_are_typed_and_keep_their_keys(tmp_path: Path) -> None:
    """``Store.stats()`` is a StoreStats read by attribute; its ``to_dict()`` is the mapping
    the SQLite store returned while stats were a dict, key for key and in order."""
    agent = make_agent(tmp_path / "ws")
    (agent.root / "MEMORY.md").write_text("# Memory\n\n- the heron visits at dawn\n")
    agent.memory.sync()
    stats = agent.store.stats()
    assert isinstance(stats, StoreStats)
    assert stats.files >= 1 and stats.chunks >= 1 and stats.embedded_chunks == 0  # keyword-only agent
    assert stats.extra == {"path": agent.store.location}
    assert list(stats.to_dict()) == [
        "files", "chunks", "vectors", "embedded_chunks", "dimensions", "cached_embeddings",
        "vector_backend", "text_backend", "schema_version", "bytes", "path"]
    st = agent.memory.status()
    assert (st.indexed_files, st.chunks, st.vector_backend) == (stats.files, stats.chunks, stats.vector_backend)
    agent.close()


def test_a_type_checker_catches_a_misspelt_name_in_host_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Session.main(chat_titel=...)`` or ``saved.paht`` in a host's code fails only when that
    line runs; the factories take the Session's fields by name and the memory upkeep calls
    return their own types, so mypy says it first."""
    api = pytest.importorskip("mypy.api")
    assert set(SessionFields.__annotations__) == {f.name for f in attrs.fields(Session)} - {"kind"}
    host = tmp_path / "host.py"
    host.write_text("from soulframe import Agent, Session\n\n"
                    "Session.group(chat_titel='Trip planning')\n"
                    "Session.main(user_id='alice', channel='telegram')\n"
                    "def upkeep(agent: Agent) -> None:\n"
                    "    print(agent.memory.save_session([]).paht, agent.memory.consolidate().stauts)\n"
                    "    agent.system_prompt(Session.main(), budget=2000)\n")
    # the host's view: this checkout's soulframe, none of the repository's mypy settings
    monkeypatch.setenv("MYPYPATH", str(Path(soulframe.__file__).parents[1]))
    out, _err, status = api.run(["--config-file", "", "--strict", "--no-incremental",
                                 "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent",
                                 "--python-executable", sys.executable, str(host)])
    assert status == 1
    assert 'host.py:3: error: Unexpected keyword argument "chat_titel" for "group" of "Session"; ' \
        'did you mean "chat_title"?' in out
    assert "host.py:4" not in out
    # what the memory upkeep calls return is typed too, not Any
    assert 'host.py:6: error: "SavedSession" has no attribute "paht"' in out
    assert 'host.py:6: error: "ConsolidationResult" has no attribute "stauts"' in out
    assert 'host.py:7: error: Unexpected keyword argument "budget" for "system_prompt" of "Agent"' in out
