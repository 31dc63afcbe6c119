"""The plugin on docs/plugins/minimal.md — a JSON-file store, a hash embedding provider and
a prompt section — is run here exactly as the page shows it: the page's plugin module is
loaded as ``my_memory`` and its test block (three contract suites of soulframe.testing) is
collected as this module's tests. Then the three together under one real agent, and a store
without per-user context files failing the store contract instead of crashing later."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from soulframe import ServesContextFiles, Session, SoulframeError
from soulframe.testing import Provides, check_sessions, make_agent, write_memory

pytest_plugins = ["pytester"]

PAGE = Path(__file__).resolve().parents[3] / "docs" / "plugins" / "minimal.md"
PLUGIN, TESTS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.M | re.S)

my_memory = types.ModuleType("my_memory")
my_memory.__file__ = str(PAGE)
sys.modules["my_memory"] = my_memory
exec(compile(PLUGIN, f"{PAGE}:plugin", "exec"), my_memory.__dict__)
exec(compile(TESTS, f"{PAGE}:tests", "exec"), globals())  # TestJsonStore, TestHashEmbeddings, ...


def test_the_page_runs_three_contract_suites() -> None:
    from soulframe import testing

    assert issubclass(globals()["TestJsonStore"], testing.StoreContract)
    assert issubclass(globals()["TestHashEmbeddings"], testing.EmbeddingProviderContract)
    assert issubclass(globals()["TestHouseholdSection"], testing.SectionContract)


def test_the_whole_plugin_in_main_group_and_per_user_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agent = make_agent(ws, plugins=[my_memory], store__backend="json", embedding__provider="hash")
    write_memory(ws)
    check_sessions(agent)
    assert agent.store.name == "json" and agent.embedder is not None and agent.embedder.name == "hash"
    assert Path(agent.store.location).is_file() and agent.store.stats().dimensions == 16
    assert "Bins go out on Tuesday" in agent.system_prompt(Session.main()).text
    assert "Bins go out on Tuesday" not in agent.system_prompt(Session.group()).text
    assert "Bins go out on Tuesday" in agent.system_prompt(Session.main(user_id="alice")).text
    assert (agent.state_dir / "users.json").stat().st_mode & 0o777 == 0o600


class NoUserFiles:
    """The page's store without ``context_files``: a store the shipped contract used to pass."""

    def __init__(self, path: Path) -> None:
        self.inner = my_memory.JsonStore(path)
        self.name, self.location = "no-user-files", str(path)

    def __getattr__(self, name: str):
        if name == "context_files":
            raise AttributeError(name)
        return getattr(self.inner, name)


def test_a_store_without_user_files_says_so_on_a_per_user_session(tmp_path: Path) -> None:
    from soulframe import Registration

    reg = Registration("bare", lambda agent: NoUserFiles(agent.state_dir / "bare.json"))
    agent = make_agent(tmp_path / "ws", plugins=[Provides(stores=[reg])], store__backend="bare")
    assert agent.system_prompt(Session.main()).text
    assert not isinstance(agent.store, ServesContextFiles)
    with pytest.raises(SoulframeError, match="no per-user context files.*ServesContextFiles"):
        agent.system_prompt(Session.main(user_id="alice"))


def test_the_store_contract_fails_a_store_without_user_files(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bare=f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import pytest
from soulframe.testing import StoreContract
from test_plugin_examples import NoUserFiles

class TestBare(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path):
        return lambda key="a": NoUserFiles(tmp_path / (key + ".json"))
""")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    # the memory index passes; the 8 per-user file tests and the sessions test do not
    broken = outcomes.get("failed", 0) + outcomes.get("errors", 0) + outcomes.get("error", 0)
    assert broken == 9 and outcomes.get("passed", 0) >= 15, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*has no context_files(agent): it cannot serve*"])
