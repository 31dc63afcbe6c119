"""Seeding a workspace: `soulframe init` and seed_workspace (seed 000 §3)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from soulframe._engine.model import WorkspaceTemplate
from soulframe._engine.workspace import seed_workspace, workspace_templates

EXPECTED = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
            "BOOTSTRAP.md", "MEMORY.md", "memory/"]


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_seed_creates_every_template_private(tmp_path: Path) -> None:
    root = tmp_path / "new" / "ws"
    created = seed_workspace(root)
    assert created == EXPECTED
    assert mode(root) == 0o700 and mode(root / "memory") == 0o700
    # the parent soulframe created too (like ~/.soulframe for the default workspace)
    assert mode(tmp_path / "new") == 0o700
    for name in EXPECTED[:-1]:
        assert mode(root / name) == 0o600
        assert (root / name).read_text().strip()


def test_seed_is_idempotent_and_never_overwrites(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    seed_workspace(root)
    (root / "SOUL.md").write_text("my own soul")
    (root / "TOOLS.md").unlink()  # a file the user lost
    (root / "USER.md").write_text("")  # even an empty file is the user's
    assert seed_workspace(root) == ["TOOLS.md"]
    assert (root / "SOUL.md").read_text() == "my own soul"
    assert (root / "USER.md").read_text() == ""
    assert seed_workspace(root) == []


def test_seeding_again_does_not_restart_the_first_run(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    seed_workspace(root)
    (root / "BOOTSTRAP.md").unlink()  # the ritual is over: the agent deleted it
    assert seed_workspace(root) == []
    assert not (root / "BOOTSTRAP.md").exists()
    # a directory with no template file yet is a new workspace: the ritual is seeded
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "notes.txt").write_text("unrelated")
    assert "BOOTSTRAP.md" in seed_workspace(tmp_path / "fresh")


def test_seed_leaves_an_existing_symlink_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir(mode=0o700)
    outside = tmp_path / "outside.md"
    (root / "SOUL.md").symlink_to(outside)  # dangling, pointing out of the workspace
    with pytest.warns(UserWarning, match="SOUL.md was not created: .*outside the workspace"):
        created = seed_workspace(root)
    assert "SOUL.md" not in created and "AGENTS.md" in created
    assert not outside.exists()  # nothing was written through the link


def test_predefined_agents_have_no_agent_level_bootstrap(tmp_path: Path) -> None:
    created = seed_workspace(tmp_path / "ws", agent_type="predefined")
    assert "BOOTSTRAP.md" not in created and "SOUL.md" in created


def test_templates_say_which_files_are_per_user() -> None:
    per_user = {t.name: t.per_user for t in workspace_templates()}
    assert {n for n, types in per_user.items() if "open" in types} == set(EXPECTED[:7])
    assert {n for n, types in per_user.items() if "predefined" in types} == {"USER.md", "BOOTSTRAP.md"}


def test_templates_are_good_defaults() -> None:
    t = {x.name: x.content for x in workspace_templates()}
    # AGENTS.md teaches the memory discipline of seed 003 §2.5
    assert "memory/YYYY-MM-DD.md" in t["AGENTS.md"] and "MEMORY.md" in t["AGENTS.md"]
    assert "Text > brain" in t["AGENTS.md"] and "group" in t["AGENTS.md"].lower()
    assert "- **Name:**" in t["IDENTITY.md"]
    assert "empty" in t["BOOTSTRAP.md"] and "delete" in t["BOOTSTRAP.md"]
    # the whole set fits the default bootstrap budget with room to grow
    assert sum(len(c) for c in t.values()) < 24_000 // 2


def test_a_plugin_can_replace_a_template(tmp_path: Path) -> None:
    custom = [*workspace_templates()]
    custom = [x for x in custom if x.name != "SOUL.md"] + [WorkspaceTemplate("SOUL.md", "custom soul")]
    seed_workspace(tmp_path / "ws", templates=custom)
    assert (tmp_path / "ws" / "SOUL.md").read_text() == "custom soul"


def test_init_cli_reports_created_then_kept(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "agent"
    first = cli("init", str(root), "--json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["created"] == EXPECTED and data["kept"] == []
    second = cli("init", str(root))
    assert second.returncode == 0
    assert "  created " not in second.stdout and "kept     SOUL.md" in second.stdout
    assert sorted(os.listdir(root)) == sorted(n.rstrip("/") for n in EXPECTED)  # nothing else
    # after the first run, init says why BOOTSTRAP.md is not coming back
    (root / "BOOTSTRAP.md").unlink()
    third = cli("init", str(root))
    assert third.returncode == 0, third.stderr
    assert "skipped  BOOTSTRAP.md: the first run is over" in third.stdout
    assert "kept     BOOTSTRAP.md" not in third.stdout
    assert json.loads(cli("init", str(root), "--json").stdout)["skipped"] == ["BOOTSTRAP.md"]


def test_init_makes_the_default_workspace_private_from_home_down(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "SOULFRAME_CONFIG": "", "SOULFRAME_WORKSPACE": "",
           "XDG_CONFIG_HOME": str(home / ".config")}
    out = cli("init", env=env)
    assert out.returncode == 0, out.stderr
    assert mode(home / ".soulframe") == 0o700  # not 0755: it will hold state and memory
    assert mode(home / ".soulframe" / "workspace") == 0o700
    # the workspace's soulframe.toml is read without -w, like with it
    (home / ".soulframe" / "workspace" / "soulframe.toml").write_text('[ui]\nassistant_name = "Sage"\n')
    shown = cli("identity", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["identity"]["name"] == "Sage"


def test_init_defaults_to_the_configured_workspace(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "configured"
    out = cli("-w", str(root), "init", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["workspace"] == str(root.resolve())
    assert (root / "SOUL.md").is_file()
