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


# --------------------------------------------------------------------------- errors


def _json_commands() -> list[str]:
    return sorted(name for name, cmd in commands(build_cli(make_plugin_manager())).items()
                  if any("--json" in getattr(p, "opts", []) for p in cmd.params))


def test_every_json_command_answers_an_argument_error_in_json(cli) -> None:
    """A script parsing stdout got nothing from a failed `--json` command: the error was
    plain text on stderr. Each command's own parser, plugin commands' too, now answers in
    JSON as well, with the exit status unchanged."""
    names = _json_commands()
    assert {"memory search", "prompt", "plugins", "serve", "db status"} - set(names) == {"serve"}
    wrong = {}
    for name in names:
        out = cli(*name.split(), "--json", "--no-such-option")
        try:
            error = json.loads(out.stdout)["error"]
        except (ValueError, KeyError):
            wrong[name] = out.stdout[:80]
            continue
        if out.returncode != 2 or error["code"] != 2 or "--no-such-option" not in error["message"]:
            wrong[name] = error
        if "Error: No such option: '--no-such-option'" not in out.stderr.replace("option '", "option: '"):
            wrong[name] = out.stderr  # the usual line stays on stderr, for the script's log
    assert not wrong


def test_a_json_error_names_the_config_file_line_and_key(cli, workspace: Path) -> None:
    (workspace / "soulframe.toml").write_text("[memory]\nmax_results = 'eight'\n")
    out = cli("-w", str(workspace), "memory", "search", "lease", "--json")
    assert out.returncode == 2
    assert json.loads(out.stdout) == {"error": {
        "message": f"{workspace}/soulframe.toml line 2: memory.max_results = 'eight' — expected int",
        "code": 2, "file": f"{workspace}/soulframe.toml", "line": 2, "key": "memory.max_results"}}
    plain = cli("-w", str(workspace), "memory", "search", "lease")
    assert plain.returncode == 2 and plain.stdout == ""  # without --json: nothing changes
    assert plain.stderr == f"Error: {json.loads(out.stdout)['error']['message']}\n"
    # a name no plugin offers is found when it is used (exit 1), and placed the same way
    (workspace / "soulframe.toml").write_text("[store]\nbackend = 'sqlight'\n")
    unknown = cli("-w", str(workspace), "memory", "search", "lease", "--json")
    assert unknown.returncode == 1
    assert {k: v for k, v in json.loads(unknown.stdout)["error"].items() if k != "message"} == {
        "code": 1, "file": f"{workspace}/soulframe.toml", "line": 2, "key": "store.backend"}


def test_json_errors_while_a_command_runs_keep_their_exit_status(cli, workspace: Path, tmp_path: Path) -> None:
    cli("init", str(workspace), "--no-download", check=True)
    unknown = cli("-w", str(workspace), "skills", "show", "no-such-skill", "--json")
    assert unknown.returncode == 1
    assert json.loads(unknown.stdout) == {"error": {
        "message": "no skill named 'no-such-skill'; see `soulframe skills list`", "code": 1}}
    missing = cli("-w", str(tmp_path / "nowhere"), "prompt", "--json")
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["error"]["message"].startswith(f"the workspace {tmp_path / 'nowhere'} does not")
    # after `--`, "--json" is an argument: the answer stays text
    text = cli("-w", str(workspace), "memory", "get", "--", "--json")
    assert text.returncode == 1 and text.stdout == "" and text.stderr.startswith("Error: ")


def test_a_declined_confirmation_is_a_json_error_and_the_question_stays_off_stdout(cli, workspace: Path) -> None:
    """`forget --json` on a terminal asked its question on stdout, and a "no" printed only
    "Aborted!" on stderr: a script got the question and no JSON."""
    import os
    import pty
    import subprocess
    import sys

    cli("init", str(workspace), "--no-download", check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')  # no model to load
    cli("-w", str(workspace), "memory", "remember", "The old door code is 1234", check=True)
    master, slave = pty.openpty()
    try:
        os.write(master, b"n\n")
        done = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(workspace), "forget",
                               "old door code", "--json"], stdin=slave, capture_output=True, text=True,
                              timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout) == {"error": {"message": "aborted: the confirmation was declined",
                                                 "code": 1}}
    assert "Forget these everywhere?" in done.stderr and done.stderr.rstrip().endswith("Aborted!")
    assert "1234" in "".join(p.read_text() for p in (workspace / "memory").glob("*.md"))  # kept
