"""Hard links into ``memory/``: privacy follows the file reached, and a hard link *is* the
file (one inode, several names). A public memory file whose inode has a name soulframe
cannot account for — a file outside the workspace, a private page, a hidden file — is kept
private (only a main session sees it), with one warning naming it; a hard link of a root
file (USER.md, MEMORY.md) is skipped; one whose every name is public memory stays public.
Judged from the ``lstat`` discovery already takes (``st_nlink``, device and inode)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session, SoulframeError
from soulframe._engine.tools import ToolError, dispatch

OUTSIDE = "outsidehardlinkotter"
USER = "userhardlinkmarten"
MEMORY = "memoryhardlinkstoat"
PAGE = "entitypagehardlinkmink"
HIDDEN = "hiddenhardlinkvole"
SHARED = "sharedpublicnotelynx"
NOTE = "plainpublicnoteshrew"

GROUPISH = ("group", "subagent", "cron", "heartbeat")


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    outside = root / "outside"
    (ws / "memory" / "deep").mkdir(parents=True)
    (ws / "memory" / ".stash").mkdir()
    (ws / "bank" / "entities").mkdir(parents=True)
    outside.mkdir()
    (ws / "soulframe.toml").write_text(
        '[embedding]\nprovider = "none"\n\n[memory.consolidate]\nentities = true\n')
    (ws / "USER.md").write_text(f"# USER.md\nThe owner. {USER}\n")
    (ws / "MEMORY.md").write_text(f"# Memory\n- {MEMORY}\n")
    (ws / "memory" / "2026-01-02.md").write_text(f"# 2026-01-02\n- {NOTE} at the lake\n")
    (outside / "secret.md").write_text(f"# not for the group\n- {OUTSIDE}\n")
    (ws / "bank" / "entities" / "alice.md").write_text(f"# Alice\n- {PAGE}\n")
    (ws / "memory" / ".stash" / "kept.md").write_text(f"- {HIDDEN}\n")
    (ws / "memory" / "a.md").write_text(f"- {SHARED}\n")
    os.link(outside / "secret.md", ws / "memory" / "x.md")            # the repro
    os.link(outside / "secret.md", ws / "memory" / "deep" / "y.md")   # same, deeper
    os.link(ws / "USER.md", ws / "memory" / "deep" / "u.md")          # a root file
    os.link(ws / "MEMORY.md", ws / "memory" / "deep" / "m.md")        # private memory
    os.link(ws / "bank" / "entities" / "alice.md", ws / "memory" / "alice.md")  # a private page
    os.link(ws / "memory" / ".stash" / "kept.md", ws / "memory" / "stash.md")   # a hidden name
    os.link(ws / "memory" / "a.md", ws / "memory" / "deep" / "b.md")  # both names public
    os.symlink("x.md", ws / "memory" / "alias.md")                    # a link to the hard link
    return ws


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _workspace(tmp_path_factory.mktemp("hardlinks"))


@pytest.fixture(scope="module")
def agent(ws: Path) -> Iterator[Agent]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(ws.parent / "home"))
        a = Agent.open(ws)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a.memory.sync()
        a.said = [str(w.message) for w in caught]  # type: ignore[attr-defined]
        yield a
        a.close()


def _found(agent: Agent, word: str, kind: str) -> list[str]:
    session = None if kind == "api" else Session(kind=kind)  # type: ignore[arg-type]
    return [h.path for h in agent.memory.search(word, session=session, min_score=0.0, k=10)]


@pytest.mark.parametrize("kind", GROUPISH)
@pytest.mark.parametrize("secret", [OUTSIDE, USER, MEMORY, PAGE, HIDDEN])
def test_a_hard_linked_private_or_outside_file_reaches_no_shared_session(
        agent: Agent, adversary: Any, kind: str, secret: str) -> None:
    with adversary.attempt(f"search for a hard-linked {secret} in a {kind} session") as a:
        hits = _found(agent, secret, kind)
        a.refused(not hits)
        a.leaked(bool(hits))


@pytest.mark.parametrize("name", ["memory/x.md", "memory/deep/y.md", "memory/alias.md",
                                  "memory/alice.md", "memory/stash.md"])
@pytest.mark.parametrize("kind", GROUPISH)
def test_memory_get_of_a_hard_link_with_unknown_names_is_refused_outside_main(
        agent: Agent, adversary: Any, name: str, kind: str) -> None:
    with adversary.attempt(f"memory_get {name} in a {kind} session") as a:
        with pytest.raises(SoulframeError, match="private memory") as err:
            agent.memory.get(name, session=Session(kind=kind))  # type: ignore[arg-type]
        a.refused(err.value is not None)
    with adversary.attempt(f"memory_get tool call {name} in a {kind} session") as a:
        with pytest.raises((ToolError, SoulframeError)):
            dispatch(agent, "memory_get", {"path": name}, session=Session(kind=kind))  # type: ignore[arg-type]
        a.refused()


def test_the_owner_still_finds_what_is_kept_private(agent: Agent) -> None:
    # kept private, not dropped: the main session (and the API) see the hard-linked notes
    assert set(_found(agent, OUTSIDE, "main")) == {"memory/x.md", "memory/deep/y.md", "memory/alias.md"}
    assert _found(agent, PAGE, "main")
    assert "memory/stash.md" in _found(agent, HIDDEN, "api")


def test_root_files_hard_linked_into_memory_are_skipped_with_a_warning(agent: Agent) -> None:
    said = agent.said  # type: ignore[attr-defined]
    for name, twin in (("memory/deep/u.md", "USER.md"), ("memory/deep/m.md", "MEMORY.md")):
        assert [w for w in said if w.startswith(f"{name}: skipped: a hard link to {twin}")], said
    # USER.md's text is never memory, not even for the owner
    assert not _found(agent, USER, "main")


def test_each_kept_private_file_is_named_once(agent: Agent) -> None:
    said = agent.said  # type: ignore[attr-defined]
    for name in ("memory/x.md", "memory/deep/y.md", "memory/alias.md", "memory/alice.md", "memory/stash.md"):
        mine = [w for w in said if w.startswith(f"{name}: kept private")]
        assert len(mine) == 1, (name, said)
    # a second sync in the same process does not repeat it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent.memory.sync()
    assert not [w for w in caught if "kept private" in str(w.message)]


@pytest.mark.parametrize("kind", GROUPISH)
def test_a_hard_link_whose_names_are_all_public_memory_stays_public(agent: Agent, kind: str) -> None:
    assert set(_found(agent, SHARED, kind)) == {"memory/a.md", "memory/deep/b.md"}
    assert _found(agent, NOTE, kind) == ["memory/2026-01-02.md"]


@pytest.mark.parametrize("target", ["outside", "entity"])
def test_todays_log_hard_linked_to_an_unknown_file_stays_out_of_shared_prompts(
        tmp_path: Path, adversary: Any, target: str) -> None:
    """Daily logs reach group and heartbeat prompts by name; today's log that is a hard link
    of a file outside the workspace (or of a private page) must not carry it there."""
    from soulframe._engine.prompt.context import daily_log_names

    ws = _workspace(tmp_path)
    with Agent.open(ws) as agent:
        _yesterday, today = daily_log_names(agent, Session.group())
        source = (tmp_path / "outside" / "secret.md" if target == "outside"
                  else ws / "bank" / "entities" / "alice.md")
        os.link(source, ws / today)
        secret = OUTSIDE if target == "outside" else PAGE
        for kind in ("group", "heartbeat"):
            with adversary.attempt(f"today's log as a hard link to the {target} file in a {kind} prompt") as a:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    text = agent.system_prompt(Session(kind=kind)).text  # type: ignore[arg-type]
                a.refused(secret not in text)
                a.leaked(secret in text)
