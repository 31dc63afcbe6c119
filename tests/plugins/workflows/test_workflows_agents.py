"""`soulframe agents list` and `soulframe agents add` (seed 003 §5.4, §8.7): several agents
on one host, each with its own workspace and identity, added by a text append to the config
that must still load."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from soulframe._engine.config import load_config
from soulframe._engine.workspace import seed_workspace
from soulframe_workflows.agents import toml_string


def run_json(cli: Any, *args: str) -> Any:
    out = cli(*args, "--json")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return json.loads(out.stdout)


def user_config(home: Path) -> Path:
    return home / ".config" / "soulframe" / "soulframe.toml"


def test_add_without_a_config_creates_one_in_the_user_dir_and_keeps_the_default_agent(
        _isolated_home: Path, tmp_path: Path, cli: Any) -> None:
    out = cli("agents", "add", "aria", "--name", "Aria", "--emoji", "🌿")
    assert out.returncode == 0, out.stderr
    path = user_config(_isolated_home)
    assert f"created {path}" in out.stdout  # says where it wrote
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    cfg = load_config(path)
    assert [a.id for a in cfg.agents] == ["default", "aria"]  # the default stays the default
    aria = cfg.agent("aria")
    assert aria.identity == {"name": "Aria", "emoji": "🌿"}
    assert aria.workspace == (_isolated_home / ".soulframe" / "workspace-aria").resolve()
    for name in ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "memory"):
        assert (aria.workspace / name).exists(), name
    assert stat.S_IMODE(aria.workspace.stat().st_mode) == 0o700

    listed = run_json(cli, "agents", "list")
    assert listed["config"] == str(path)
    rows = {r["id"]: r for r in listed["agents"]}
    assert rows["default"]["default"] is True and rows["aria"]["default"] is False
    assert rows["aria"]["identity"]["name"] == "Aria" and rows["aria"]["identity"]["emoji"] == "🌿"
    assert rows["aria"]["identity_source"] == "agents[aria].identity"
    assert rows["aria"]["initialised"] is True and rows["aria"]["missing"] == []
    # the default agent's workspace was never created: listed as such, not created by listing
    assert rows["default"]["exists"] is False and rows["default"]["initialised"] is False
    assert not Path(rows["default"]["workspace"]).exists()
    # the new agent is selectable by id, without -w
    out = cli("--agent", "aria", "identity", "--json")
    assert json.loads(out.stdout)["identity"]["name"] == "Aria"


def test_identities_and_memories_stay_apart(_isolated_home: Path, tmp_path: Path, cli: Any) -> None:
    a, d = tmp_path / "aria-ws", tmp_path / "devbot-ws"
    assert cli("agents", "add", "aria", "--workspace", str(a), "--name", "Aria").returncode == 0
    assert cli("agents", "add", "devbot", "--workspace", str(d), "--name", "Dev",
               "--type", "predefined").returncode == 0
    assert cli("--agent", "aria", "memory", "remember", "aria likes ferns").returncode == 0
    rows = {r["id"]: r for r in run_json(cli, "agents", "list")["agents"]}
    assert rows["devbot"]["type"] == "predefined"
    assert rows["aria"]["identity"]["name"] == "Aria" and rows["devbot"]["identity"]["name"] == "Dev"
    assert list((a / "memory").glob("*.md")) and not list((d / "memory").glob("*.md"))
    aria = run_json(cli, "--agent", "aria", "memory", "search", "ferns")
    assert aria and aria[0]["path"].startswith("memory/")
    assert run_json(cli, "--agent", "devbot", "memory", "search", "ferns") == []


def test_add_appends_to_the_config_in_use_keeping_its_text(tmp_path: Path, cli: Any) -> None:
    ws = tmp_path / "main"
    seed_workspace(ws)
    cfg = ws / "soulframe.toml"
    original = ('# my settings\n[memory]\nmax_results = 4   # fewer, please\n\n'
                '[[agents]]\nid = "main"\nidentity = { name = "Sage" }\n')
    cfg.write_text(original)
    other = tmp_path / "other"
    out = cli("-w", str(ws), "agents", "add", "helper", "--workspace", str(other))
    assert out.returncode == 0, out.stderr
    assert f"updated {cfg}" in out.stdout
    text = cfg.read_text()
    assert text.startswith(original)  # an append: comments and layout untouched
    assert text.count("[[agents]]") == 2  # no extra default block: the file already had agents
    loaded = load_config(cfg)
    assert [a.id for a in loaded.agents] == ["main", "helper"]
    assert loaded.get("memory.max_results") == 4
    assert loaded.agent("helper").workspace == other.resolve()
    # this config is only found with -w, so the hint names it explicitly
    assert f"--config {cfg} --agent helper" in out.stdout


def test_adding_an_agent_works_with_the_workspace_in_the_environment(tmp_path: Path, cli: Any) -> None:
    """With $SOULFRAME_WORKSPACE set (as -w, but for a whole shell), `agents add` failed with
    "agent 'bob' did not load with workspace ...": the check after writing loaded the
    config with the variable still putting the new agent in the run's workspace."""
    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "soulframe.toml").write_text("")
    out = cli("agents", "add", "bob", "--no-seed", env={"SOULFRAME_WORKSPACE": str(ws)})
    assert out.returncode == 0, out.stderr
    agents = tomllib.loads((ws / "soulframe.toml").read_text())["agents"]
    assert [a["id"] for a in agents] == ["default", "bob"] and agents[0]["workspace"] == str(ws)


def test_a_duplicate_id_or_a_shared_workspace_is_refused_and_the_file_is_untouched(
        tmp_path: Path, cli: Any) -> None:
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text(f'[[agents]]\nid = "aria"\nworkspace = "{tmp_path / "a"}"\n')
    before = cfg.read_text()
    out = cli("--config", str(cfg), "agents", "add", "aria")
    assert out.returncode == 1 and "already an agent 'aria'" in out.stderr
    out = cli("--config", str(cfg), "agents", "add", "twin", "--workspace", str(tmp_path / "a"))
    assert out.returncode == 1 and "already the workspace of agent 'aria'" in out.stderr
    out = cli("--config", str(cfg), "agents", "add", "../evil")
    assert out.returncode == 1 and "agent id" in out.stderr
    assert "Traceback" not in out.stderr
    assert cfg.read_text() == before
    assert not (tmp_path / "workspace-twin").exists()


def test_a_config_that_the_append_would_break_is_left_unchanged(tmp_path: Path, cli: Any) -> None:
    cfg = tmp_path / "soulframe.toml"
    # agents as an inline array: a [[agents]] table after it is invalid TOML
    cfg.write_text(f'agents = [{{ id = "solo", workspace = "{tmp_path / "solo"}" }}]\n')
    before = cfg.read_text()
    out = cli("--config", str(cfg), "agents", "add", "second", "--workspace", str(tmp_path / "s"))
    assert out.returncode == 1
    assert "left unchanged" in out.stderr and str(cfg) in out.stderr
    assert cfg.read_text() == before
    assert not list(tmp_path.glob(".soulframe.*"))  # no temporary file left behind
    assert load_config(cfg).agent("solo")


def test_add_to_a_json_config_and_to_an_empty_config_file(tmp_path: Path, cli: Any) -> None:
    js = tmp_path / "soulframe.json"
    js.write_text(json.dumps({"memory": {"max_results": 3}}))
    out = cli("--config", str(js), "agents", "add", "aria", "--workspace", str(tmp_path / "a"),
              "--no-seed")
    assert out.returncode == 0, out.stderr
    loaded = load_config(js)
    assert [a.id for a in loaded.agents] == ["default", "aria"]
    assert loaded.get("memory.max_results") == 3
    assert not (tmp_path / "a").exists()  # --no-seed

    empty = tmp_path / "agents.toml"
    empty.touch()
    out = cli("--config", str(empty), "agents", "add", "bot", "--workspace", str(tmp_path / "b"))
    assert out.returncode == 0, out.stderr
    assert f"updated {empty}" in out.stdout
    assert [a.id for a in load_config(empty).agents] == ["default", "bot"]
    assert load_config(empty).agent("bot").workspace == (tmp_path / "b").resolve()


def test_list_shows_the_memory_index_without_building_it(tmp_path: Path, cli: Any) -> None:
    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "soulframe.toml").write_text(f'state_dir = "{tmp_path / "state"}"\n')
    (ws / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n- chose Postgres for the app\n")
    row = run_json(cli, "-w", str(ws), "agents", "list")["agents"][0]
    assert row["memory"]["index"] == "not built" and row["memory"]["files"] == 2
    assert not (tmp_path / "state" / "memory").exists()  # listing created no index

    assert cli("-w", str(ws), "memory", "index").returncode == 0
    mem = run_json(cli, "-w", str(ws), "agents", "list")["agents"][0]["memory"]
    assert mem["index"] == "ok" and mem["indexed_files"] == 2 and mem["stale"] == 0
    assert mem["chunks"] >= 1  # the seeded MEMORY.md is template only: not memory, not indexed

    (ws / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n- chose SQLite after all\n")
    mem = run_json(cli, "-w", str(ws), "agents", "list")["agents"][0]["memory"]
    assert mem["stale"] == 1
    text = cli("-w", str(ws), "agents", "list").stdout
    assert "1 stale" in text and "initialised" in text


def test_list_reports_an_uninitialised_workspace(tmp_path: Path, cli: Any) -> None:
    ws = tmp_path / "half"
    ws.mkdir()
    (ws / "SOUL.md").write_text("# Soul\n")
    row = run_json(cli, "-w", str(ws), "agents", "list")["agents"][0]
    assert row["exists"] is True and row["initialised"] is False
    assert "AGENTS.md" in row["missing"] and "SOUL.md" not in row["missing"]
    assert "not initialised: missing AGENTS.md" in cli("-w", str(ws), "agents", "list").stdout


def test_agents_group_holds_list_add_and_summon(cli: Any) -> None:
    out = cli("agents", "--help")
    assert out.returncode == 0
    for name in ("list", "add", "summon"):
        assert f"  {name} " in out.stdout, out.stdout
    # the group's own line says what it is for, whichever of its plugins loaded first: it
    # said only "summon their context files" above a list of three commands
    about = out.stdout.split("\n\n")[1]
    assert "list" in about and "add" in about and "summon" in about, about


@given(st.text(max_size=40))
def test_toml_strings_round_trip(value: str) -> None:
    assert tomllib.loads(f"k = {toml_string(value)}")["k"] == value


@pytest.mark.parametrize("name", ['Ar"ia', "back\\slash", "tab\tnew\nline", "🌿 Aria"])
def test_names_needing_escapes_load_back_exactly(tmp_path: Path, cli: Any, name: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.touch()
    out = cli("--config", str(cfg), "agents", "add", "x", "--workspace", str(tmp_path / "x"),
              "--name", name, "--no-seed")
    assert out.returncode == 0, out.stderr
    assert load_config(cfg).agent("x").identity["name"] == name
