"""Privacy follows the file reached, for context files: a context file that is MEMORY.md or
USER.md under another name (a symlink, a chain of them, a hard link) is judged as that file,
and a hard link from outside the workspace is no context file at all. Checked in every
session kind, for the owner and for another user (whose copies are seeded from the
workspace's files: the seed must not copy the owner's files either), on open and predefined
agents."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session

SECRETS = {
    "MEMORY.md": "linkmemorypangolin",
    "USER.md": "linkuserokapi",
    "SOUL.md": "linksoultapir",
    "IDENTITY.md": "linkidentityserval",
    "AGENTS.md": "linkagentsgenet",
    "TOOLS.md": "linktoolsdhole",
    "HEARTBEAT.md": "linkheartbeatfossa",
}
OUTSIDE = "linkoutsidecivet"
CAPTURE = "linkcapturemargay"
KINDS = ("main", "group", "subagent", "cron", "heartbeat")

#: link name -> (how, target): each replaces the link name's own file
SHAPES = {
    "symlink SOUL.md -> MEMORY.md": ("SOUL.md", "symlink", "MEMORY.md"),
    "symlink SOUL.md -> memory/../MEMORY.md": ("SOUL.md", "symlink", "memory/../MEMORY.md"),
    "symlink SOUL.md -> chain -> MEMORY.md": ("SOUL.md", "symlink", "chain.md"),
    "symlink SOUL.md -> absolute MEMORY.md": ("SOUL.md", "symlink", "{ws}/MEMORY.md"),
    "hard link SOUL.md = MEMORY.md": ("SOUL.md", "hard", "MEMORY.md"),
    "hard link AGENTS.md = USER.md": ("AGENTS.md", "hard", "USER.md"),
    "symlink TOOLS.md -> USER.md": ("TOOLS.md", "symlink", "USER.md"),
    "symlink IDENTITY.md -> USER.md": ("IDENTITY.md", "symlink", "USER.md"),
    "hard link HEARTBEAT.md = MEMORY.md": ("HEARTBEAT.md", "hard", "MEMORY.md"),
    "hard link AGENTS.md = SOUL.md": ("AGENTS.md", "hard", "SOUL.md"),
    "hard link from outside SOUL.md": ("SOUL.md", "hard", "{outside}"),
    "hard link from outside AGENTS.md": ("AGENTS.md", "hard", "{outside}"),
    "symlink SOUL.md -> a saved private session": ("SOUL.md", "symlink", "sessions/2026-01-01-x.md"),
}


def visible(kind: str, user: str | None, name: str) -> bool:
    """What each session may see of each file, by the file (the test's own table)."""
    if name in ("MEMORY.md", "sessions"):
        return kind == "main" and user is None
    if name == "USER.md":
        return kind == "main" and user is None  # another user has their own USER.md
    if name in ("SOUL.md", "IDENTITY.md"):
        return kind in ("main", "group")
    if name == "HEARTBEAT.md":
        return kind in ("main", "group", "heartbeat")
    if name in ("AGENTS.md", "TOOLS.md"):
        return True
    return False  # outside the workspace


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    for k, v in {"HOME": home, "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".share",
                 "XDG_STATE_HOME": home / ".state"}.items():
        monkeypatch.setenv(k, str(v))
    yield tmp_path


def _build(root: Path, shape: str, agent_type: str) -> tuple[Path, str]:
    ws = root / "ws"
    outside = root / "outside"
    (ws / "memory").mkdir(parents=True)
    (ws / "sessions").mkdir()
    outside.mkdir()
    (ws / "soulframe.toml").write_text(f'agent_type = "{agent_type}"\n[embedding]\nprovider = "none"\n')
    for name, word in SECRETS.items():
        (ws / name).write_text(f"# {name}\n{word}\n")
    (outside / "secret.md").write_text(f"# elsewhere\n{OUTSIDE}\n")
    (ws / "sessions" / "2026-01-01-x.md").write_text(f"# Session\n- {CAPTURE}\n")
    os.symlink("MEMORY.md", ws / "chain.md")
    name, how, target = SHAPES[shape]
    target = target.format(ws=ws, outside=outside / "secret.md")
    os.unlink(ws / name)
    if how == "symlink":
        os.symlink(target, ws / name)
    else:
        os.link(target if os.path.isabs(target) else ws / target, ws / name)
    reached = ("outside" if "outside" in shape else "sessions" if "sessions" in target
               else "USER.md" if "USER" in target else "SOUL.md" if target == "SOUL.md" else "MEMORY.md")
    return ws, reached


def _secret(reached: str) -> str:
    return {"outside": OUTSIDE, "sessions": CAPTURE}.get(reached) or SECRETS[reached]


@pytest.mark.parametrize("agent_type", ["open", "predefined"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_context_file_is_judged_by_the_file_it_reaches(env: Path, adversary: Any, shape: str,
                                                         agent_type: str) -> None:
    ws, reached = _build(env, shape, agent_type)
    secret = _secret(reached)
    name = SHAPES[shape][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Agent.open(ws) as agent:
            for kind in KINDS:
                for user in (None, "bob"):
                    with adversary.attempt(f"{shape}: {kind} prompt user={user} ({agent_type})") as a:
                        result = agent.system_prompt(Session(kind=kind, user_id=user))  # type: ignore[arg-type]
                        # SOUL.md is the persona, not private: a user's AGENTS.md seeded
                        # from AGENTS.md = SOUL.md carries it, and that is theirs now
                        judged = user is None or reached != "SOUL.md"
                        a.leaked(judged and secret in result.text and not visible(kind, user, reached))
                        a.refused(secret not in result.text)
                        assert SECRETS["TOOLS.md"] in result.text or name == "TOOLS.md"  # the build worked
            with adversary.attempt(f"{shape}: bob's seeded copies and context_read ({agent_type})") as a:
                from soulframe._engine.agentstore import context_store
                from soulframe_userfiles.rules import read_context_file

                copies = context_store(agent).user_files("bob")
                private = reached != "SOUL.md"
                a.leaked(private and any(secret in text for text in copies.values()))
                a.leaked(private and secret in (read_context_file(agent, "bob", name) or ""))
                a.refused()


def test_an_ordinary_link_still_works_and_the_refusal_names_the_file(env: Path) -> None:
    ws, _ = _build(env, "symlink SOUL.md -> MEMORY.md", "open")
    (ws / "notes").mkdir()
    (ws / "notes" / "identity.md").write_text("# IDENTITY.md\n- **Name:** Linkwren\n")
    os.unlink(ws / "IDENTITY.md")
    os.symlink("notes/identity.md", ws / "IDENTITY.md")  # a link to a file of its own: fine
    with Agent.open(ws) as agent, pytest.warns(UserWarning) as caught:
        text = agent.system_prompt(Session.group()).text
    assert "Linkwren" in text and SECRETS["MEMORY.md"] not in text
    said = " ".join(str(w.message) for w in caught)
    assert "SOUL.md: skipped" in said and "MEMORY.md under another name" in said
    with Agent.open(ws) as agent:  # the owner's main session sees MEMORY.md anyway
        assert SECRETS["MEMORY.md"] in agent.system_prompt(Session.main()).text


@pytest.mark.parametrize("agent_type", ["open", "predefined"])
def test_a_user_with_no_copies_yet_never_reads_the_owners_user_md(env: Path, agent_type: str) -> None:
    """Before any prompt seeded their copies, another user's context_read of USER.md (the
    tool, and ``context show --user``) gives the template, not the owner's file."""
    ws = env / "ws"
    ws.mkdir()
    (ws / "soulframe.toml").write_text(f'agent_type = "{agent_type}"\n[embedding]\nprovider = "none"\n')
    (ws / "USER.md").write_text(f"# USER.md\n- owner: {SECRETS['USER.md']}\n")
    tool = _cli(ws, "tools", "call", "--user", "carol", "context_read", '{"name": "USER.md"}')
    assert tool.exit_code == 0, tool.output
    assert SECRETS["USER.md"] not in tool.output and "USER.md" in tool.output
    shown = _cli(ws, "context", "show", "USER.md", "--user", "carol")
    assert SECRETS["USER.md"] not in shown.output
    owner = _cli(ws, "tools", "call", "context_read", '{"name": "USER.md"}')
    assert SECRETS["USER.md"] in owner.output  # the owner still reads their own


def _cli(ws: Path, *args: str) -> Any:
    from click.testing import CliRunner
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    res = CliRunner().invoke(build_cli(make_plugin_manager()), ["-w", str(ws), *args])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res


@pytest.mark.parametrize("link", [None, "TOOLS.md -> MEMORY.md", "TOOLS.md -> USER.md"])
def test_context_read_shows_a_session_only_what_its_prompt_would(env: Path, adversary: Any, link: str | None) -> None:
    """A heartbeat's context_read (the tool a `serve --session heartbeat` offers) reads the
    files a heartbeat prompt shows, judged by the file reached: never USER.md or MEMORY.md,
    by name or through a link; the main session still reads everything."""
    from soulframe._engine.tools import ToolError, dispatch

    ws, _ = _build(env, "hard link AGENTS.md = SOUL.md", "open")
    if link is not None:
        name, target = link.split(" -> ")
        os.unlink(ws / name)
        os.symlink(target, ws / name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Agent.open(ws) as agent:
            for name in ("USER.md", "MEMORY.md", "BOOTSTRAP.md", "TOOLS.md", "HEARTBEAT.md"):
                with adversary.attempt(f"heartbeat context_read {name} ({link})") as a:
                    try:
                        got = dispatch(agent, "context_read", {"name": name}, session=Session(kind="heartbeat"))
                        text = got["content"]
                    except ToolError as exc:
                        said = str(exc)
                        assert "not shown to a heartbeat session" in said or "skipped" in said \
                            or "is not one of" in said, said  # MEMORY.md: no context file at all
                        text = ""
                        a.refused()
                    a.leaked(SECRETS["MEMORY.md"] in text or SECRETS["USER.md"] in text)
            main = dispatch(agent, "context_read", {"name": "USER.md"}, session=Session.main())
            assert SECRETS["USER.md"] in main["content"]
