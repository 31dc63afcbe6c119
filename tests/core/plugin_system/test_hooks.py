"""One test per hook (``test_hook_<name>``): a third-party implementation, registered beside
soulframe's own plugins, takes effect through the public API. A meta-test keeps the list
complete, as datasette's test_plugin_hooks_have_tests does."""

from __future__ import annotations

import hashlib
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from soulframe import (
    Chunk,
    ContextFile,
    Registration,
    Section,
    Session,
    SkillSource,
    ToolSpec,
    hookimpl,
    hookspecs,
)
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.model import CHAT_MODELS, STORES, WorkspaceTemplate
from soulframe._engine.plugins import make_plugin_manager
from soulframe._engine.tools import dispatch
from soulframe._engine.workspace import seed_workspace
from soulframe.cli import build_cli


def agent_with(workspace: Path, plugin: Any, **overrides: Any) -> Agent:
    overrides.setdefault("embedding.provider", "none")
    pm = make_plugin_manager(plugins=[plugin])
    cfg = load_config(search=False, workspace=workspace, overrides=overrides, pm=pm)
    return Agent(cfg, pm=pm)


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "SOUL.md").write_text("# SOUL\nFirst line of the soul.\nSecond line of the soul.\n")
    (workspace / "AGENTS.md").write_text("# AGENTS\nKeep notes in memory/.\n")
    return workspace


def test_every_hook_has_a_test() -> None:
    tested = {name[len("test_hook_"):] for name in globals() if name.startswith("test_hook_")}
    assert tested == set(hookspecs.HOOK_NAMES)


def test_hook_register_prompt_sections(ws: Path) -> None:
    class P:
        __name__ = "weather"

        @hookimpl
        def register_prompt_sections(self):
            return [Section(name="weather", order=8.6, zone="dynamic", render=lambda ctx: "## Weather\nSunny.")]

    prompt = agent_with(ws, P()).system_prompt(Session.main())
    assert "## Weather\nSunny." in prompt.dynamic_suffix
    orders = {s.name: s.order for s in prompt.sections}
    after_time = [n for n, o in sorted(orders.items(), key=lambda kv: kv[1]) if 8 < o < 9]
    assert after_time[-1] == "weather"  # after time (8) and the example's quiet hours (8.5)


def test_hook_register_context_sources(ws: Path) -> None:
    class Source:
        name = "notes"

        def load(self, agent, session):
            return [ContextFile(name="NOTES.md", content="Standup moved to 09:30.", source="notes")]

    class P:
        __name__ = "notes"

        @hookimpl
        def register_context_sources(self):
            return [Registration("notes", factory=lambda agent: Source())]

    text = agent_with(ws, P()).system_prompt(Session.main()).text
    assert "Standup moved to 09:30." in text and "NOTES.md" in text


def test_hook_transform_context_files(ws: Path) -> None:
    class P:
        __name__ = "shouty"

        @hookimpl
        def transform_context_files(self, files):
            return [f if f.name != "SOUL.md" else ContextFile(name=f.name, content=f.content.upper(),
                                                                source=f.source, path=f.path)
                    for f in files]

    text = agent_with(ws, P()).system_prompt(Session.main()).text
    assert "FIRST LINE OF THE SOUL." in text
    assert (ws / "SOUL.md").read_text().startswith("# SOUL\nFirst")  # in memory only


def test_hook_register_workspace_templates(tmp_path: Path) -> None:
    class P:
        __name__ = "house-style"

        @hookimpl
        def register_workspace_templates(self):
            return [WorkspaceTemplate(name="STYLE.md", content="# House style\nShort sentences.\n")]

    created = seed_workspace(tmp_path / "new", pm=make_plugin_manager(plugins=[P()]))
    assert "STYLE.md" in created and "SOUL.md" in created
    assert (tmp_path / "new" / "STYLE.md").read_text().startswith("# House style")


def test_hook_workspace_initialized(tmp_path: Path) -> None:
    seen: list[tuple[Path, bool]] = []

    class P:
        __name__ = "fetcher"

        @hookimpl
        def workspace_initialized(self, root, download, echo):
            seen.append((root, download))
            echo("fetcher: ready")

    cli = build_cli(make_plugin_manager(plugins=[P()], load_entrypoints=False))
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "agent")])
    assert result.exit_code == 0, result.output
    assert seen == [((tmp_path / "agent").resolve(), True)]
    assert "fetcher: ready" in result.output
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "agent"), "--no-download"])
    assert seen[-1] == ((tmp_path / "agent").resolve(), False)


def test_hook_register_truncation_policies(ws: Path) -> None:
    class FirstLines:
        name = "first-lines"

        def truncate_files(self, files, config):
            return [ContextFile(name=f.name, content=f.content.splitlines()[0] if f.content else "",
                                source=f.source, path=f.path, truncated=True) for f in files], []

        def enforce_budget(self, sections, budget_tokens, estimate):
            return list(sections), []

    class P:
        __name__ = "first-lines"

        @hookimpl
        def register_truncation_policies(self):
            return [Registration("first-lines", factory=lambda agent: FirstLines())]

    text = agent_with(ws, P(), **{"bootstrap.truncation": "first-lines"}).system_prompt(Session.main()).text
    assert "Second line of the soul." not in text


def test_hook_register_token_estimators(ws: Path) -> None:
    class P:
        __name__ = "words"

        @hookimpl
        def register_token_estimators(self):
            return [Registration("words", factory=lambda agent: lambda text: len(text.split()))]

    prompt = agent_with(ws, P(), **{"prompt.tokenizer": "words"}).system_prompt(Session.main())
    for s in prompt.sections:
        assert s.tokens == len(s.text.split()), s.name


def test_hook_register_stores(ws: Path) -> None:
    opened: list[str] = []

    class P:
        __name__ = "mirror"

        @hookimpl
        def register_stores(self):
            def factory(agent):
                opened.append(agent.id)
                return agent.registry(STORES)["sqlite"].factory(agent)

            return [Registration("mirror", factory=factory, description="sqlite, counted")]

    (ws / "MEMORY.md").write_text("# Memory\n- The boiler was serviced in March.\n")
    agent = agent_with(ws, P(), **{"store.backend": "mirror"})
    hits = agent.memory.search("boiler serviced")
    assert opened == ["default"] and hits and hits[0].path == "MEMORY.md"


class ToyEmbedder:
    """Hashed bag of words: deterministic, no model, enough to show the provider is used."""

    name = "toy"
    model_id = "toy-64"
    dimensions = 64

    def available(self) -> bool:
        return True

    def _one(self, text: str):
        import numpy as np

        v = np.zeros(self.dimensions, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            v[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_documents(self, texts):
        import numpy as np

        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, 64), np.float32)

    def embed_query(self, text):
        return self._one(text)


def test_hook_register_embedding_providers(ws: Path) -> None:
    class P:
        __name__ = "toy"

        @hookimpl
        def register_embedding_providers(self):
            return [Registration("toy", factory=lambda agent: ToyEmbedder())]

    (ws / "MEMORY.md").write_text("# Memory\n- Ferns need indirect light.\n")
    agent = agent_with(ws, P(), **{"embedding.provider": "toy"})
    hits = agent.memory.search("ferns light")
    assert hits and hits[0].vector_score is not None
    assert agent.memory.status().model == "toy-64"


def test_hook_memory_indexed(ws: Path) -> None:
    reports: list[Any] = []

    class P:
        __name__ = "audit"

        @hookimpl
        def memory_indexed(self, agent, report):
            reports.append(report)

    (ws / "MEMORY.md").write_text("# Memory\n- Passport expires 2031.\n")
    agent_with(ws, P()).memory.sync()
    assert reports and reports[-1].changed_anything


def test_hook_register_chunkers(ws: Path) -> None:
    class OneLine:
        name = "one-line"

        def chunk(self, text: str, path: str) -> list[Chunk]:
            return [Chunk(path, i, i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]

    class P:
        __name__ = "line-chunker"

        @hookimpl
        def register_chunkers(self):
            return [Registration(name="one-line", factory=lambda agent: OneLine())]

    (ws / "MEMORY.md").write_text("# Memory\n- Passport expires 2031.\n- Locker code is 4412.\n")
    # memory.hit_chars = 0: a hit cites its chunk alone, not the lines around it
    agent = agent_with(ws, P(), **{"memory.chunker": "one-line", "memory.hit_chars": 0})
    agent.memory.sync()
    hit = agent.memory.search("locker code")[0]
    assert (hit.start_line, hit.end_line) == (3, 3)  # the default would cut one chunk, L1-L3
    default = agent_with(ws, P())
    assert default.memory.search("locker code")[0].start_line == 1


def test_hook_register_rerankers(ws: Path) -> None:
    class Reverse:
        name = "reverse"

        def rerank(self, query: str, candidates: list[Any]) -> list[float]:
            return [1.0 - i / len(candidates) for i in reversed(range(len(candidates)))]

    class P:
        __name__ = "reverser"

        @hookimpl
        def register_rerankers(self):
            return [Registration(name="reverse", factory=lambda agent: Reverse())]

    mem = ws / "memory"
    mem.mkdir()
    (mem / "2026-01-01.md").write_text("# 2026-01-01\n- The boiler was serviced; the boiler is fine.\n")
    (mem / "2026-01-02.md").write_text("# 2026-01-02\n- Walked past the boiler shop.\n")
    plain = [h.path for h in agent_with(ws, P(), **{"memory.min_score": 0.0}).memory.search("boiler")]
    hits = agent_with(ws, P(), **{"memory.reranker": "reverse", "memory.min_score": 0.0}).memory.search("boiler")
    assert [h.path for h in hits] == plain[::-1]
    assert all(h.rerank_score is not None for h in hits)
    assert "rerank_score" in hits[0].to_dict()


def test_hook_register_config_keys(ws: Path) -> None:
    from soulframe._engine.config import K
    from soulframe._engine.model import ConfigError

    class P:
        __name__ = "weather"

        @hookimpl
        def register_config_keys(self):
            return {"weather.city": K("Oslo", "city to report"), "weather.days": K(3, "days ahead", min=1, max=14)}

    agent = agent_with(ws, P())
    assert agent.config.get("weather.city") == "Oslo"
    assert agent_with(ws, P(), **{"weather.days": 7}).config.get("weather.days") == 7
    with pytest.raises(ConfigError, match=r"weather\.days = 30 — expected a number ≤ 14"):
        agent_with(ws, P(), **{"weather.days": 30})
    (ws / "soulframe.toml").write_text('[weather]\ncity = "Bergen"\ndays = "many"\n')
    pm = make_plugin_manager(plugins=[P()])
    with pytest.raises(ConfigError, match=r"soulframe\.toml line 3: weather\.days .* expected int"):
        load_config(workspace=ws, pm=pm)


def test_hook_register_doctor_checks(ws: Path) -> None:
    from soulframe._engine.cli.doctor import run_checks
    from soulframe._engine.model import Finding

    def forecast(agent: Agent) -> list[Finding]:
        return [Finding("weather", "warning", "no forecast for today")]

    class P:
        __name__ = "weather"

        @hookimpl
        def register_doctor_checks(self):
            return [forecast]

    findings = run_checks(agent_with(ws, P()))
    assert Finding("weather", "warning", "no forecast for today") in findings


def test_hook_register_skill_sources(ws: Path, tmp_path: Path) -> None:
    team = tmp_path / "team-skills" / "deploy"
    team.mkdir(parents=True)
    (team / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy the app to staging\n---\nRun make deploy.\n")

    class P:
        __name__ = "team-skills"

        @hookimpl
        def register_skill_sources(self, agent):
            return [SkillSource(name="team", tier=4, root=tmp_path / "team-skills")]

    agent = agent_with(ws, P())
    assert agent.skills.get("deploy").tier_name == "team"
    assert "Deploy the app to staging" in agent.system_prompt(Session.main()).text


def test_hook_register_tools(ws: Path) -> None:
    class P:
        __name__ = "dice"

        @hookimpl
        def register_tools(self):
            return [ToolSpec(name="roll_die", description="Roll a die with N sides.",
                             parameters={"type": "object", "properties": {"sides": {"type": "integer", "minimum": 2}},
                                         "required": ["sides"]},
                             handler=lambda ctx, args: {"rolled": args["sides"]})]

    agent = agent_with(ws, P())
    assert dispatch(agent, "roll_die", '{"sides": 6}') == {"rolled": 6}
    assert "roll_die" in agent.system_prompt(Session.main()).text


def test_hook_register_chat_models(ws: Path) -> None:
    class Echo:
        name = "echo"
        model_id = "echo-1"

        def chat(self, messages, *, tools=(), timeout=None):
            raise AssertionError("not called here")

    class P:
        __name__ = "echo"

        @hookimpl
        def register_chat_models(self):
            return [Registration("echo", factory=lambda agent: Echo())]

    agent = agent_with(ws, P(), **{"model.provider": "echo"})
    model = agent.select(CHAT_MODELS).factory(agent)
    assert model.model_id == "echo-1"


def test_hook_register_commands(ws: Path) -> None:
    class P:
        __name__ = "hello"

        @hookimpl
        def register_commands(self, cli):
            @cli.command("hello")
            def hello():
                """Say hello."""
                import click

                click.echo("hello from a plugin")

    cli = build_cli(make_plugin_manager(plugins=[P()]))
    result = CliRunner().invoke(cli, ["-w", str(ws), "hello"])
    assert result.exit_code == 0 and result.output == "hello from a plugin\n"


def test_hook_prompt_built(ws: Path) -> None:
    seen: list[Any] = []

    class P:
        __name__ = "observer"

        @hookimpl
        def prompt_built(self, agent, prompt):
            seen.append(prompt)

    prompt = agent_with(ws, P()).system_prompt(Session.subagent())
    assert seen == [prompt] and seen[0].mode == "minimal"


def test_hook_before_compaction(ws: Path) -> None:
    calls: list[tuple[str, Any]] = []

    class P:
        __name__ = "observer"

        @hookimpl
        def before_compaction(self, agent, session, usage):
            calls.append((session.kind, usage))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no chat model is configured: the flush plugin says so
        agent_with(ws, P()).before_compaction(Session.main(), {"total_tokens": 10, "context_window": 100})
    assert calls == [("main", {"total_tokens": 10, "context_window": 100})]


def test_hook_session_ended(ws: Path) -> None:
    calls: list[tuple[str, Any]] = []

    class P:
        __name__ = "observer"

        @hookimpl
        def session_ended(self, agent, session, messages):
            calls.append((session.kind, messages))

    talk = [{"role": "user", "content": "Book the dentist for Tuesday."},
            {"role": "assistant", "content": "Booked Dr. Weber, Tuesday 9:00."}]
    agent = agent_with(ws, P())
    agent.end_session(Session.main(), talk)
    assert calls == [("main", talk)]
    # soulframe's own memory plugin saved the conversation too (a main session's: private
    # memory, in sessions/), and search finds it
    saved = list((ws / "sessions").glob("*-book-the-dentist*.md"))
    assert len(saved) == 1 and "Dr. Weber, Tuesday 9:00" in saved[0].read_text()
    assert agent.memory.search("dentist appointment", min_score=0)[0].path == saved[0].relative_to(ws).as_posix()


def test_a_session_that_cannot_be_saved_is_a_warning_and_every_observer_is_told(ws: Path) -> None:
    """A disk error saving the conversation (here ``sessions`` is a file) came out of
    ``end_session`` as a bare OSError: the host's reset failed, and the plugins after the
    memory plugin were never told the session ended."""
    from soulframe import SoulframeWarning

    told: list[str] = []

    class P:
        __name__ = "observer"

        @hookimpl(trylast=True)
        def session_ended(self, session):
            told.append(session.kind)

    (ws / "sessions").write_text("not a directory\n")
    talk = [{"role": "user", "content": "Book the dentist for Tuesday."}]
    with pytest.warns(SoulframeWarning, match=r"^session not saved: \[Errno 20\] Not a directory: .*sessions"):
        agent_with(ws, P()).end_session(Session.main(), talk)
    assert told == ["main"]


def test_a_conversation_in_any_shape_a_host_keeps_is_saved_or_said_not_to_be(ws: Path) -> None:
    """The memory plugin skipped, without a word, a conversation it did not see as a list of
    dicts: the request body a host keeps (``{"messages": [...]}``), a generator (which it also
    used up, for every plugin after it) and SDK message objects were all lost silently."""
    import warnings

    from soulframe import SoulframeWarning

    seen: list[list[Any]] = []

    class P:
        __name__ = "observer"

        @hookimpl(trylast=True)
        def session_ended(self, messages):
            seen.append(list(messages))

    agent = agent_with(ws, P())
    agent.end_session(Session.main(), {"messages": [{"role": "user", "content": "The boat is called Heron."}]})
    agent.end_session(Session.main(), ({"role": "user", "content": f"Paddle number {i}."} for i in range(2)))
    saved = {p.name[len("YYYY-MM-DD-"):] for p in (ws / "sessions").glob("*.md")}
    assert saved == {"the-boat-is-called-heron.md", "paddle-number-0.md"}
    assert len(seen[1]) == 2  # the generator reached the later plugin whole

    class SdkMessage:
        role, content = "user", "from an SDK object"

    with pytest.warns(SoulframeWarning, match=r"^session not saved: message 1: expected an object with role"):
        agent.end_session(Session.main(), [SdkMessage()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing said, nothing to keep, nothing to warn about
        agent.end_session(Session.main(), [{"role": "system", "content": "You are Aria."}])
        agent.end_session(Session.main(), [])


def test_every_registry_calls_its_factory_with_the_agent(ws: Path) -> None:
    """One registration factory signature: ``factory(agent)``, whichever registry."""
    seen: dict[str, Any] = {}

    def made(kind: str, result: Any) -> Any:
        def factory(agent: Any) -> Any:
            seen[kind] = agent
            return result
        return factory

    class Toy:
        name = "toy"
        dimensions = 3
        model_id = "toy"

        def available(self) -> bool:
            return True

        # the protocol's methods, so the built provider passes its check; this test only
        # asks which factories were called, and embeds nothing
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            raise AssertionError("not called: the test embeds nothing")

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            raise AssertionError("not called: the test embeds nothing")

        # and every other registry's protocol: each built object is checked against its own
        truncate_files = enforce_budget = chunk = rerank = chat = load = embed_query

    class P:
        __name__ = "everything"

        @hookimpl
        def register_truncation_policies(self):
            return [Registration("toy", made("truncation", Toy()))]

        @hookimpl
        def register_token_estimators(self):
            return [Registration("toy", made("tokens", len))]

        @hookimpl
        def register_embedding_providers(self):
            return [Registration("toy", made("embedding", Toy()))]

        @hookimpl
        def register_chat_models(self):
            return [Registration("toy", made("chat", Toy()))]  # a chat model has a name and model_id

        @hookimpl
        def register_chunkers(self):
            return [Registration("toy", made("chunker", Toy()))]

        @hookimpl
        def register_rerankers(self):
            return [Registration("toy", made("reranker", Toy()))]

        @hookimpl
        def register_stores(self):
            return [Registration("toy", made("store", object()))]

        @hookimpl
        def register_context_sources(self):
            return [Registration("toy", made("context", Toy()))]

    from soulframe._engine.memory.pipeline import chunker, reranker
    from soulframe._engine.prompt.context import sources, truncation_policy
    from soulframe._engine.prompt.tokens import get_estimator
    from soulframe._engine.toolloop import chat_model_for

    agent = agent_with(ws, P(), **{
        "bootstrap.truncation": "toy", "prompt.tokenizer": "toy", "embedding.provider": "toy",
        "model.provider": "toy", "memory.chunker": "toy", "memory.reranker": "toy",
        "store.backend": "toy"})
    truncation_policy(agent), get_estimator(agent), agent.embedder, chat_model_for(agent)
    chunker(agent), reranker(agent), sources(agent)
    from soulframe._engine.model import SoulframeError

    with pytest.raises(SoulframeError, match=r"store 'toy' \(plugin everything\) built a object, which lacks check"):
        agent.store  # noqa: B018 - built with the agent, then checked against the Store protocol
    assert set(seen) == {"truncation", "tokens", "embedding", "chat", "chunker", "reranker",
                         "store", "context"}
    assert all(a is agent for a in seen.values())
