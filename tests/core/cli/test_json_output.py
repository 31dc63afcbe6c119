"""Every command that prints data has ``--json`` for scripts; the exceptions say why."""

from __future__ import annotations

import json
from pathlib import Path

import click
from soulframe._engine.plugins import make_plugin_manager
from soulframe.cli import build_cli

#: commands that print no data a script would parse, with the reason
NO_DATA = {
    "serve": "runs a server",
    "db stop": "stops a server; its exit status is the answer",
    "keys set": "stores a secret; prints only where",
    "keys remove": "an action; its exit status is the answer",
    "keys get": "prints the key itself, for $(...) in a script",
    "config set": "changes one key; its exit status is the answer (`config get --json` reads it)",
    "config unset": "an action; its exit status is the answer",
    "models aliases set": "an action; `models aliases list --json` reads the result",
    "models aliases remove": "an action; its exit status is the answer",
    "context set": "writes a file; its exit status is the answer",
    "models install": "an action (a download, or pip with --pip); its exit status is the answer",
    "quiet-hours": "the example third-party plugin's command",
    "tools export": "its output is JSON already (tool schemas)",
    "tools call": "its output is JSON already (the tool's result)",
    "skills watch": "streams reload notices for a person; scripts use the Python API",
    "skills grant": "an action on the store; its exit status is the answer",
    "skills revoke": "an action on the store; its exit status is the answer",
    "skills publish": "an action on the store; its exit status is the answer",
}


def commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, cmd in group.commands.items():
        full = f"{prefix} {name}".strip()
        if isinstance(cmd, click.Group):
            out |= commands(cmd, full)
        else:
            out[full] = cmd
    return out


def test_every_command_that_prints_data_has_json() -> None:
    missing = []
    for name, cmd in sorted(commands(build_cli(make_plugin_manager())).items()):
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        if "--json" not in opts and name not in NO_DATA:
            missing.append(name)
    assert not missing, f"commands without --json: {missing}"


def test_new_json_outputs(cli, workspace: Path) -> None:
    made = json.loads(cli("-w", str(workspace), "skills", "new", "tidy-desk", "-d",
                          "Tidy the desk before a call", "--json", check=True).stdout)
    assert made["name"] == "tidy-desk" and made["wins"] and made["path"].endswith("skills/tidy-desk/SKILL.md")
    shown = json.loads(cli("-w", str(workspace), "skills", "show", "tidy-desk", "--json", check=True).stdout)
    assert shown["description"] == "Tidy the desk before a call" and shown["tier_name"] == "workspace"
    assert "Tidy" in shown["text"]
    where = json.loads(cli("-w", str(workspace), "config", "path", "--json", check=True).stdout)
    assert where["config_file"] is None and where["user_config_dir"]
    keys = json.loads(cli("keys", "path", "--json", check=True).stdout)
    assert keys["path"].endswith("keys.json") and keys["exists"] is False
