"""``soulframe config get / set / unset``: one key changed in place, the file's comments and
layout kept, validated as when it is loaded (a bad key or value changes nothing), at the
workspace or the user level (where the default workspace is set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from soulframe._engine.config_edit import edited, parse_value

ORIGINAL = """# my agent
[memory]
# fewer results, please
max_results = 4  # keep it short

[prompt]
budget_tokens = 9000
"""


def test_set_replaces_the_value_and_keeps_comments_and_layout(cli, workspace: Path) -> None:
    cfg = workspace / "soulframe.toml"
    cfg.write_text(ORIGINAL)
    assert cli("-w", str(workspace), "config", "set", "memory.max_results", "8", check=True)
    assert cfg.read_text() == ORIGINAL.replace("max_results = 4", "max_results = 8")
    got = json.loads(cli("-w", str(workspace), "config", "get", "memory.max_results", "--json",
                         check=True).stdout)
    assert got["value"] == 8 and got["origin"].endswith("soulframe.toml:4")


def test_new_keys_join_their_table_or_a_new_one(workspace: Path) -> None:
    text = edited(ORIGINAL, "memory.min_score", 0.5)
    assert "max_results = 4  # keep it short\nmin_score = 0.5\n\n[prompt]" in text
    text = edited(text, "skills.mode", "inline")
    assert text.endswith('budget_tokens = 9000\n\n[skills]\nmode = "inline"\n')
    text = edited(text, "timezone", "Europe/Lisbon")
    assert text.startswith('# my agent\ntimezone = "Europe/Lisbon"\n\n[memory]')
    assert edited(text, "memory.min_score", None) == edited(ORIGINAL, "skills.mode", "inline").replace(
        "# my agent\n", '# my agent\ntimezone = "Europe/Lisbon"\n\n')


@pytest.mark.parametrize("key, value, message", [
    ("memory.max_resuts", "3", "did you mean 'memory.max_results'?"),
    ("memory.max_results", "-3", "expected a number between 1 and 1,000"),
    ("skills.mode", "sometimes", "inline"),
    ("prompt.disabled_sections", "[3]", "prompt.disabled_sections[0] = 3 — expected str"),
    ("timezone", "Mars/Base", "not a known IANA timezone"),
])
def test_a_bad_key_or_value_changes_nothing(cli, workspace: Path, key: str, value: str, message: str) -> None:
    cfg = workspace / "soulframe.toml"
    cfg.write_text(ORIGINAL)
    out = cli("-w", str(workspace), "config", "set", key, value)
    assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr
    assert str(cfg) in out.stderr or "soulframe.toml" in out.stderr
    assert cfg.read_text() == ORIGINAL
    assert [p.name for p in workspace.iterdir()] == ["soulframe.toml"]  # no temporary left


def test_the_default_workspace_is_a_user_setting(cli, tmp_path: Path, _isolated_home: Path) -> None:
    ws = tmp_path / "agent"
    assert cli("init", str(ws), "--no-download").returncode == 0
    assert cli("memory", "remember", "buy oat milk").returncode == 2  # none set yet
    out = cli("config", "set", "--user", "workspace", str(ws), cwd=tmp_path, check=True)
    assert "soulframe.toml" in out.stdout
    assert cli("memory", "remember", "buy oat milk", cwd=tmp_path, check=True).returncode == 0
    assert "buy oat milk" in "".join(p.read_text() for p in (ws / "memory").glob("*.md"))
    assert cli("config", "get", "workspace", cwd=tmp_path, check=True).stdout.strip() == str(ws)
    user_file = _isolated_home / ".config" / "soulframe" / "soulframe.toml"
    assert (user_file.stat().st_mode & 0o777) == 0o600


def test_a_relative_workspace_set_on_the_command_line_is_where_it_was_typed(
        cli, tmp_path: Path, _isolated_home: Path) -> None:
    """`config set --user workspace agent`, typed beside the agent folder, names that folder:
    written as given, the user config read it relative to itself (~/.config/soulframe/agent),
    and every later command said the workspace did not exist."""
    ws = tmp_path / "agent"
    cli("init", str(ws), "--no-download", check=True)
    cli("config", "set", "--user", "workspace", "agent", cwd=tmp_path, check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cli("memory", "remember", "buy oat milk", cwd=elsewhere, check=True)
    assert "buy oat milk" in "".join(p.read_text() for p in (ws / "memory").glob("*.md"))
    # a workspace not made yet is accepted, and the next step said
    out = cli("config", "set", "--user", "workspace", "later", cwd=tmp_path, check=True)
    assert f"does not exist yet; create it with `soulframe init {tmp_path / 'later'}`" in out.stderr


def test_get_masks_secrets_and_unset_restores_the_default(cli, workspace: Path) -> None:
    (workspace / "soulframe.toml").write_text('[model]\napi_key = "sk-live-0123456789abcdefghij"\n')
    shown = cli("-w", str(workspace), "config", "get", "model.api_key", check=True).stdout
    assert "sk-live" not in shown and "***" in shown
    cli("-w", str(workspace), "config", "unset", "model.api_key", check=True)
    assert "api_key" not in (workspace / "soulframe.toml").read_text()
    again = cli("-w", str(workspace), "config", "unset", "model.api_key")
    assert again.returncode == 1 and "not set in this file" in again.stderr


def test_values_are_read_as_toml_when_they_parse() -> None:
    assert parse_value("3") == 3 and parse_value("true") is True and parse_value("0.5") == 0.5
    assert parse_value('["a", "b"]') == ["a", "b"] and parse_value("Europe/Lisbon") == "Europe/Lisbon"


def test_soulframe_home_keeps_every_file_under_one_directory(cli, tmp_path: Path, _isolated_home: Path) -> None:
    """One override, as llm's LLM_USER_PATH: config, keys, aliases, the default workspace,
    indexes and caches all go under $SOULFRAME_HOME, nothing under the home directory."""
    home = tmp_path / "sfhome"
    env = {"SOULFRAME_HOME": str(home)}
    before = sorted(p.relative_to(_isolated_home) for p in _isolated_home.rglob("*"))
    assert cli("init", "--no-download", env=env).returncode == 0
    cli("memory", "remember", "buy oat milk", env=env, check=True)
    cli("keys", "set", "openai", "--value", "sk-home-0123456789abcdefXYZ", env=env, check=True)
    cli("models", "aliases", "set", "fast", "openai/gpt-fast", env=env, check=True)
    cli("config", "set", "--user", "memory.max_results", "9", env=env, check=True)
    after = sorted(p.relative_to(_isolated_home) for p in _isolated_home.rglob("*"))
    assert after == before, "something was written outside $SOULFRAME_HOME"
    shown = json.loads(cli("paths", "--json", env=env, check=True).stdout)
    assert shown["override"] == str(home)
    for name in ("config dir", "keys", "model aliases", "workspace", "state", "models", "cache"):
        assert shown[name]["path"].startswith(str(home)), name
    assert shown["keys"]["exists"] and shown["workspace"]["exists"] and shown["state"]["exists"]
    assert "buy oat milk" in "".join(p.read_text() for p in (home / "workspace" / "memory").glob("*.md"))
    assert cli("config", "get", "memory.max_results", env=env, check=True).stdout.strip() == "9"
