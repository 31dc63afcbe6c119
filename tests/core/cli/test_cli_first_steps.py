"""What a new user meets first on the command line: a mistyped workspace, a command whose
extra is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

# a finder that makes the MCP SDK look uninstalled, as after `pip install soulframe`
# without the [mcp] extra (the SDK stays installed for the other tests)
_NO_MCP = """
import sys
class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('mcp', 'mcp_types'):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Blocked())
from soulframe.cli import main
sys.argv[0] = 'soulframe'
main(sys.argv[1:])
"""


def test_serve_without_the_mcp_extra_names_the_extra(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    out = subprocess.run([sys.executable, "-c", _NO_MCP, "-w", str(workspace), "serve"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    assert "pip install 'soulframe[mcp]'" in out.stderr
    assert "Traceback" not in out.stderr and "ModuleNotFoundError" not in out.stderr
    assert out.stdout == ""


def test_the_readme_says_which_commands_need_an_extra() -> None:
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    for needs in ("`serve`", "soulframe[mcp]", "`db start`", "soulframe[postgres]"):
        assert needs in readme, needs


def test_the_readme_examples_name_real_things(tmp_path: Path) -> None:
    """The README's `install` example is a plugin that exists, and its `memory eval` example
    question is in the format the command reads: run as written, it finds its note."""
    import json
    import re

    repo = Path(__file__).resolve().parents[3]
    readme = (repo / "README.md").read_text()
    for target in re.findall(r"soulframe install (\S+)", readme):
        assert (repo / target).is_dir(), f"README installs {target}, which is not in the repository"
    question = json.loads(re.search(r'`(\{"id".*?\})`', readme).group(1))
    ws = tmp_path / "agent"
    assert run_cli("init", str(ws), "--no-download").returncode == 0
    rel = question["relevant"][0]
    (ws / rel["path"]).write_text(f"# notes\n\n- Prefers {rel['contains']} screenshots\n")
    golden = tmp_path / "questions.jsonl"
    golden.write_text(json.dumps(question) + "\n")
    out = run_cli("-w", str(ws), "memory", "eval", str(golden), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["queries"] == 1 and report["channels"]["keyword"]["recall@k"] == 1.0


def test_a_misspelt_key_in_a_memory_eval_question_is_named(workspace: Path) -> None:
    """A question file written by hand from the README's example: a misspelt key is named
    with its file and line, not only the format it should have had."""
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    golden = workspace.parent / "questions.jsonl"
    golden.write_text('{"id": "q1", "query": "screenshot appearance", "relevant": []}\n'
                      '{"id": "q2", "query": "screenshots", "relevent": [{"path": "MEMORY.md"}]}\n')
    out = run_cli("-w", str(workspace), "memory", "eval", str(golden))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"{golden} line 2: no 'relevant' key" in out.stderr and "'relevent'" in out.stderr
    # a file that is not UTF-8 (a zip, a spreadsheet's export) is one line too, not a traceback
    golden.write_bytes(b"PK\x03\x04\xa2\x00binary")
    out = run_cli("-w", str(workspace), "memory", "eval", str(golden))
    assert out.returncode == 1 and f"{golden}: not valid UTF-8" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("args", [
    ["prompt"],
    ["memory", "remember", "buy milk"],
    ["memory", "search", "milk"],
    ["doctor"],
    ["skills", "list"],
    ["serve"],
])
def test_a_missing_workspace_is_an_error_naming_it(tmp_path: Path, args: list[str]) -> None:
    typo = tmp_path / "agnet"
    out = run_cli("-w", str(typo), *args)
    assert out.returncode == 2, (args, out.stdout, out.stderr)
    assert f"the workspace {typo} does not exist" in out.stderr
    assert f"soulframe init {typo}" in out.stderr
    assert "Traceback" not in out.stderr
    assert not typo.exists(), "the command created the mistyped workspace"


def test_the_environment_variable_is_checked_too(tmp_path: Path) -> None:
    typo = tmp_path / "agnet"
    out = run_cli("prompt", env={"SOULFRAME_WORKSPACE": str(typo)})
    assert out.returncode == 2 and f"soulframe init {typo}" in out.stderr


def test_init_still_creates_a_missing_workspace(tmp_path: Path) -> None:
    new = tmp_path / "agent"
    run_cli("-w", str(new), "init", check=True)
    assert (new / "SOUL.md").is_file()
    run_cli("init", str(tmp_path / "other"), check=True)
    assert (tmp_path / "other" / "AGENTS.md").is_file()


def test_a_missing_workspace_is_an_error_from_the_api_unless_asked_to_create(tmp_path: Path) -> None:
    from soulframe import Agent, WorkspaceNotFoundError

    typo = tmp_path / "agnet"
    with pytest.raises(WorkspaceNotFoundError, match="agnet does not exist"):
        Agent.open(typo)
    assert not typo.exists()
    made = Agent.open(typo, create=True)
    assert typo.is_dir() and (typo.stat().st_mode & 0o777) == 0o700
    assert made.workspace.root == typo


def test_without_w_a_missing_default_workspace_is_an_error_that_names_it(_isolated_home: Path) -> None:
    """No -w and no workspace created yet: `memory remember` must not create one quietly
    under ~/.soulframe; the error names the path and where it came from."""
    out = run_cli("memory", "remember", "buy milk")
    assert out.returncode == 2
    default = _isolated_home / ".soulframe" / "workspace"
    assert str(default) in out.stderr and "built-in default" in out.stderr
    assert not default.exists()


def _stderr_on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """What the CLI writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    try:
        subprocess.run([sys.executable, "-m", "soulframe", *args], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=slave, env={**os.environ, **env},
                       timeout=120)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the other side is closed: all read
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_no_color_turns_colour_off_on_a_terminal(tmp_path: Path) -> None:
    typo = str(tmp_path / "agnet")
    coloured = _stderr_on_a_terminal(["-w", typo, "prompt"], {})
    assert "\x1b[" in coloured  # a terminal gets colour ...
    plain = _stderr_on_a_terminal(["-w", typo, "prompt"], {"NO_COLOR": "1"})
    assert "Error: the workspace" in plain and "\x1b[" not in plain  # ... unless NO_COLOR
    # a warning while plugins load, before click has a context to read NO_COLOR from
    site = tmp_path / "site"
    site.mkdir()
    (site / "soulframe_frail.py").write_text("import no_such_module_for_frail\n")
    (site / "soulframe_frail-0.1.dist-info").mkdir()
    (site / "soulframe_frail-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: soulframe-frail\n"
                                                                  "Version: 0.1\n")
    (site / "soulframe_frail-0.1.dist-info" / "entry_points.txt").write_text("[soulframe]\nfrail = soulframe_frail\n")
    path = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    warned = _stderr_on_a_terminal(["-w", typo, "prompt"], {**path, "NO_COLOR": "1"})
    assert "warning: plugin 'frail'" in warned and "\x1b[" not in warned


def test_tables_have_no_trailing_spaces(tmp_path: Path) -> None:
    ws = tmp_path / "agent"
    assert run_cli("init", str(ws), "--no-download").returncode == 0
    for args in (["prompt", "--explain"], ["skills", "list"], ["memory", "logs"], ["plugins", "--all"]):
        out = run_cli("-w", str(ws), *args)
        assert out.returncode == 0, (args, out.stderr)
        bad = [line for line in out.stdout.splitlines() if line != line.rstrip()]
        assert not bad, (args, bad[:3])


def test_verbose_says_what_each_step_did_and_how_long_it_took(tmp_path: Path) -> None:
    ws = tmp_path / "agent"
    assert run_cli("init", str(ws), "--no-download").returncode == 0
    (ws / "memory" / "2026-11-20.md").write_text("- Prefers dark-mode screenshots\n")
    index = run_cli("-v", "-w", str(ws), "memory", "index")
    assert "sync: " in index.stderr and "2 added" in index.stderr and " s" in index.stderr  # MEMORY.md too
    assert "added memory/2026-11-20.md" not in index.stderr  # a file each: -vv only
    (ws / "memory" / "2026-11-21.md").write_text("- Allergic to penicillin\n")
    detail = run_cli("-vv", "-w", str(ws), "memory", "index")
    assert "added memory/2026-11-21.md" in detail.stderr
    search = run_cli("-v", "-w", str(ws), "memory", "search", "screenshots")
    assert "search: " in search.stderr and "1 hits" in search.stderr and " ms" in search.stderr
    prompt = run_cli("-v", "-w", str(ws), "prompt")
    assert "prompt: main session, mode full" in prompt.stderr and "tokens" in prompt.stderr
    assert "prompt:" not in prompt.stdout  # the prompt itself stays clean for a pipe
    doctor = run_cli("-v", "-w", str(ws), "doctor")
    assert "doctor: bootstrap_files:" in doctor.stderr
    quiet = run_cli("-w", str(ws), "prompt")
    assert "prompt:" not in quiet.stderr


@pytest.mark.parametrize("command", [
    ["memory", "search"], ["memory", "remember"], ["memory", "get"], ["memory", "index"],
    ["skills", "search"], ["tools", "call"],
])
def test_the_everyday_commands_help_shows_an_example(command: list[str]) -> None:
    """The commands a user reaches for daily teach by example in --help, and say what
    --json prints (its fields), not just 'Print JSON.'."""
    out = run_cli(*command, "--help", check=True).stdout
    examples = [ln.strip() for ln in out.splitlines() if ln.strip().startswith(f"soulframe {command[0]} ")]
    assert examples, out
    assert "Print JSON." not in out, out


def _leaf_commands(group: Any, ctx: Any, path: list[str]) -> Iterator[list[str]]:
    import click

    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        if isinstance(sub, click.Group):
            yield from _leaf_commands(sub, ctx, [*path, name])
        else:
            yield [*path, name]


def test_every_commands_help_shows_an_example_and_what_json_prints() -> None:
    """Each command's --help, core and plugin alike (built with the installed plugins, as
    `soulframe` itself is), teaches by example (a line starting `soulframe `), and a --json
    option says what it prints rather than 'Print JSON.'."""
    import click
    from click.testing import CliRunner
    from soulframe._engine.cli.app import build_cli
    from soulframe._engine.plugins import make_plugin_manager

    root = build_cli(make_plugin_manager())
    runner = CliRunner()
    paths = list(_leaf_commands(root, click.Context(root), []))
    # the plugin commands are there, not only the core ones
    assert {"serve", "heartbeat", "quiet-hours", "memory quarantine list", "db status",
            "skills grant", "backup status"} <= {" ".join(p) for p in paths}
    lacking = []
    for path in paths:
        out = runner.invoke(root, [*path, "--help"]).output
        if not any(ln.strip().startswith("soulframe ") for ln in out.splitlines()) or any(
                vague in out for vague in _VAGUE_JSON_HELP):
            lacking.append(" ".join(path))
    assert not lacking, f"--help without an example or with a vague --json: {lacking}"


# what a --json option's help said before it named the fields it prints
_VAGUE_JSON_HELP = ("Print JSON.", "Print JSON (without the texts).", "Print the result as JSON.",
                    "Print the sync report as JSON.")


@pytest.mark.parametrize("value", ["2", "-0.5", "35"])
def test_memory_search_refuses_a_min_score_outside_0_to_1(workspace: Path, value: str) -> None:
    """Scores run from 0 to 1 (as memory.min_score in the config is checked): '--min-score 35'
    (meant as a percentage) silently answered nothing at all."""
    run_cli("init", str(workspace), check=True)
    out = run_cli("-w", str(workspace), "memory", "search", "lease", "--min-score", value, "--json")
    assert out.returncode == 2 and "--min-score" in out.stderr and "0.0<=x<=1.0" in out.stderr
    assert "0.0<=x<=1.0" in json.loads(out.stdout)["error"]["message"]  # --json: for the script too


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/wchan")
def test_ctrl_c_exits_130_with_one_line_not_1_like_a_failure(workspace: Path) -> None:
    """A stopped run is not a failed one: a script (or cron wrapper) can tell them apart by
    the status a shell gives a process ended by SIGINT, 130."""
    import os
    import signal
    import time

    run_cli("init", str(workspace), check=True)
    p = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(workspace), "memory", "remember", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=os.environ.copy(),
                         # as a terminal delivers it (a background test run ignores SIGINT)
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 30
        while "pipe_read" not in Path(f"/proc/{p.pid}/wchan").read_text() and time.monotonic() < deadline:
            time.sleep(0.01)  # until the command waits for the note on its standard input
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert err.strip() == "interrupted (Ctrl-C)" and "Traceback" not in err and "Aborted" not in err
    assert out == ""


def test_ctrl_c_while_plugins_load_exits_130_without_a_traceback(tmp_path: Path) -> None:
    """Loading the plugins takes a second or more; a Ctrl-C then printed a traceback."""
    import signal
    import time

    site, marker = tmp_path / "site", tmp_path / "loading"
    site.mkdir()
    (site / "soulframe_slow.py").write_text(f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\n"
                                            "time.sleep(60)\n")
    info = site / "soulframe_slow-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: soulframe-slow\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[soulframe]\nslow = soulframe_slow\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen([sys.executable, "-m", "soulframe", "plugins"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # until the slow plugin is being imported
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130 and err.strip() == "interrupted (Ctrl-C)", err


def test_an_empty_user_is_refused_with_how_to_mean_the_owner(workspace: Path) -> None:
    """`--user ""` (a script's unset variable) was refused by some commands with the Python
    API's wording "(None for the agent's owner)", and taken for the owner by others:
    `memory remember --user ""` wrote the note into the owner's daily log."""
    import click
    from soulframe._engine.cli.app import build_cli
    from soulframe._engine.plugins import make_plugin_manager

    run_cli("init", str(workspace), "--no-download", check=True)
    root = build_cli(make_plugin_manager())
    ctx = click.Context(root)
    with_user = []
    for path in _leaf_commands(root, ctx, []):
        cmd = root
        for part in path:
            cmd = cmd.get_command(ctx, part)  # type: ignore[attr-defined]
        if any("--user" in p.opts and not getattr(p, "is_flag", False) for p in cmd.params):
            with_user.append(path)
    assert {"prompt", "memory remember", "memory search", "context set", "serve", "skills grant"} <= {
        " ".join(p) for p in with_user}
    wrong = {}
    for path in with_user:
        out = run_cli("-w", str(workspace), *path, "--user", "")
        if out.returncode != 2 or "got an empty id (leave --user out for the agent's owner)" not in out.stderr \
                or "None for" in out.stderr:
            wrong[" ".join(path)] = out.stderr[-200:]
    assert not wrong
    note = run_cli("-w", str(workspace), "memory", "remember", "the door code is 4711", "--user", "")
    assert note.returncode == 2 and not list((workspace / "memory").glob("*.md"))  # not the owner's


#: SOULFRAME_ names in the code that are no environment variable a user sets
_NOT_USER_ENV = {"SOULFRAME_CACHE_BOUNDARY": "the default prompt.cache_boundary marker's text",
                 "SOULFRAME_UPDATE_DOCS": "the docs generator's switch, for developers"}


def test_every_environment_variable_is_named_in_a_help() -> None:
    """$SOULFRAME_WORKSPACE, $SOULFRAME_KEYS_PATH, $SOULFRAME_DISABLE_PLUGINS and NO_COLOR
    worked but no --help named them, nor the exit codes a script tests."""
    import re

    import click
    from click.testing import CliRunner
    from soulframe._engine.cli.app import build_cli
    from soulframe._engine.plugins import make_plugin_manager

    root_dir = Path(__file__).resolve().parents[3]
    read = {name for folder in ("core", "plugins") for path in (root_dir / folder).rglob("*.py")
            for name in re.findall(r"\bSOULFRAME_[A-Z_]+\b", path.read_text(encoding="utf-8"))}
    read = read - set(_NOT_USER_ENV) | {"NO_COLOR"}
    root = build_cli(make_plugin_manager())
    runner = CliRunner()
    helps = runner.invoke(root, ["--help"]).output + "".join(
        runner.invoke(root, [*path, "--help"]).output for path in _leaf_commands(root, click.Context(root), []))
    assert sorted(name for name in read if name not in helps) == []
    top = runner.invoke(root, ["--help"]).output
    assert "Exit status: 0 done, 1 an error" in top and "130 stopped with Ctrl-C" in top
    assert max(len(line) for line in top.splitlines()) <= 80


def test_only_the_top_level_options_choose_the_config_read_before_plugins_load(tmp_path: Path) -> None:
    """The early read of the config (for plugins.disabled) took `--workspace` from anywhere
    on the command line: `agents add bob --workspace DIR` read DIR's config, and failed on
    it. `-w WS -vv` missed the -vv (it stopped at WS), so plugin loading was not logged;
    and a wrong --agent was exit 1 where a wrong --config or -w is exit 2."""
    ws, other = tmp_path / "ws", tmp_path / "other"
    run_cli("init", str(ws), "--no-download", check=True)
    (ws / "soulframe.toml").write_text("")
    other.mkdir()
    (other / "soulframe.toml").write_text('[plugins]\ndisabled = ["no_such_plugin"]\n')
    added = run_cli("agents", "add", "bob", "--workspace", str(other), "--no-seed", "--json",
                    env={"SOULFRAME_WORKSPACE": str(ws)})
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["workspace"] == str(other)
    loud = run_cli("-w", str(ws), "-vv", "prompt")
    assert "loaded plugin soulframe_workspace" in loud.stderr
    wrong = run_cli("-w", str(ws), "--agent", "nobody", "prompt", "--json")
    assert wrong.returncode == 2 and "--agent 'nobody': no such agent" in json.loads(wrong.stdout)["error"]["message"]


def test_a_workspace_path_too_long_for_the_system_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    long = str(tmp_path / ("a" * 300))
    out = run_cli("-w", long, "prompt", "--json")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert json.loads(out.stdout)["error"]["message"].endswith("soulframe.toml: the name is too long")
