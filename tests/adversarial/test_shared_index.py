"""Two workspaces under one agent id and one state directory (each `soulframe.toml` declares
`[[agents]] id = "aria"` with its own workspace): SQLite keeps no shared index and no
shared per-user files. The second workspace is refused, as PostgreSQL refuses it
(tests/adversarial/test_postgres_isolation.py), naming the first; nothing of the first is
deleted, found or shown; a workspace that was moved takes its index along."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.model import Session, SoulframeError


def _ws(root: Path, name: str, state: Path, note: str, extra: str = "") -> Path:
    ws = root / name
    (ws / "memory").mkdir(parents=True)
    (ws / "AGENTS.md").write_text(f"# AGENTS.md\nBe helpful in {name}.\n")
    (ws / "memory" / "2026-04-01.md").write_text(f"# 2026-04-01\n- {note}\n")
    (ws / "soulframe.toml").write_text(
        f'state_dir = "{state}"\n{extra}[embedding]\nprovider = "none"\n'
        f'[[agents]]\nid = "aria"\nworkspace = "{ws}"\n')
    return ws


def _open(ws: Path) -> Agent:
    return Agent.open(config=ws / "soulframe.toml")


def test_a_second_workspace_under_one_agent_id_is_refused_not_merged(tmp_path: Path, adversary: Any) -> None:
    state = tmp_path / "state"
    a = _ws(tmp_path, "a", state, "sharedalphaferret")
    b = _ws(tmp_path, "b", state, "sharedbetastoat")
    with _open(a) as agent:
        agent.memory.sync()
        assert agent.state_key == "aria"
    with _open(b) as agent:
        with adversary.attempt("sync a second workspace into agent aria's SQLite index") as att:
            with pytest.raises(SoulframeError, match=f"holds the memory index of the workspace {a}"):
                agent.memory.sync()
            att.refused()
    with _open(b) as agent:
        with adversary.attempt("search a second workspace's memory in aria's SQLite index") as att:
            try:
                hits = agent.memory.search("sharedalphaferret sharedbetastoat", min_score=0.0)
            except SoulframeError:
                hits = []
                att.refused()
            att.leaked(any("sharedalphaferret" in h.snippet for h in hits))
    with _open(a) as agent:  # the first workspace's index is untouched
        assert set(agent.store.files()) == {"memory/2026-04-01.md"}
        hits = agent.memory.search("sharedalphaferret", min_score=0.0)
        assert hits and "sharedalphaferret" in hits[0].snippet


def test_per_user_files_of_one_workspace_never_reach_the_others_prompt(tmp_path: Path, adversary: Any) -> None:
    from soulframe_userfiles.rules import write_context_file

    state = tmp_path / "state"
    a = _ws(tmp_path, "a", state, "sharedalphaferret")
    b = _ws(tmp_path, "b", state, "sharedbetastoat")
    with _open(a) as agent:
        write_context_file(agent, "alice", "AGENTS.md", "# AGENTS.md\nsharedaliceagentsmink\n", from_chat=False)
        assert "sharedaliceagentsmink" in agent.system_prompt(Session.main(user_id="alice")).text
    for kind in ("main", "subagent"):
        with adversary.attempt(f"alice's {kind} prompt in the second workspace of agent aria") as att:
            with _open(b) as agent:
                try:
                    text = agent.system_prompt(Session(kind=kind, user_id="alice")).text  # type: ignore[arg-type]
                except SoulframeError as exc:
                    assert str(a) in str(exc)
                    text = ""
                    att.refused()
                att.leaked("sharedaliceagentsmink" in text)
    with _open(b) as agent:  # without a user, the second workspace's own files still work
        assert "Be helpful in b" in agent.system_prompt(Session.main()).text


def test_one_store_path_named_by_two_configs_is_refused(tmp_path: Path, adversary: Any) -> None:
    index = tmp_path / "one.sqlite"
    a = _ws(tmp_path, "a", tmp_path / "sa", "sharedalphaferret", f'[store]\npath = "{index}"\n')
    b = _ws(tmp_path, "b", tmp_path / "sb", "sharedbetastoat", f'[store]\npath = "{index}"\n')
    with _open(a) as agent:
        agent.memory.sync()
    with adversary.attempt("two workspaces with one store.path") as att, _open(b) as agent:
        with pytest.raises(SoulframeError, match="store.path"):
            agent.memory.sync()
        att.refused()


def test_a_moved_workspace_takes_its_index_along(tmp_path: Path) -> None:
    state = tmp_path / "state"
    a = _ws(tmp_path, "a", state, "sharedalphaferret")
    with _open(a) as agent:
        agent.memory.sync()
    moved = tmp_path / "moved"
    a.rename(moved)
    text = (moved / "soulframe.toml").read_text().replace(str(a), str(moved))
    (moved / "soulframe.toml").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _open(moved) as agent:
            agent.memory.sync()
            hits = agent.memory.search("sharedalphaferret", min_score=0.0)
    assert hits and hits[0].path == "memory/2026-04-01.md"


def test_workspaces_opened_with_w_keep_their_own_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    a = _ws(tmp_path, "a", state, "sharedalphaferret")
    b = tmp_path / "b"
    (b / "memory").mkdir(parents=True)
    (b / "memory" / "2026-04-02.md").write_text("# x\n- sharedwithwgerbil\n")
    with _open(a) as agent:
        agent.memory.sync()
    # -w names another workspace for the config's agent: its own key, its own index
    with Agent.open(b, config=a / "soulframe.toml") as agent:
        assert agent.state_key.startswith("aria-")
        hits = agent.memory.search("sharedwithwgerbil sharedalphaferret", min_score=0.0)
        assert {h.path for h in hits} == {"memory/2026-04-02.md"}


def test_a_text_refused_in_one_workspace_is_not_shown_or_released_in_the_other(tmp_path: Path,
                                                                               adversary: Any) -> None:
    """The quarantine is kept per agent id in the state directory (whatever the store), so
    both workspaces use one file: each sees, shows and releases only its own refusals."""
    import json

    from click.testing import CliRunner
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    state = tmp_path / "state"
    a = _ws(tmp_path, "a", state, "sharedalphaferret")
    b = _ws(tmp_path, "b", state, "sharedbetastoat")
    cli = build_cli(make_plugin_manager())

    def run(ws: Path, *args: str) -> Any:
        return CliRunner().invoke(cli, ["--config", str(ws / "soulframe.toml"), *args])

    key = "sk-proj-Qz8Wm2Xv9Lp4Rw7Yb1Nc5Hd3Kf6Gj0Tz"
    assert run(a, "memory", "remember", f"the deploy key is {key}").exit_code != 0
    listed = json.loads(run(a, "memory", "quarantine", "list", "--json").stdout)
    assert len(listed) == 1
    entry = listed[0]["id"]
    with adversary.attempt("quarantine list in the other workspace of one agent id") as att:
        res = run(b, "memory", "quarantine", "list", "--json")
        assert res.exit_code == 0, res.output
        att.leaked(entry in res.stdout)
        att.refused()
    for verb in ("show", "release"):
        with adversary.attempt(f"quarantine {verb} of the other workspace's refusal") as att:
            res = run(b, "memory", "quarantine", verb, entry)
            att.refused(res.exit_code != 0)
            att.leaked(key in res.stdout)
            att.leaked(any(key in p.read_text() for p in b.rglob("*.md")))
    assert run(a, "memory", "quarantine", "show", entry).stdout.strip().endswith(key)  # a's own still is
