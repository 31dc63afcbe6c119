"""`soulframe doctor`: what it finds in real workspaces, and its exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from soulframe import Agent, hookimpl
from soulframe._engine.cli.doctor import run_checks
from soulframe._engine.model import Finding
from soulframe._engine.plugins import make_plugin_manager
from soulframe._engine.workspace import seed_workspace


def doctor(cli: Any, ws: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = cli("-w", str(ws), *extra, "doctor", "--json")
    assert "Traceback" not in out.stderr, out.stderr
    return out.returncode, json.loads(out.stdout)


def by_check(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for f in data["findings"]:
        out.setdefault(f["check"], []).append(f)
    return out


def test_a_fresh_workspace_is_healthy_with_first_run_notes(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    seed_workspace(ws)
    code, data = doctor(cli, ws)
    assert code == 0 and data["healthy"] is True
    levels = {(f["check"], f["level"]) for f in data["findings"]}
    assert ("bootstrap", "info") in levels  # BOOTSTRAP.md still present
    assert ("heartbeat", "info") in levels  # HEARTBEAT.md has nothing to do
    assert all(f["level"] != "problem" for f in data["findings"])


def test_doctor_finds_every_kind_of_problem(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    seed_workspace(ws)
    ws.chmod(0o755)
    (ws / "SOUL.md").write_bytes(b"# Soul\n\xff bad byte\n")
    (ws / "AGENTS.md").write_text("rule\n" * 5_000)  # 25,000 chars
    (ws / "TOOLS.md").unlink()
    (ws / "USER.md").write_text("")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("name: Evil")
    (ws / "IDENTITY.md").unlink()
    (ws / "IDENTITY.md").symlink_to(outside)
    code, data = doctor(cli, ws)
    assert code == 1 and data["healthy"] is False
    found = by_check(data)
    text = json.dumps(data)
    assert any("chmod 700" in f["message"] for f in found["permissions"])
    files = {f["path"]: f for f in found["files"]}
    assert "not valid UTF-8" in files["SOUL.md"]["message"] and "line 2" in files["SOUL.md"]["message"]
    assert "25,000 characters" in files["AGENTS.md"]["message"]
    assert files["TOOLS.md"]["level"] == "problem" and "missing" in files["TOOLS.md"]["message"]
    assert files["USER.md"]["level"] == "warning" and "empty" in files["USER.md"]["message"]
    assert "outside the workspace" in files["IDENTITY.md"]["message"]
    trunc = found["truncation"][0]
    assert trunc["path"] == "AGENTS.md" and "cut" in trunc["message"]
    assert "raise bootstrap.max_chars_per_file (20,000)" in trunc["message"]  # says how to fix it
    assert "Evil" not in text  # the file behind the escaping symlink was never read


def test_doctor_suggests_the_fair_policy_when_files_starve(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "SOUL.md").write_text("be kind\n" * 3_000)  # 24,000 chars: MEMORY.md gets little
    (ws / "MEMORY.md").write_text("- fact\n" * 1_000)
    code, data = doctor(cli, ws)
    messages = {f["path"]: f["message"] for f in by_check(data)["truncation"]}
    assert 'bootstrap.truncation = "fair"' in messages["MEMORY.md"]
    (ws / "soulframe.toml").write_text('[bootstrap]\ntruncation = "fair"\n')
    code, data = doctor(cli, ws)
    assert all("fair" not in f["message"] for f in by_check(data)["truncation"])


def test_doctor_says_what_a_small_models_prompt_budget_leaves_out(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A model with a small window gets a quarter of it for the prompt: the skills and the
    context files drop out of every prompt, and doctor says so, with the knob to turn."""
    ws = tmp_path / "ws"
    seed_workspace(ws)
    code, data = doctor(cli, ws)
    assert "prompt" not in by_check(data)  # the default budget holds a fresh workspace
    (ws / "soulframe.toml").write_text("[model]\ncontext_window = 6000\n")
    code, data = doctor(cli, ws)
    (found,) = by_check(data)["prompt"]
    assert code == 0 and found["level"] == "warning"
    assert "model.context_window = 6,000" in found["message"]
    assert "left out: " in found["message"] and "project_context" in found["message"]
    # a budget even the sections never cut exceed: a problem, by how much
    (ws / "soulframe.toml").write_text("[prompt]\nbudget_tokens = 300\n")
    code, data = doctor(cli, ws)
    assert code == 1
    assert any(f["level"] == "problem" and "tokens over prompt.budget_tokens = 300" in f["message"]
               for f in by_check(data)["prompt"])


def test_text_output_and_exit_code(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "SOUL.md").unlink()
    out = cli("-w", str(ws), "doctor")
    assert out.returncode == 1
    assert "✗ problem files: SOUL.md is missing" in out.stdout
    assert out.stdout.strip().endswith("1 problem")
    # the fix it names is for this workspace: a bare `soulframe init` seeds the default one
    assert f"SOUL.md is missing; run `soulframe init {ws}`" in out.stdout
    cli("init", str(ws), "--no-download", check=True)
    healthy = cli("-w", str(ws), "doctor")
    assert healthy.returncode == 0
    # the first-run ritual: what to do when the files were filled in by hand
    assert f"delete it: rm {ws / 'BOOTSTRAP.md'}" in healthy.stdout


def test_a_missing_workspace_is_one_clear_problem(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    # like every command but init: exit 2, the path named, `soulframe init` suggested
    out = cli("-w", str(tmp_path / "nope"), "doctor", "--json")
    assert out.returncode == 2 and json.loads(out.stdout)["error"]["code"] == 2
    assert f"the workspace {tmp_path / 'nope'} does not exist" in out.stderr
    assert f"soulframe init {tmp_path / 'nope'}" in out.stderr


def test_soul_evil_without_its_file_is_a_problem(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "soulframe.toml").write_text('[soul_evil]\nenabled = true\nat = "23:00"\nduration = "1h"\n')
    code, data = doctor(cli, ws)
    assert code == 1
    assert "SOUL_EVIL.md does not exist" in by_check(data)["soul-evil"][0]["message"]


def test_plugins_add_checks_through_the_hook(workspace: Path) -> None:
    def always(agent: Agent) -> list[Finding]:
        return [Finding("extra", "warning", f"checked {agent.id}")]

    def broken(agent: Agent) -> list[Finding]:
        raise RuntimeError("kaput")

    class ThirdParty:
        @hookimpl
        def register_doctor_checks(self) -> list[object]:
            return [always, broken]

    pm = make_plugin_manager(plugins=[ThirdParty()])
    findings = run_checks(Agent.open(workspace, pm=pm))
    assert Finding("extra", "warning", "checked default") in findings
    assert any(f.check == "broken" and "kaput" in f.message and f.level == "problem" for f in findings)


def test_doctor_fix_applies_the_safe_fixes_and_lists_each(cli, workspace: Path, tmp_path: Path) -> None:
    """Permissions, a stale index and a flagged link are fixed (the link removed, never its
    target); what needs a person is left, and the exit status follows what is left."""
    import json
    import os

    from soulframe._engine.workspace import seed_workspace

    seed_workspace(workspace)
    (workspace / "memory" / "2026-11-20.md").write_text("- Prefers dark-mode screenshots\n")
    os.chmod(workspace / "memory", 0o755)
    secret = tmp_path / "outside.md"
    secret.write_text("a secret plan\n")
    (workspace / "memory" / "leak.md").symlink_to(secret)
    (workspace / "soulframe.toml").write_text('[model]\napi_key = "sk-doctor-0123456789abcdefXYZ"\n')
    os.chmod(workspace / "soulframe.toml", 0o644)
    before = json.loads(cli("-w", str(workspace), "doctor", "--json").stdout)
    assert not before["healthy"]
    assert {f["fix"] for f in before["findings"] if f["fix"]} >= {
        f"chmod 700 {workspace / 'memory'}", f"chmod 600 {workspace / 'soulframe.toml'}",
        "rm memory/leak.md (the link, not its target)", "soulframe memory index"}
    out = cli("-w", str(workspace), "doctor", "--fix", "--json")
    report = json.loads(out.stdout)
    assert all(f["ok"] for f in report["fixed"]) and len(report["fixed"]) == 4
    assert (os.stat(workspace / "memory").st_mode & 0o777) == 0o700
    assert (os.stat(workspace / "soulframe.toml").st_mode & 0o777) == 0o600
    assert not (workspace / "memory" / "leak.md").exists() and secret.read_text() == "a secret plan\n"
    assert not [f for f in report["findings"] if f["fix"]]
    assert report["healthy"] and out.returncode == 0
    text = cli("-w", str(workspace), "doctor", "--fix").stdout
    assert "fixed:" not in text  # nothing left to fix


def test_a_readable_config_with_a_dsn_password_says_to_use_soulframe_dsn(cli, workspace: Path) -> None:
    """The way out for a DSN is $SOULFRAME_DSN: store.dsn has no api_key_env to name."""
    import os

    seed_workspace(workspace)
    cfg = workspace / "soulframe.toml"
    cfg.write_text('[store]\ndsn = "postgresql://app:Sup3rS3cretPw@db.internal/soulframe"\n')
    os.chmod(cfg, 0o644)
    out = cli("-w", str(workspace), "doctor")
    assert out.returncode == 1 and "Sup3rS3cretPw" not in out.stdout + out.stderr
    line = next(x for x in out.stdout.splitlines() if "holds a secret (store.dsn)" in x)
    assert f"chmod 600 {cfg}" in line and "$SOULFRAME_DSN" in line and "api_key_env" not in line


def test_a_linked_memory_folder_is_judged_by_the_folder_it_reaches(cli, workspace: Path) -> None:
    """A symlink's own mode is always 777: doctor reads the mode of the folder it reaches."""
    import json
    import os

    from soulframe._engine.workspace import seed_workspace

    seed_workspace(workspace)
    os.rename(workspace / "memory", workspace / "notes")
    os.chmod(workspace / "notes", 0o700)
    (workspace / "memory").symlink_to("notes")
    def permission_findings() -> list[str]:
        report = json.loads(cli("-w", str(workspace), "doctor", "--json").stdout)
        return [f["message"] for f in report["findings"] if f["check"] == "permissions"]
    assert not any("memory/" in m for m in permission_findings())
    os.chmod(workspace / "notes", 0o755)
    assert any("memory/ is mode 755" in m for m in permission_findings())


def test_the_text_report_names_the_file_of_each_finding(cli, workspace: Path) -> None:
    """A skipped skill is named in the text report, not only in --json."""
    from soulframe._engine.workspace import seed_workspace

    seed_workspace(workspace)
    for name in ("broken", "other"):
        (workspace / "skills" / name).mkdir(parents=True)
        (workspace / "skills" / name / "SKILL.md").write_text("no front matter here\n")
    text = cli("-w", str(workspace), "doctor").stdout
    lines = [ln for ln in text.splitlines() if "no front matter" in ln]
    assert len(lines) == 2 and any("skills/broken/SKILL.md" in ln for ln in lines), text
    assert any("skills/other/SKILL.md" in ln for ln in lines), text


def test_a_pinned_skill_that_does_not_exist_is_named_with_its_file_and_line(
        cli, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    skill = workspace / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy the site\n---\n# Deploy\n")
    (workspace / "soulframe.toml").write_text('[skills]\npinned = ["deplyo", "deploy"]\n')
    _, data = doctor(cli, workspace)
    pinned = [f for f in data["findings"] if f["check"] == "skills" and "pinned" in f["message"]]
    assert len(pinned) == 1, data["findings"]
    assert "soulframe.toml:2: skills.pinned names 'deplyo'" in pinned[0]["message"]
    assert "did you mean 'deploy'?" in pinned[0]["message"]


def test_an_index_from_a_newer_soulframe_is_named_with_what_to_do(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    from soulframe_sqlite.schema import LATEST

    ws = tmp_path / "ws"
    seed_workspace(ws)
    index = tmp_path / "index.sqlite"
    (ws / "soulframe.toml").write_text(f'embedding.provider = "none"\nstore.path = "{index}"\n')
    assert cli("-w", str(ws), "memory", "index").returncode == 0
    with sqlite3.connect(index) as conn:  # as a later release, after a downgrade, leaves it
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(LATEST + 1),))
    conn.close()
    code, data = doctor(cli, ws)
    memory = [f for f in data["findings"] if "schema version" in f["message"]]
    assert code == 1 and len(memory) == 1 and memory[0]["level"] == "problem"
    # the store's own message, not a check that broke: the file and what to do
    assert memory[0]["message"].startswith(f"{index}: memory index schema version {LATEST + 1} is newer")
    assert "upgrade soulframe" in memory[0]["message"] and memory[0]["path"] == str(index)
