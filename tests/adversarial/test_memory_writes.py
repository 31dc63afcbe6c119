"""Poisoning memory: every injection string and secret of the write-safety corpus, sent
through the tools an agent writes with (memory_remember, context_write), must be refused and
must not reach the next system prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.model import Session
from soulframe._engine.tools import ToolError, dispatch

CORPUS = Path(__file__).resolve().parents[1] / "data" / "write_safety" / "corpus.jsonl"
HOSTILE = [json.loads(x) for x in CORPUS.read_text().splitlines() if x.strip()]
# the held-apart part measures the detector on text it was not tuned on (tests/core/memory/test_write_safety.py
# reports its misses); every other hostile row must be refused
HOSTILE = [r["text"] for r in HOSTILE if r["label"] != "benign" and r.get("split") != "held"]


@pytest.fixture
def agent(workspace: Path, tmp_path: Path) -> Agent:
    (workspace / "USER.md").write_text("# USER\nName: Priya\n")
    return Agent(load_config(search=False, workspace=workspace, overrides={
        "embedding.provider": "none", "state_dir": str(tmp_path / "state")}))


def test_hostile_notes_never_reach_the_prompt(adversary, agent: Agent) -> None:
    for text in HOSTILE:
        for tool, args in (("memory_remember", {"text": text}),
                           ("context_write", {"name": "USER.md", "content": f"# USER\nName: Priya\n{text}\n"})):
            with adversary.attempt(f"{tool}: {text[:40]}") as a:
                try:
                    dispatch(agent, tool, args, session=Session.main())
                    a.refused(False)
                except ToolError as exc:
                    a.refused("refused to write" in str(exc))
                prompt = agent.system_prompt(Session.main()).text
                a.leaked(text in prompt or " ".join(text.split()) in prompt)
