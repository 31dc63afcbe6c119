"""Curated memory follows its owner, on both stores: the workspace's MEMORY.md is its
owner's (a session with no user, or a user in ``owner_ids``); any other user gets their own
MEMORY.md (kept in the store) in their main prompt, through ``memory_get`` and search, and
never the owner's, nor another user's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session, SoulframeError

OWNER = "ownermemorycaracal"     # the workspace's MEMORY.md: alice's (the owner's)
BOB = "bobmemoryquokka"          # bob's own curated memory, in the store
PUBLIC = "ownerpublicnumbat"     # memory/: every session


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ws(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    for k, v in {"HOME": home, "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".share",
                 "XDG_STATE_HOME": home / ".state"}.items():
        monkeypatch.setenv(k, str(v))
    store = ""
    if request.param == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        store = f'[store]\nbackend = "postgres"\ndsn = "{dsn}"\n'
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text(
        f'{store}[embedding]\nprovider = "none"\n[[agents]]\nid = "aria"\nworkspace = "."\n'
        'owner_ids = ["alice"]\n')
    (ws / "AGENTS.md").write_text("# AGENTS.md\nBe helpful.\n")
    (ws / "MEMORY.md").write_text(f"# Memory\n- The owner's safe code is {OWNER}\n")
    (ws / "memory" / "2026-02-01.md").write_text(f"# 2026-02-01\n- {PUBLIC} on the shelf\n")
    with Agent.open(config=ws / "soulframe.toml") as agent:
        from soulframe._engine.memory.users import UserMemory

        UserMemory(agent, "bob").remember(f"Bob's locker is {BOB}", curated=True)
    yield ws


def _cli(ws: Path, *args: str) -> Any:
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    res = CliRunner().invoke(build_cli(make_plugin_manager()), ["--config", str(ws / "soulframe.toml"), *args],
                             catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res


def test_a_user_who_is_not_the_owner_gets_their_own_curated_memory_in_the_prompt(ws: Path, adversary: Any) -> None:
    with Agent.open(config=ws / "soulframe.toml") as agent:
        for user in ("bob", "carol"):
            for kind in ("main", "group", "subagent", "heartbeat"):
                with adversary.attempt(f"{kind} prompt of {user} for the owner's MEMORY.md") as a:
                    text = agent.system_prompt(Session(kind=kind, user_id=user)).text  # type: ignore[arg-type]
                    a.leaked(OWNER in text)
                    a.leaked(BOB in text and (user != "bob" or kind != "main"))
                    a.refused()
        # bob's own curated memory is loaded for bob, in his main session
        assert BOB in agent.system_prompt(Session.main(user_id="bob")).text
        # the owner, at the keyboard or as alice, gets the workspace's and never bob's
        for session in (Session.main(), Session.main(user_id="alice")):
            text = agent.system_prompt(session).text
            assert OWNER in text
            with adversary.attempt(f"the owner's prompt ({session.user_id}) for bob's MEMORY.md") as a:
                a.leaked(BOB in text)


def test_memory_get_and_search_give_a_user_their_own_curated_memory_only(ws: Path, adversary: Any) -> None:
    with Agent.open(config=ws / "soulframe.toml") as agent:
        got = agent.memory.get("MEMORY.md", session=Session.main(user_id="bob"))
        assert BOB in got.text
        for user, kind in (("bob", "main"), ("carol", "main"), ("bob", "group"), ("carol", "group")):
            session = Session(kind=kind, user_id=user)  # type: ignore[arg-type]
            with adversary.attempt(f"memory.get MEMORY.md for {user} in a {kind} session") as a:
                try:
                    text = agent.memory.get("MEMORY.md", session=session).text
                except SoulframeError:
                    text = ""
                    a.refused()
                a.leaked(OWNER in text or (BOB in text and (user, kind) != ("bob", "main")))
            with adversary.attempt(f"memory.search for the owner's memory as {user} in a {kind} session") as a:
                hits = agent.memory.search(f"{OWNER} {BOB} {PUBLIC}", session=session, min_score=0.0)
                text = " ".join(h.snippet for h in hits)
                assert PUBLIC in text
                a.leaked(OWNER in text or (BOB in text and (user, kind) != ("bob", "main")))
                a.refused()
        hits = agent.memory.search(f"{OWNER} {BOB}", session=Session.main(user_id="bob"), min_score=0.0)
        assert any(BOB in h.snippet and h.scope == "user" for h in hits)
        for session in (Session.main(), Session.main(user_id="alice")):  # the owner
            assert OWNER in agent.memory.get("MEMORY.md", session=session).text
            hits = agent.memory.search(f"{OWNER} {BOB}", session=session, min_score=0.0)
            assert any(OWNER in h.snippet for h in hits)
            with adversary.attempt(f"the owner's search ({session.user_id}) for bob's memory") as a:
                a.leaked(any(BOB in h.snippet for h in hits))


def test_the_memory_get_tool_and_cli_search_for_a_user(ws: Path, adversary: Any) -> None:
    with adversary.attempt("tools call memory_get MEMORY.md --user bob") as a:
        res = _cli(ws, "tools", "call", "--user", "bob", "memory_get", '{"path": "MEMORY.md"}')
        assert res.exit_code == 0, res.output
        a.leaked(OWNER in res.stdout)
        assert BOB in json.loads(res.stdout)["text"]
    with adversary.attempt("tools call memory_get MEMORY.md#L1-L3 --user carol") as a:
        res = _cli(ws, "tools", "call", "--user", "carol", "memory_get", '{"path": "MEMORY.md#L1-L3"}')
        a.refused(res.exit_code != 0)
        a.leaked(OWNER in res.stdout or BOB in res.stdout)
    with adversary.attempt("memory search --user bob for the owner's memory") as a:
        res = _cli(ws, "memory", "search", f"{OWNER} {PUBLIC}", "--user", "bob", "--min-score", "0", "--json")
        assert res.exit_code == 0 and PUBLIC in res.stdout, res.output
        a.leaked(OWNER in res.stdout)


def test_an_mcp_server_for_a_user_serves_their_own_curated_memory(ws: Path, adversary: Any,
                                                                  request: pytest.FixtureRequest) -> None:
    import os
    import sys

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    if "postgres" in request.node.name:
        pytest.skip("the MCP surface is the same code over either store; one is enough here")
    params = StdioServerParameters(
        command=sys.executable, env=dict(os.environ),
        args=["-m", "soulframe", "--config", str(ws / "soulframe.toml"), "serve", "--user", "bob"])

    def text(result: Any) -> str:
        return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            with adversary.attempt("MCP server --user bob: memory_get MEMORY.md") as a:
                got = text(await client.call_tool("memory_get", {"path": "MEMORY.md"}))
                a.leaked(OWNER in got)
                assert BOB in got
            with adversary.attempt("MCP server --user bob: memory_search for the owner's memory") as a:
                found = text(await client.call_tool("memory_search", {"query": f"{OWNER} {PUBLIC}"}))
                assert PUBLIC in found
                a.leaked(OWNER in found)
            with adversary.attempt("MCP server --user bob: the system prompt") as a:
                prompt = await client.get_prompt("system_prompt", {})
                body = prompt.messages[0].content.text
                a.leaked(OWNER in body)
                assert BOB in body

    anyio.run(main)


@pytest.mark.parametrize("user", ["", "\x00", "x" * 257])
def test_an_empty_user_id_is_refused_not_read_as_the_owner(tmp_path: Path, user: str) -> None:
    """A host filling ``user_id`` from a message that lacks a sender (``msg.get("from", "")``)
    must not hand that stranger the owner's MEMORY.md: "" is not "no user"."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(f"# Memory\n- The owner's safe code is {OWNER}\n")
    with Agent.open(ws, embedding__provider="none") as agent:
        assert OWNER in agent.system_prompt(Session.main()).text  # the owner still sees it
        with pytest.raises(SoulframeError, match=r"Session: user id .* expected 1 to 256 characters"):
            agent.system_prompt(Session.main(user_id=user))
