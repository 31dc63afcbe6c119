"""`soulframe serve` as MCP clients meet it: the SDK's own client, talking to the server in
a subprocess over stdio and over stateless streamable HTTP on 127.0.0.1, in both protocol
revisions the SDK speaks (2025-11-25 with its handshake, 2026-07-28 without)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from conftest import run_cli
from mcp import Client
from mcp_servers import (
    MEMORY_NOTE,
    REVISIONS,
    client,
    http_server,
    make_workspace,
    stdio_params,
    text_of,
)


@pytest.fixture
def served_workspace(workspace: Path) -> Path:
    return make_workspace(workspace)


async def exercise(client: Client, workspace: Path) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"memory_search", "memory_get", "memory_remember", "skill_search", "skill_read"} <= set(tools)
    assert tools["memory_search"].input_schema["type"] == "object"

    found = await client.call_tool("memory_search", {"query": "screenshot appearance"})
    assert not found.is_error, text_of(found)
    hits = json.loads(text_of(found))
    hits = hits["results"] if isinstance(hits, dict) else hits
    assert hits and hits[0]["path"] == "MEMORY.md"
    # the same hits, typed, beside the text a host shows
    assert found.structured_content["results"] == hits

    got = await client.call_tool("memory_get", {"path": "MEMORY.md"})
    assert not got.is_error and MEMORY_NOTE in text_of(got)

    saved = await client.call_tool("memory_remember", {"text": "Ships on Fridays are banned."})
    assert not saved.is_error, text_of(saved)
    logs = list((workspace / "memory").glob("*.md"))
    assert any("Ships on Fridays are banned." in p.read_text() for p in logs)
    # the path it names is one memory_get reads back
    where = json.loads(text_of(saved))["path"]
    assert where.startswith("memory/") and where.endswith(".md")
    back = await client.call_tool("memory_get", {"path": where})
    assert "Ships on Fridays are banned." in text_of(back)

    skills = await client.call_tool("skill_search", {"query": "release notes for merged pull requests"})
    assert not skills.is_error and "release-notes" in text_of(skills)
    read = await client.call_tool("skill_read", {"name": "release-notes"})
    assert not read.is_error and f"{(workspace / 'skills' / 'release-notes').resolve()}/template.md" in text_of(read)

    # bad arguments: a tool error the client shows, never a crashed server
    bad = await client.call_tool("memory_search", {"qeury": "typo"})
    assert bad.is_error and "query" in text_of(bad)
    # a path outside the workspace is refused, and nothing of the file comes back
    for outside in ("../secret.txt", "memory/../../secret.txt", str(workspace.parent / "secret.txt"), "/etc/passwd"):
        bad = await client.call_tool("memory_get", {"path": outside})
        assert bad.is_error, outside
        assert "not allowed" in text_of(bad) and "outside the workspace" not in text_of(bad), text_of(bad)
    bad = await client.call_tool("memory_get", {"path": "SOUL.md"})  # in the workspace, not memory
    assert bad.is_error and "not a memory file" in text_of(bad)
    # huge arguments: refused by the schema, nothing written to the daily log
    before = sorted(p.read_text() for p in (workspace / "memory").glob("*.md"))
    bad = await client.call_tool("memory_remember", {"text": "x" * 500_000})
    assert bad.is_error and "over the limit" in text_of(bad)
    bad = await client.call_tool("memory_remember", {"text": "   "})
    assert bad.is_error and "empty" in text_of(bad)
    assert sorted(p.read_text() for p in (workspace / "memory").glob("*.md")) == before
    bad = await client.call_tool("memory_search", {"query": 42})
    assert bad.is_error and "expected string" in text_of(bad)
    bad = await client.call_tool("no_such_tool", {})
    assert bad.is_error and "unknown tool" in text_of(bad)

    # still serving after the failures
    again = await client.call_tool("memory_search", {"query": "dark mode"})
    assert not again.is_error

    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["system_prompt"]
    prompt = await client.get_prompt("system_prompt", {"mode": "full", "channel": "telegram"})
    text = prompt.messages[0].content.text
    assert "Be warm, brief and exact." in text
    sub = await client.get_prompt("system_prompt", {"session": "subagent"})
    assert "Be warm, brief and exact." not in sub.messages[0].content.text

    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert "soulframe://workspace/SOUL.md" in resources
    soul = await client.read_resource("soulframe://workspace/SOUL.md")
    assert "Be warm, brief and exact." in soul.contents[0].text
    with pytest.raises(Exception, match="not a served resource"):
        await client.read_resource("soulframe://workspace/../secret.txt")


def test_serve_help_names_every_tool_it_serves(workspace: Path) -> None:
    """`serve --help` is where a user setting up a host learns what the agent offers: it
    left out context_read and context_write, which a main session's server serves."""
    from soulframe import Agent, Session

    served = {t.name for t in Agent.open(workspace, embedding__provider="none").tools(Session.main())}
    out = run_cli("serve", "--help", check=True).stdout
    assert served and not [name for name in sorted(served) if name not in out]
    assert "VS Code" in out


@pytest.mark.parametrize("revision", list(REVISIONS))
def test_stdio_server_with_the_sdk_client(served_workspace: Path, revision: str) -> None:
    async def main() -> None:
        async with client(stdio_params(served_workspace), revision) as c:
            assert c.protocol_version == revision
            await exercise(c, served_workspace)

    anyio.run(main)


def test_serve_indexes_memory_before_the_first_query(served_workspace: Path) -> None:
    # a long-lived server warms up in the background: index synced (and the model loaded)
    # while the client has not asked anything yet
    import sqlite3

    state = Path(os.environ["HOME"]) / ".soulframe" / "state" / "memory"

    def indexed() -> list[str]:
        for db in state.glob("*.sqlite"):
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    return [r[0] for r in conn.execute("SELECT path FROM files")]
            except sqlite3.Error:
                return []
        return []

    async def main() -> None:
        async with Client(stdio_params(served_workspace), read_timeout_seconds=120):
            for _ in range(600):
                if "MEMORY.md" in indexed():
                    return
                await anyio.sleep(0.1)

    anyio.run(main)
    assert "MEMORY.md" in indexed()


def test_remember_can_be_turned_off(served_workspace: Path) -> None:
    async def main() -> None:
        async with Client(stdio_params(served_workspace, "--no-remember"), read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "memory_remember" not in names and "memory_search" in names
            refused = await client.call_tool("memory_remember", {"text": "x"})
            assert refused.is_error

    anyio.run(main)


def test_read_only_serves_no_tool_that_writes(served_workspace: Path) -> None:
    soul = (served_workspace / "SOUL.md").read_text()

    async def main() -> None:
        async with Client(stdio_params(served_workspace, "--read-only"), read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert not names & {"memory_remember", "context_write"}
            assert {"memory_search", "memory_get", "context_read", "skill_search"} <= names
            refused = await client.call_tool("context_write", {"name": "SOUL.md", "content": "obey me"})
            assert refused.is_error

    anyio.run(main)
    assert (served_workspace / "SOUL.md").read_text() == soul


def test_group_session_never_serves_private_memory(served_workspace: Path) -> None:
    async def main() -> None:
        async with Client(stdio_params(served_workspace, "--session", "group"), read_timeout_seconds=120) as client:
            found = await client.call_tool("memory_search", {"query": "screenshot appearance"})
            assert MEMORY_NOTE not in text_of(found)
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            assert "soulframe://workspace/MEMORY.md" not in resources

    anyio.run(main)


def test_a_sub_agent_server_never_widens_the_prompt_mode(served_workspace: Path) -> None:
    """A sub-agent's prompt runs minimal; a client asking for full mode would get the owner's
    ids (full mode's user identity section): the mode argument may only narrow."""
    toml = served_workspace / "soulframe.toml"
    toml.write_text((toml.read_text() if toml.exists() else "")
                    + '\n[[agents]]\nid = "main"\nowner_ids = ["owner-7781"]\n')

    async def main() -> None:
        async with Client(stdio_params(served_workspace, "--session", "subagent"),
                          read_timeout_seconds=120) as client:
            with pytest.raises(Exception, match="may only narrow that, to minimal, none"):
                await client.get_prompt("system_prompt", {"mode": "full"})
            with pytest.raises(Exception, match="may only narrow"):
                await client.get_prompt("system_prompt", {"mode": "task"})
            for mode in ("minimal", "none", ""):
                prompt = await client.get_prompt("system_prompt", {"mode": mode} if mode else {})
                assert "owner-7781" not in prompt.messages[0].content.text
        async with Client(stdio_params(served_workspace), read_timeout_seconds=120) as client:
            full = await client.get_prompt("system_prompt", {"session": "subagent", "mode": "full"})
            assert "owner-7781" in full.messages[0].content.text  # the main server's to give

    anyio.run(main)


@pytest.mark.parametrize("revision", list(REVISIONS))
def test_stateless_http_with_the_sdk_client(served_workspace: Path, revision: str) -> None:
    with http_server(served_workspace) as server:
        async def main() -> None:
            async with client(server, revision) as c:
                assert c.protocol_version == revision
                await exercise(c, served_workspace)

        anyio.run(main)


def test_remember_for_a_user_goes_to_that_users_memory(served_workspace: Path) -> None:
    from soulframe._engine.agent import Agent
    from soulframe._engine.model import Session
    from soulframe._engine.tools import dispatch

    agent = Agent.open(served_workspace, embedding__provider="none")
    saved = dispatch(agent, "memory_remember", {"text": "Alice takes her tea without sugar."},
                     session=Session.main(user_id="alice"))
    assert saved["scope"] == "user"
    # not written where every other user's session could read it
    assert not any("without sugar" in p.read_text() for p in (served_workspace / "memory").glob("*.md"))
    hits = agent.memory.search("how does alice take tea", session=Session.main(user_id="alice"))
    assert hits and "without sugar" in hits[0].snippet
    others = agent.memory.search("how does alice take tea", session=Session.main(user_id="bob"))
    assert not any("without sugar" in h.snippet for h in others)


def test_a_plugins_tool_is_served_and_its_failures_are_tool_errors(served_workspace: Path) -> None:
    """Every tool comes from the tools hook: a third-party plugin's tool is listed and called;
    a handler that crashes is a tool error, and the server goes on serving."""
    from soulframe import ToolSpec, hookimpl
    from soulframe._engine.agent import Agent
    from soulframe_mcp.server import build_server

    rolls: list[int] = []

    def roll(ctx, args):
        if args["sides"] == 13:
            raise RuntimeError("unlucky die")
        rolls.append(args["sides"])
        return [args["sides"]]  # not a dict: still JSON for the client

    class Dice:
        @hookimpl
        def register_tools(self):
            return [ToolSpec(name="roll_die", description="Roll a die with N sides.",
                             parameters={"type": "object", "properties": {"sides": {"type": "integer", "minimum": 2}},
                                         "required": ["sides"], "additionalProperties": False},
                             handler=roll)]

    agent = Agent.open(served_workspace, embedding__provider="none")
    agent.pm.register(Dice(), name="dice")

    async def main() -> None:
        async with Client(build_server(agent)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["roll_die"].input_schema["required"] == ["sides"]
            rolled = await client.call_tool("roll_die", {"sides": 6})
            assert not rolled.is_error and json.loads(text_of(rolled)) == [6]
            crashed = await client.call_tool("roll_die", {"sides": 13})
            assert crashed.is_error and "unlucky die" in text_of(crashed)
            bad = await client.call_tool("roll_die", {"sides": 1})
            assert bad.is_error and "minimum" in text_of(bad)
            again = await client.call_tool("roll_die", {"sides": 20})
            assert not again.is_error

    anyio.run(main)
    assert rolls == [6, 20]
    agent.close()


@pytest.mark.parametrize(("field", "value", "said"), [
    ("parameters", "sides: int", "parameters must be a JSON Schema of type object"),
    ("name", "roll die", "name must be 1 to 64 letters, digits, _ or -"),
    ("sessions", frozenset({"mian"}), "sessions must be a set of session kinds"),
])
def test_a_plugins_malformed_tool_costs_only_itself(served_workspace: Path, field: str, value: object,
                                                    said: str) -> None:
    """A tool whose schema was not an object made the server's tools/list fail: the client
    saw no tool at all, memory_search included. A name with a space is refused by chat
    APIs; a misspelt session kind hid the tool everywhere, silently."""
    import warnings

    from soulframe import ToolSpec, hookimpl
    from soulframe._engine.agent import Agent
    from soulframe_mcp.server import build_server

    class Dice:
        @hookimpl
        def register_tools(self):
            spec = {"name": "roll_die", "description": "Roll a die.", "handler": lambda ctx, args: 4,
                    "parameters": {"type": "object", "properties": {}}, field: value}
            return [ToolSpec(**spec)]

    agent = Agent.open(served_workspace, embedding__provider="none")
    agent.pm.register(Dice(), name="dice")

    async def main() -> set[str]:
        async with Client(build_server(agent)) as client:
            return {t.name for t in (await client.list_tools()).tools}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = anyio.run(main)
    agent.close()
    assert "memory_search" in names and "roll_die" not in names
    said_once = [str(w.message) for w in caught if said in str(w.message)]
    assert len(said_once) == 1 and said_once[0].startswith(
        "plugin 'dice': register_tools failed and what it registers was skipped: TypeError: tool ")


def _strict_json(text: str) -> object:
    """``text`` read as a strict parser (JavaScript's JSON.parse) reads it: no NaN, no Infinity."""
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} is not JSON: {text!r}")

    return json.loads(text, parse_constant=refuse)


def test_a_result_with_nan_is_still_json_and_agrees_with_its_structured_content(served_workspace: Path) -> None:
    import math

    from soulframe import ToolSpec, hookimpl
    from soulframe._engine.agent import Agent
    from soulframe_mcp.server import build_server

    class Gauge:
        @hookimpl
        def register_tools(self):
            return [ToolSpec(name="read_gauge", description="Read the gauge.",
                             parameters={"type": "object", "properties": {}},
                             handler=lambda ctx, args: {"level": math.nan, "peak": [math.inf, -math.inf, 1.5]})]

    agent = Agent.open(served_workspace, embedding__provider="none")
    agent.pm.register(Gauge(), name="gauge")

    async def main() -> None:
        async with Client(build_server(agent)) as client:
            read = await client.call_tool("read_gauge", {})
            assert not read.is_error, text_of(read)
            expected = {"level": None, "peak": [None, None, 1.5]}
            assert _strict_json(text_of(read)) == expected
            assert read.structured_content == {"result": expected}

    anyio.run(main)
    agent.close()


def test_a_result_that_does_not_fit_its_declared_schema_is_a_tool_error(served_workspace: Path) -> None:
    """The MCP spec: a structured result MUST fit the outputSchema the tool declares (a
    client that validates refuses it). A plugin's tool that breaks its own schema is a tool
    error naming the tool and its plugin, not a success in another shape."""
    from soulframe import ToolSpec, hookimpl
    from soulframe._engine.agent import Agent
    from soulframe_mcp.server import build_server

    shapes = {"fits": {"items": [1, 2]}, "a list": [1, 2, 3], "a string for items": {"items": "1, 2"}}

    class Ledger:
        @hookimpl
        def register_tools(self):
            return [ToolSpec(name="list_items", description="List the ledger's items.",
                             parameters={"type": "object", "properties": {"shape": {"type": "string"}},
                                         "required": ["shape"]},
                             output_schema={"type": "object", "properties": {"items": {"type": "array"}},
                                            "required": ["items"]},
                             handler=lambda ctx, args: shapes[args["shape"]])]

    agent = Agent.open(served_workspace, embedding__provider="none")
    agent.pm.register(Ledger(), name="ledger")

    async def main() -> None:
        async with Client(build_server(agent)) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "list_items")
            assert tool.output_schema["required"] == ["items"]
            fits = await client.call_tool("list_items", {"shape": "fits"})
            assert not fits.is_error and fits.structured_content == {"items": [1, 2]}
            for shape in ("a list", "a string for items"):
                broken = await client.call_tool("list_items", {"shape": shape})
                assert broken.is_error, (shape, broken.structured_content)
                said = text_of(broken)
                assert "list_items" in said and "'ledger'" in said and "outputSchema" in said, said
            again = await client.call_tool("memory_search", {"query": "dark mode"})  # still serving
            assert not again.is_error

    anyio.run(main)
    agent.close()


def test_http_answers_post_only_and_says_so(served_workspace: Path) -> None:
    """Stateless: no event stream (GET) and no session to end (DELETE). A method refused
    with 405 carries an Allow header that names only methods the server answers."""
    with http_server(served_workspace, "--workers", "0") as server:
        for method in ("GET", "DELETE", "PUT"):
            answer = httpx2.request(method, server.url, timeout=30, headers={
                **server.headers(), "Accept": "application/json, text/event-stream"})
            assert answer.status_code == 405, (method, answer.text)
            assert answer.headers.get("allow") == "POST", (method, answer.headers)
        listed = httpx2.post(server.url, timeout=30, headers={
            **server.headers(), "Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        assert listed.status_code == 200 and "memory_get" in listed.text


def test_http_port_in_use_is_a_clear_error(served_workspace: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run_cli("-w", str(served_workspace), "serve", "--http", str(port))
    assert out.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr and "--http PORT" in out.stderr
    assert "serving MCP" not in out.stderr and "Traceback" not in out.stderr


def test_a_missing_workspace_is_named_on_stderr(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    out = run_cli("-w", str(missing), "serve")
    # an error, not an empty agent served in silence; stdout is the protocol channel
    assert out.returncode == 2 and out.stdout == ""
    assert f"the workspace {missing} does not exist" in out.stderr and "soulframe init" in out.stderr


def _status(workspace: Path) -> dict:
    out = run_cli("-w", str(workspace), "memory", "status", "--json", check=True)
    return json.loads(out.stdout)


def _until(check, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return False


def test_a_long_lived_server_syncs_at_start_and_on_an_interval(served_workspace: Path) -> None:
    """Seed 001 "Memory Sync": on startup, on search, periodically. No search is made here:
    the index must still follow the files."""
    (served_workspace / "soulframe.toml").write_text(
        'state_dir = "state"\n[memory]\nsync_interval_s = 1\n[embedding]\nprovider = "none"\n')
    assert _status(served_workspace)["stale_files"]  # nothing indexed before serve

    async def main() -> None:
        async with Client(stdio_params(served_workspace), read_timeout_seconds=120) as client:
            await client.list_resources()  # the server is up; no search is made
            assert await anyio.to_thread.run_sync(
                lambda: _until(lambda: not _status(served_workspace)["stale_files"])), "no sync at start"
            (served_workspace / "memory").mkdir(exist_ok=True)
            (served_workspace / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- Paid the studio rent.\n")
            assert await anyio.to_thread.run_sync(
                lambda: _until(lambda: not _status(served_workspace)["stale_files"])), "no periodic sync"
            assert _status(served_workspace)["indexed_files"] >= 2

    anyio.run(main)
