"""Every session kind × every surface, for private files: what each session may see of
MEMORY.md, USER.md, SOUL.md and another user's files, through the prompt (Python API, CLI,
MCP), memory search (Python API, CLI, MCP tools) and MCP resources. An MCP server started
for one session and user may only narrow what it serves, never widen it."""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session

MEMORY = "sessmemorylynx"     # MEMORY.md: main only
USER = "sessuserotter"        # USER.md: main and (full) heartbeat, never group
SOUL = "sesssoulmarten"       # SOUL.md: main and group
HEART = "sessheartstoat"      # HEARTBEAT.md: every kind but sub-agent and cron
AGENTS = "sessagentsbadger"   # AGENTS.md: every kind
ALICE = "sessalicevole"       # alice's own USER.md: only alice's sessions
PUBLIC = "sesspublicmink"     # memory/2026-03-04.md: searchable by every session

KINDS = ("main", "group", "subagent", "cron", "heartbeat")
#: what the prompt of each kind shows (light heartbeats, the default)
SEES: dict[str, frozenset[str]] = {
    "main": frozenset({MEMORY, USER, SOUL, HEART, AGENTS}),
    "group": frozenset({SOUL, HEART, AGENTS}),
    "heartbeat": frozenset({HEART, AGENTS}),
    "subagent": frozenset({AGENTS}),
    "cron": frozenset({AGENTS}),
}
PRIVATE_IN_PROMPT = (MEMORY, USER, SOUL, HEART, ALICE)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_STATE_HOME": str(home / ".local" / "state")}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Iterator[Path]:
    ws = tmp_path_factory.mktemp("sessions") / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "MEMORY.md").write_text(f"# Memory\n- {MEMORY} is the launch word\n")
    (ws / "USER.md").write_text(f"# USER.md\nThe owner. {USER}\n")
    (ws / "SOUL.md").write_text(f"# SOUL.md\nBe exact. {SOUL}\n")
    (ws / "HEARTBEAT.md").write_text(f"# HEARTBEAT.md\n- check the inbox {HEART}\n")
    (ws / "AGENTS.md").write_text(f"# AGENTS.md\nBe helpful. {AGENTS}\n")
    (ws / "TOOLS.md").write_text("# TOOLS.md\nNothing special.\n")
    (ws / "IDENTITY.md").write_text("# IDENTITY.md\n- **Name:** Wren\n")
    (ws / "memory" / "2026-03-04.md").write_text(f"# 2026-03-04\n- a {PUBLIC} by the river\n")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        from soulframe._engine.prompt.context import daily_log_names
        from soulframe_userfiles.rules import write_context_file

        with Agent.open(ws) as agent:
            write_context_file(agent, "alice", "USER.md", f"# USER.md\nAlice. {ALICE}\n", from_chat=False)
            # today's log, read by group prompts and served as a resource, is a link to USER.md
            today = daily_log_names(agent, Session.group())[1]
        os.symlink("../USER.md", ws / today)
        yield ws


@pytest.fixture(scope="module")
def agent(ws: Path, env: dict[str, str]) -> Iterator[Agent]:
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        with Agent.open(ws) as a:
            yield a


@functools.cache
def _the_cli() -> Any:
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    return build_cli(make_plugin_manager())


def _cli(ws: Path, env: dict[str, str], *args: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = CliRunner().invoke(_the_cli(), ["-w", str(ws), *args], env=env, catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res


def _check_prompt(a: Any, text: str, kind: str, user: str | None) -> None:
    for secret in PRIVATE_IN_PROMPT:
        # the workspace's MEMORY.md and USER.md are its owner's: no user here is an owner
        allowed = secret in SEES[kind] and not (secret in (USER, MEMORY) and user is not None)
        if secret == ALICE:
            allowed = user == "alice" and USER in SEES[kind]
        a.leaked(secret in text and not allowed)
    assert AGENTS in text  # the build worked: every kind sees AGENTS.md


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("user", [None, "bob", "alice"])
def test_python_prompt_shows_each_session_only_its_files(agent: Agent, adversary: Any, kind: str,
                                                          user: str | None) -> None:
    with adversary.attempt(f"Python system_prompt {kind} user={user}") as a:
        text = agent.system_prompt(Session(kind=kind, user_id=user)).text  # type: ignore[arg-type]
        _check_prompt(a, text, kind, user)


@pytest.mark.parametrize("kind", KINDS)
def test_cli_prompt_shows_each_session_only_its_files(ws: Path, env: dict[str, str], adversary: Any,
                                                      kind: str) -> None:
    for user in (None, "bob"):
        with adversary.attempt(f"CLI prompt --session {kind} user={user}") as a:
            res = _cli(ws, env, "prompt", "--session", kind, *(["--user", user] if user else []))
            assert res.exit_code == 0, res.output
            _check_prompt(a, res.stdout, kind, user)


@pytest.mark.parametrize("kind", KINDS)
def test_memory_search_shows_private_memory_to_main_only(agent: Agent, ws: Path, env: dict[str, str],
                                                         adversary: Any, kind: str) -> None:
    query = f"{MEMORY} {USER} {SOUL} {ALICE} {PUBLIC}"
    # the owner (no user) finds MEMORY.md in a main session only; bob, who is not the
    # owner, never: curated memory follows its owner
    hits = agent.memory.search(query, session=Session(kind=kind), min_score=0.0)  # type: ignore[arg-type]
    assert (MEMORY in " ".join(h.snippet for h in hits)) == (kind == "main")
    with adversary.attempt(f"Python memory.search in a {kind} session of bob") as a:
        hits = agent.memory.search(query, session=Session(kind=kind, user_id="bob"), min_score=0.0)  # type: ignore[arg-type]
        text = " ".join(h.snippet for h in hits)
        a.leaked(any(s in text for s in (USER, SOUL, ALICE, MEMORY)))
        assert PUBLIC in text
        a.refused(MEMORY not in text)
    with adversary.attempt(f"CLI memory search --session {kind} --user bob") as a:
        res = _cli(ws, env, "memory", "search", query, "--session", kind, "--user", "bob",
                   "--min-score", "0", "--json")
        assert res.exit_code == 0, res.output
        a.leaked(any(s in res.stdout for s in (USER, SOUL, ALICE, MEMORY)))
        assert PUBLIC in res.stdout
    with adversary.attempt(f"CLI memory get MEMORY.md via tools call --session {kind}") as a:
        res = _cli(ws, env, "tools", "call", "--session", kind, "memory_get", '{"path": "MEMORY.md"}')
        a.refused(res.exit_code != 0)
        a.leaked(MEMORY in res.stdout and kind != "main")
    with adversary.attempt(f"CLI memory get MEMORY.md via tools call --session {kind} --user bob") as a:
        res = _cli(ws, env, "tools", "call", "--session", kind, "--user", "bob", "memory_get",
                   '{"path": "MEMORY.md"}')
        a.refused(res.exit_code != 0)
        a.leaked(MEMORY in res.stdout)


# --------------------------------------------------------------------------- MCP


def _serve(ws: Path, env: dict[str, str], *args: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "soulframe", "-w", str(ws), "serve", *args],
                                 env={**os.environ, **env})


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


#: for a group server: the prompt session arguments it may serve (narrower or equal)
GROUP_MAY = {"group", "subagent", "cron"}


def test_mcp_group_server_for_bob_never_widens(ws: Path, env: dict[str, str], adversary: Any) -> None:
    """One server, `--session group --user bob`: its prompt arguments may narrow the session,
    never widen it or switch user; its tools and resources hide private files."""
    from mcp import Client

    async def main() -> None:
        async with Client(_serve(ws, env, "--session", "group", "--user", "bob"),
                          read_timeout_seconds=120) as client:
            for kind in KINDS:
                for user in (None, "bob", "alice"):
                    args = {"session": kind, **({"user": user} if user else {})}
                    with adversary.attempt(f"MCP group/bob server: get_prompt {args}") as a:
                        try:
                            prompt = await client.get_prompt("system_prompt", args)
                        except Exception as exc:  # the SDK raises the server's refusal
                            a.refused()
                            assert kind not in GROUP_MAY or user == "alice", (args, exc)
                            assert "this server serves" in str(exc), str(exc)
                            continue
                        assert kind in GROUP_MAY and user != "alice", args
                        _check_prompt(a, prompt.messages[0].content.text, kind, "bob")
            with adversary.attempt("MCP group/bob server: get_prompt with no arguments") as a:
                prompt = await client.get_prompt("system_prompt", {})
                _check_prompt(a, prompt.messages[0].content.text, "group", "bob")
            with adversary.attempt("MCP group/bob server: memory_search for private memory") as a:
                found = await client.call_tool("memory_search", {"query": f"{MEMORY} {USER} {ALICE} {PUBLIC}"})
                a.leaked(any(s in _text(found) for s in (MEMORY, USER, ALICE)))
                assert PUBLIC in _text(found)
            for path in ("MEMORY.md", "USER.md", "SOUL.md"):
                with adversary.attempt(f"MCP group/bob server: memory_get {path}") as a:
                    got = await client.call_tool("memory_get", {"path": path})
                    a.refused(got.is_error)
                    a.leaked(any(s in _text(got) for s in (MEMORY, USER, SOUL)))
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            with adversary.attempt("MCP group/bob server: today's log linked to USER.md as a resource") as a:
                logs = [u for u in listed if "/memory/" in u]
                for uri in logs:
                    res = await client.read_resource(uri)
                    a.leaked(USER in res.contents[0].text)
                a.refused(not logs)
            # resources are exactly what the group prompt shows: SOUL.md and IDENTITY.md are
            # in it (the persona), MEMORY.md and USER.md are not
            for name in ("MEMORY.md", "USER.md"):
                uri = f"soulframe://workspace/{name}"
                with adversary.attempt(f"MCP group/bob server: read_resource {name}") as a:
                    a.leaked(uri in listed)
                    try:
                        res = await client.read_resource(uri)
                    except Exception:
                        a.refused()
                        continue
                    a.leaked(any(s in res.contents[0].text for s in (MEMORY, USER)))

    anyio.run(main)
