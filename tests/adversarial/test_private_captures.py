"""A saved conversation keeps the privacy of the session it was: a main session's capture
is private memory, found only by the owner's main sessions (and a user's by that user's),
whichever way it is saved (`memory save-session`, `agent.memory.save_session`,
`agent.end_session`), and wherever a link would take it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session, SoulframeError

KINDS = ("main", "group", "subagent", "cron", "heartbeat")
NOT_MAIN = KINDS[1:]


def _talk(word: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Between us: the surprise party code is {word}."},
            {"role": "assistant", "content": f"Understood, {word} stays between us."}]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    for k, v in {"HOME": home, "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".share",
                 "XDG_STATE_HOME": home / ".state"}.items():
        monkeypatch.setenv(k, str(v))
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "AGENTS.md").write_text("# AGENTS.md\nBe helpful.\n")
    (ws / "memory" / "2026-03-01.md").write_text("# 2026-03-01\n- capturepublicwren by the lake\n")
    yield ws


def _cli(ws: Path, *args: str, input: str | None = None) -> Any:
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    res = CliRunner().invoke(build_cli(make_plugin_manager()), ["-w", str(ws), *args], input=input,
                             catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res


def _found(agent: Agent, word: str, session: Session) -> bool:
    hits = agent.memory.search(f"{word} capturepublicwren", session=session, min_score=0.0)
    assert any("capturepublicwren" in h.snippet for h in hits)  # the search itself worked
    return any(word in h.snippet for h in hits)


def _prompt_has(agent: Agent, word: str, session: Session) -> bool:
    return word in agent.system_prompt(session).text


def test_cli_save_session_of_a_main_session_is_private(ws: Path, tmp_path: Path, adversary: Any) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(_talk("capclipelican")))
    res = _cli(ws, "memory", "save-session", "--transcript", str(chat), "--no-model", "--json")
    assert res.exit_code == 0, res.output
    saved = json.loads(res.stdout)
    assert saved["private"] is True and not saved["path"].startswith("memory/")
    with Agent.open(ws) as agent:
        assert _found(agent, "capclipelican", Session.main())  # the owner finds it
        for kind in NOT_MAIN:
            with adversary.attempt(f"memory search --session {kind} for a saved main session") as a:
                res = _cli(ws, "memory", "search", "capclipelican capturepublicwren", "--session", kind,
                           "--min-score", "0", "--json")
                assert res.exit_code == 0 and "capturepublicwren" in res.stdout, res.output
                a.leaked("capclipelican" in res.stdout)
                a.refused()
            with adversary.attempt(f"memory_get of a saved main session in a {kind} session") as a:
                res = _cli(ws, "tools", "call", "--session", kind, "memory_get",
                           json.dumps({"path": saved["path"]}))
                a.leaked("capclipelican" in res.stdout)
                a.refused(res.exit_code != 0)


def test_cli_save_session_for_a_user_keeps_it_in_their_own_memory(ws: Path, tmp_path: Path, adversary: Any) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(_talk("capclibobwombat")))
    res = _cli(ws, "memory", "save-session", "--transcript", str(chat), "--no-model", "--user", "bob")
    assert res.exit_code == 0 and "saved bob's sessions/" in res.stdout and "private memory" in res.stdout, res.output
    assert not any(p for p in ws.rglob("*.md") if "capclibobwombat" in p.read_text())  # not in the workspace
    res = _cli(ws, "memory", "search", "capclibobwombat capturepublicwren", "--user", "bob", "--min-score", "0",
               "--json")
    assert "capclibobwombat" in res.stdout, res.output
    for args in ((), ("--user", "carol"), ("--session", "group", "--user", "bob")):
        with adversary.attempt(f"memory search {' '.join(args)} for bob's saved session") as a:
            res = _cli(ws, "memory", "search", "capclibobwombat capturepublicwren", *args, "--min-score", "0",
                       "--json")
            assert res.exit_code == 0 and "capturepublicwren" in res.stdout, res.output
            a.leaked("capclibobwombat" in res.stdout)
            a.refused()


def test_end_session_of_a_main_session_is_private_and_a_group_one_is_not(ws: Path, adversary: Any) -> None:
    with Agent.open(ws) as agent:
        agent.end_session(Session.main(), _talk("capendmarmot"))
        agent.end_session(Session.group(), _talk("capgroupotter"))
        agent.memory.save_session(_talk("capapibadger"), use_model=False)  # the owner, no session
        # a sub-agent's task is written by the main session: its conversation is as private
        agent.end_session(Session.subagent(), _talk("capsubagentlemur"))
        agent.end_session(Session.cron(), _talk("capcronloris"))
        agent.end_session(Session.heartbeat(), _talk("capheartbeattarsier"))
        for kind in NOT_MAIN:
            for word, how in (("capendmarmot", "agent.end_session(main)"),
                              ("capapibadger", "agent.memory.save_session"),
                              ("capsubagentlemur", "agent.end_session(subagent)"),
                              ("capcronloris", "agent.end_session(cron)"),
                              ("capheartbeattarsier", "agent.end_session(heartbeat)")):
                with adversary.attempt(f"{how}, then a {kind} session searches for it") as a:
                    a.leaked(_found(agent, word, Session(kind=kind)))  # type: ignore[arg-type]
                    a.refused()
            # what a group said is the group's: every session may find it
            assert _found(agent, "capgroupotter", Session(kind=kind))  # type: ignore[arg-type]
        for word in ("capendmarmot", "capapibadger", "capsubagentlemur", "capcronloris", "capheartbeattarsier"):
            assert _found(agent, word, Session.main())


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_users_main_session_is_kept_in_that_users_own_memory(ws: Path, adversary: Any, store: str,
                                                              request: pytest.FixtureRequest) -> None:
    backend = f'[store]\nbackend = "postgres"\ndsn = "{request.getfixturevalue("pg_dsn")}"\n' \
        if store == "postgres" else ""
    (ws / "soulframe.toml").write_text(f'{backend}[embedding]\nprovider = "none"\n[[agents]]\nid = "aria"\n'
                                       'workspace = "."\nowner_ids = ["alice"]\n')
    with Agent.open(ws) as agent:
        agent.end_session(Session.main(user_id="bob"), _talk("capbobheron"))
        agent.end_session(Session.main(user_id="alice"), _talk("capaliceegret"))  # the owner
        assert _found(agent, "capbobheron", Session.main(user_id="bob"))
        assert _found(agent, "capaliceegret", Session.main(user_id="alice"))
        assert not any((ws / "memory").glob("*capbobheron*"))
        for who, session in (("the owner", Session.main()), ("alice, the owner", Session.main(user_id="alice")),
                             ("carol", Session.main(user_id="carol")), ("bob in a group", Session.group(user_id="bob"))):
            with adversary.attempt(f"{who} searches for bob's saved private session") as a:
                a.leaked(_found(agent, "capbobheron", session))
                a.refused()
        for who, session in (("bob", Session.main(user_id="bob")), ("bob in a group", Session.group(user_id="bob")),
                             ("a group", Session.group())):
            with adversary.attempt(f"{who} searches for the owner's saved private session") as a:
                a.leaked(_found(agent, "capaliceegret", session))
                a.refused()
        bobs = [h.path for h in agent.memory.search("capbobheron", session=Session.main(user_id="bob"),
                                                    min_score=0.0) if "capbobheron" in h.snippet]
        assert bobs and bobs[0].startswith("sessions/")
        from soulframe._engine.memory.sessions import save_session

        again = save_session(agent, _talk("capbobheron"), use_model=False, session=Session.main(user_id="bob"))
        assert again.user == "bob" and again.path == bobs[0].replace(".md", "-2.md")  # never over the first
        got = agent.memory.get(bobs[0], session=Session.main(user_id="bob"))
        assert "capbobheron" in got.text  # memory_get reads bob's own document
        with adversary.attempt("memory_get of bob's saved session by carol") as a:
            try:
                text = agent.memory.get(bobs[0], session=Session.main(user_id="carol")).text
            except SoulframeError:
                text = ""
                a.refused()
            a.leaked("capbobheron" in text)


@pytest.mark.parametrize("link", ["sessions -> memory", "memory -> sessions", "sessions -> memory/sub"])
def test_a_link_never_takes_a_private_capture_into_public_memory(ws: Path, adversary: Any, link: str) -> None:
    name, target = link.split(" -> ")
    if name == "memory":
        os.rename(ws / "memory", ws / "sessions")
    else:
        (ws / target).mkdir(exist_ok=True)
    os.symlink(target, ws / name)
    with Agent.open(ws) as agent:
        with adversary.attempt(f"save a main session with {link}") as a:
            try:
                agent.end_session(Session.main(), _talk("caplinkkestrel"))
                agent.memory.save_session(_talk("caplinkkestrel"), use_model=False)
            except SoulframeError as exc:
                assert "sessions/" in str(exc) and "memory/" in str(exc)
                a.refused()
            if name == "memory":  # a memory/ that is the captures' folder is refused whole
                hits = agent.memory.search("caplinkkestrel capturepublicwren", session=Session.group(), min_score=0.0)
                a.leaked(any("caplinkkestrel" in h.snippet for h in hits))
            else:
                a.leaked(_found(agent, "caplinkkestrel", Session.group()))
            a.leaked(_prompt_has(agent, "caplinkkestrel", Session.group()))


#: where ``memory/`` is made to point, and whether what lies there is private memory
MEMORY_LINKS = {
    "sessions": True,        # the owner's saved private sessions
    "bank": True,            # holds the entity pages (bank/entities)
    "bank/entities": True,
    "vault": True,           # a memory.extra_paths entry: private
    "vault/deeper": True,    # inside one
    ".notes": True,          # hidden: not memory at all
    "notes": False,          # a plain folder of the workspace: memory/ may live there
}


@pytest.mark.parametrize("target", list(MEMORY_LINKS))
def test_memory_as_a_link_never_makes_private_memory_public(ws: Path, adversary: Any, target: str) -> None:
    """``memory/`` may be a link to a folder of the workspace, but not to one that is, holds
    or lies in private memory: files reached through it keep the privacy of where they
    are (found by the owner's main session only, or not at all when hidden), in search,
    ``memory_get`` and today's log in the prompt; the discovery warning names the link."""
    import datetime as dt
    import shutil

    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n[memory]\nextra_paths = ["vault"]\n')
    shutil.rmtree(ws / "memory")
    folder = ws / target
    folder.mkdir(parents=True)
    if target == "bank":
        folder = folder / "entities"
        folder.mkdir()
    (ws / "vault").mkdir(exist_ok=True)
    today = dt.date.today().isoformat()
    for day in (today, (dt.date.today() - dt.timedelta(days=1)).isoformat()):
        (folder / f"{day}.md").write_text(f"# {day}\n- linkedmemoryibex and capturepublicwren\n")
    os.symlink(target, ws / "memory")
    private = MEMORY_LINKS[target]
    with Agent.open(ws) as agent:
        agent.memory.sync()
        discovery = agent.memory.discovery
        discovery.files()
        warned = discovery.warnings
        for kind in NOT_MAIN:
            with adversary.attempt(f"memory -> {target}: {kind} search, memory_get and prompt") as a:
                hits = agent.memory.search("linkedmemoryibex", session=Session(kind=kind), min_score=0.0)  # type: ignore[arg-type]
                found = any("linkedmemoryibex" in h.snippet for h in hits)
                res = _cli(ws, "tools", "call", "--session", kind, "memory_get",
                           json.dumps({"path": f"memory/{today}.md"}))
                got = "linkedmemoryibex" in res.output
                shown = _prompt_has(agent, "linkedmemoryibex", Session(kind=kind))  # type: ignore[arg-type]
                if private:
                    a.leaked(found or got or (shown and kind in ("main", "group")))
                    a.refused()
                elif kind == "group":
                    assert found and got  # an ordinary link still works
        if private:
            assert any(w.startswith("memory: skipped") and "private memory" in w for w in warned), warned
            owner = agent.memory.search("linkedmemoryibex", session=Session.main(), min_score=0.0)
            # by where it really is: private memory the owner still finds, or nothing (hidden)
            assert any("linkedmemoryibex" in h.snippet for h in owner) == (target in ("sessions", "vault", "vault/deeper")), owner
