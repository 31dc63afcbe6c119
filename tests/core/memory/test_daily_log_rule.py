"""Daily logs follow one rule everywhere (seed 003 §1.2: the daily episodic log is read in
"every session (today + yesterday)", MEMORY.md in the "main/private session only"; §6.4):
the prompt, the memory tools, the MCP resources and the seeded AGENTS.md agree that a group
session reads today's log and never MEMORY.md."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from conftest import run_cli
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from soulframe import Agent, Session
from soulframe._engine.tools import ToolError, dispatch

DAILY_NOTE = "Standup moved to 10:15 for the whole studio."
CURATED_NOTE = "Alice's passport number ends in 4471."


@pytest.fixture
def ws(workspace: Path) -> Path:
    run_cli("init", str(workspace), check=True)
    today = dt.date.today().isoformat()
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / f"{today}.md").write_text(f"# {today}\n\n- {DAILY_NOTE}\n")
    (workspace / "MEMORY.md").write_text(f"# MEMORY.md\n\n- {CURATED_NOTE}\n")
    return workspace


def group() -> Session:
    return Session.group(channel="discord", chat_title="studio")


def test_prompt_group_session_reads_todays_log_not_memory(ws: Path) -> None:
    text = Agent.open(ws).system_prompt(group()).text
    assert DAILY_NOTE in text
    assert CURATED_NOTE not in text


def test_tools_group_session_finds_the_log_and_is_refused_memory(ws: Path) -> None:
    agent = Agent.open(ws, embedding__provider="none")
    found = dispatch(agent, "memory_search", {"query": "standup studio"}, session=group())
    assert DAILY_NOTE in json.dumps(found)
    today = dt.date.today().isoformat()
    got = dispatch(agent, "memory_get", {"path": f"memory/{today}.md"}, session=group())
    assert DAILY_NOTE in json.dumps(got)
    assert CURATED_NOTE not in json.dumps(dispatch(agent, "memory_search", {"query": "passport"}, session=group()))
    with pytest.raises(ToolError, match="private"):
        dispatch(agent, "memory_get", {"path": "MEMORY.md"}, session=group())


def test_mcp_resources_of_a_group_session_serve_the_log_not_memory(ws: Path) -> None:
    today = dt.date.today().isoformat()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "soulframe", "-w", str(ws), "serve", "--session", "group"],
        env=dict(os.environ),
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert f"memory://memory/{today}.md" in uris
            assert not uris & {"soulframe://workspace/MEMORY.md", "memory://MEMORY.md"}
            read = await client.read_resource(f"memory://memory/{today}.md")
            assert DAILY_NOTE in read.contents[0].text

    anyio.run(main)


def test_the_seeded_agents_md_states_the_same_rule(ws: Path) -> None:
    text = (ws / "AGENTS.md").read_text()
    assert "Daily notes are private" not in text
    assert "loaded in every session" in text and "group chats included" in text
    assert "`MEMORY.md` is loaded only in the main, private session" in text
