"""`sandbox.access` is enforced (seed 002 "Sandbox-Aware Sections": workspace access none /
ro / rw; seed 003 §4.6: `workspaceAccess: "ro"` or `"none"` for untrusted runs): with `ro` or
`none` no tool that writes is offered, a call to one is refused and nothing changes on disk,
and the memory flush does not write."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, call, say
from soulframe import Agent, Session
from soulframe._engine.config import load_config
from soulframe._engine.tools import ToolError, dispatch
from soulframe._engine.workspace import seed_workspace
from soulframe_chat.models import build_chat_model
from soulframe_memory.flush import FlushSettings, maybe_flush, run_flush

WRITERS = {"context_write", "memory_remember"}


def sandboxed(ws: Path, access: str, **more: object) -> Agent:
    seed_workspace(ws)
    return Agent.open(ws, sandbox__enabled=True, sandbox__access=access, embedding__provider="none", **more)


@pytest.mark.parametrize("access", ["ro", "none"])
def test_write_tools_are_not_offered_and_refuse(workspace: Path, access: str) -> None:
    agent = sandboxed(workspace, access)
    offered = {t.name for t in agent.tools(Session.main())}
    assert not offered & WRITERS
    assert {"memory_search", "context_read"} <= offered
    prompt = agent.system_prompt(Session.main()).text
    assert "- context_write:" not in prompt and "- memory_remember:" not in prompt
    soul = (workspace / "SOUL.md").read_text()
    with pytest.raises(ToolError, match=f"sandbox.access = '{access}'"):
        dispatch(agent, "context_write", {"name": "SOUL.md", "content": "obey me"})
    with pytest.raises(ToolError, match="nothing was written"):
        dispatch(agent, "memory_remember", {"text": "x"})
    # even when a caller hands the full tool list over
    everything = Agent.open(workspace).tools(Session.main())
    with pytest.raises(ToolError, match="read-only|not mounted"):
        dispatch(agent, "context_write", {"name": "USER.md", "content": "x"}, tools=everything)
    assert (workspace / "SOUL.md").read_text() == soul
    assert not (workspace / "memory").exists() or not any((workspace / "memory").iterdir())


def test_read_write_sandbox_and_no_sandbox_offer_them(workspace: Path, tmp_path: Path) -> None:
    assert WRITERS <= {t.name for t in sandboxed(workspace, "rw").tools(Session.main())}
    plain = tmp_path / "plain"
    seed_workspace(plain)
    assert WRITERS <= {t.name for t in Agent.open(plain).tools(Session.main())}
    # an agent's options.sandbox table overrides the config
    opt = Agent.open(plain, sandbox__enabled=True, sandbox__access="rw")
    assert WRITERS <= {t.name for t in opt.tools(Session.main())}


def _model(srv: FakeLLMServer):  # type: ignore[no-untyped-def]
    return build_chat_model({"model": {"provider": "openai-compatible", "name": "m",
                                       "base_url": srv.openai_base_url, "api_key": "k", "max_retries": 0}})


def test_a_flush_in_a_read_only_sandbox_writes_nothing(workspace: Path, tmp_path: Path) -> None:
    agent = sandboxed(workspace, "ro", state_dir=str(tmp_path / "state"))
    write = call("write_file", path="memory/2026-11-21.md", content="- lives in Lisbon")
    with FakeLLMServer([write, say("NO_REPLY")]) as srv:
        result = run_flush(workspace, _model(srv), [{"role": "user", "content": "I moved to Lisbon"}],
                           settings=FlushSettings(), now=dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC),
                           agent=agent)
        offered = {t["function"]["name"] for t in srv.requests[0].json.get("tools", [])}
    assert "write_file" not in offered and "read_file" in offered
    assert result.written == ()
    assert result.refused and ("unknown tool" in result.refused[0] or "sandbox" in result.refused[0])
    assert not (workspace / "memory" / "2026-11-21.md").exists()
    from soulframe_memory.flush_tools import MemoryFiles, ToolRefused

    with pytest.raises(ToolRefused, match="read-only"):  # called anyway: refused
        MemoryFiles(workspace, access="ro").write("MEMORY.md", "x")
    assert "x" not in (workspace / "MEMORY.md").read_text()


def test_the_pre_compaction_flush_is_skipped_with_the_reason(workspace: Path, tmp_path: Path) -> None:
    seed_workspace(workspace)
    with FakeLLMServer() as srv:
        config = load_config(search=False, workspace=workspace, overrides={
            "state_dir": str(tmp_path / "s"), "sandbox.enabled": True, "sandbox.access": "none",
            "model.provider": "openai-compatible", "model.name": "m", "model.base_url": srv.openai_base_url,
            "model.context_window": 100_000})
        result = maybe_flush(Agent(config), Session.main(),
                             {"total_tokens": 99_000, "messages": [{"role": "user", "content": "hi"}]})
    assert not result.ran and "not mounted" in result.status
    assert srv.requests == []
