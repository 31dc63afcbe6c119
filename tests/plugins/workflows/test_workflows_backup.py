"""`soulframe backup` (seed 003 §6.12, §8.6): the workspace in a private git repository,
with real git in temporary directories. soulframe never pushes."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.workspace import seed_workspace
from soulframe_workflows.backup import redact_url

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known author, and no user or system git config leaking in."""
    for key, value in {
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def committed(root: Path) -> set[str]:
    """The files in the last commit (not the index: something may be staged)."""
    return set(git(root, "ls-tree", "-r", "--name-only", "--full-tree", "HEAD").split("\n")) - {""}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    seed_workspace(root)
    # no embeddings: a backup is about files, and the tests stay fast
    (root / "soulframe.toml").write_text('timezone = "UTC"\n[embedding]\nprovider = "none"\n')
    (root / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n- chose Postgres\n")
    return root


def run(cli: Any, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    out = cli("-w", str(ws), *args)
    assert "Traceback" not in out.stderr, out.stderr
    return out


def test_init_creates_a_repository_with_ignores_and_a_first_commit(ws: Path, cli: Any) -> None:
    (ws / "stray.sqlite").write_bytes(b"SQLite format 3\0")
    (ws / "stray.sqlite-wal").write_bytes(b"x")
    (ws / ".SOUL.md.abc.tmp").write_text("half a write")
    out = run(cli, ws, "backup", "init")
    assert out.returncode == 0, out.stderr
    assert f"initialised a git repository in {ws}" in out.stdout
    assert "never pushes" in out.stdout and "remote add origin" in out.stdout
    files = committed(ws)
    assert {"SOUL.md", "MEMORY.md", "memory/2026-01-02.md", ".gitignore", "soulframe.toml"} <= files
    assert not any(f.endswith((".sqlite", ".sqlite-wal", ".tmp")) for f in files)
    assert git(ws, "log", "--format=%s").strip() == "initial workspace"
    assert git(ws, "remote").strip() == ""  # never adds a remote, never pushes

    # again: nothing re-initialised, .gitignore not duplicated, no empty commit
    ignore = (ws / ".gitignore").read_text()
    out = run(cli, ws, "backup", "init")
    assert out.returncode == 0 and "already a git repository" in out.stdout
    assert (ws / ".gitignore").read_text() == ignore
    assert len(git(ws, "log", "--format=%s").splitlines()) == 1


def test_init_appends_to_an_existing_gitignore(ws: Path, cli: Any) -> None:
    (ws / ".gitignore").write_text("private-notes/\n*.sqlite*")  # no final newline
    assert run(cli, ws, "backup", "init", "--no-commit").returncode == 0
    lines = (ws / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["private-notes/", "*.sqlite*"]
    assert lines.count("*.sqlite*") == 1 and "*.db" in lines
    no_head = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=ws, capture_output=True)
    assert no_head.returncode != 0  # --no-commit: the repository has no commit yet


def test_exclude_daily_keeps_the_daily_logs_out(ws: Path, cli: Any) -> None:
    (ws / "memory" / "archive").mkdir()
    (ws / "memory" / "archive" / "2025-01-01.md").write_text("old\n")
    assert run(cli, ws, "backup", "init", "--exclude-daily").returncode == 0
    files = committed(ws)
    assert "MEMORY.md" in files  # curated memory is still backed up
    assert not any(f.startswith("memory/") for f in files)
    assert "memory/*.md" in (ws / ".gitignore").read_text().splitlines()


def test_commit_dated_message_nothing_to_commit_and_custom_message(ws: Path, cli: Any) -> None:
    assert run(cli, ws, "backup", "init").returncode == 0
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 0 and "nothing to commit" in out.stdout

    assert run(cli, ws, "memory", "remember", "Prefers dark-mode screenshots").returncode == 0
    (ws / "TOOLS.md").unlink()
    out = run(cli, ws, "backup", "commit", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    today = dt.datetime.now(dt.UTC).date().isoformat()  # the workspace config says UTC
    assert data["committed"] is True and data["message"] == f"memory update {today}"
    assert f"memory/{today}.md" in data["files"] and "TOOLS.md" in data["files"]
    assert git(ws, "log", "-1", "--format=%s").strip() == f"memory update {today}"
    assert "TOOLS.md" not in committed(ws)  # the deletion is committed too
    assert git(ws, "status", "--porcelain") == ""

    (ws / "USER.md").write_text("# USER.md\n- Name: Sam\n")
    out = run(cli, ws, "backup", "commit", "-m", "user profile")
    assert out.returncode == 0 and "committed 1 file: user profile" in out.stdout


def test_status_before_and_after(ws: Path, cli: Any) -> None:
    st = json.loads(run(cli, ws, "backup", "status", "--json").stdout)
    assert st["repo"] is False and st["last_commit"] is None
    assert "run `soulframe backup init`" in run(cli, ws, "backup", "status").stdout

    run(cli, ws, "backup", "init")
    (ws / "SOUL.md").write_text("# SOUL.md\nCalm.\n")
    (ws / "memory" / "notes.md").write_text("new\n")
    git(ws, "remote", "add", "origin", "https://sam:s3cr3t-token@example.com/sam/agent.git")
    st = json.loads(run(cli, ws, "backup", "status", "--json").stdout)
    assert st["repo"] is True and st["inside"] is None and st["branch"] == "main"
    assert {d["path"] for d in st["dirty"]} == {"SOUL.md", "memory/notes.md"}
    assert st["last_commit"]["message"] == "initial workspace"
    assert st["remotes"] == [{"name": "origin", "url": "https://sam:***@example.com/sam/agent.git"}]
    text = run(cli, ws, "backup", "status").stdout
    assert "uncommitted  2 files" in text and "s3cr3t" not in text


def test_redact_url_keeps_ssh_and_plain_urls() -> None:
    assert redact_url("git@github.com:me/ws.git") == "git@github.com:me/ws.git"
    assert redact_url("https://github.com/me/ws.git") == "https://github.com/me/ws.git"
    assert redact_url("https://ghp_TOKEN@github.com/me/ws.git") == "https://***@github.com/me/ws.git"
    assert "pw" not in redact_url("ssh://me:pw@host:2222/ws.git")


def test_state_dir_inside_the_workspace_is_never_committed(ws: Path, cli: Any) -> None:
    (ws / "soulframe.toml").write_text(
        f'timezone = "UTC"\nstate_dir = "{ws / "state"}"\n[embedding]\nprovider = "none"\n')
    assert run(cli, ws, "memory", "index").returncode == 0
    (ws / "state" / "audit.jsonl").write_text("{}\n")
    assert run(cli, ws, "backup", "init").returncode == 0
    assert "/state" in (ws / ".gitignore").read_text().splitlines()
    assert not any(f.startswith("state/") for f in committed(ws))


def test_a_config_holding_a_secret_is_kept_out_and_never_committed(ws: Path, cli: Any) -> None:
    secret = "sk-test-DO-NOT-COMMIT"
    (ws / "soulframe.toml").write_text(f'timezone = "UTC"\n[model]\napi_key = "{secret}"\n')
    out = run(cli, ws, "backup", "init")
    assert out.returncode == 0 and "model.api_key" in out.stdout and secret not in out.stdout
    assert "soulframe.toml" not in committed(ws)
    # the user un-ignores it: commit refuses, naming the key but never the value
    (ws / ".gitignore").write_text((ws / ".gitignore").read_text().replace("/soulframe.toml\n", ""))
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 1
    assert "model.api_key" in out.stderr and "refusing" in out.stderr and secret not in out.stderr
    assert "soulframe.toml" not in committed(ws)


def test_a_workspace_inside_another_repository_gets_its_own(tmp_path: Path, cli: Any) -> None:
    outer = tmp_path / "dotfiles"
    outer.mkdir()
    git(outer, "init", "-q")
    (outer / "vimrc").write_text("set nu\n")
    git(outer, "add", "vimrc")  # someone else's staged change
    ws = outer / "agent"
    seed_workspace(ws)
    st = json.loads(run(cli, ws, "backup", "status", "--json").stdout)
    assert st["repo"] is False and st["inside"] == str(outer.resolve())
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 1 and f"inside the git repository at {outer}" in out.stderr

    out = run(cli, ws, "backup", "init")
    assert out.returncode == 0, out.stderr
    assert f"inside the git repository at {outer}" in out.stdout and "/agent/" in out.stdout
    assert (ws / ".git").is_dir() and "SOUL.md" in committed(ws)
    assert git(outer, "status", "--porcelain", "--", "vimrc") == "A  vimrc\n"  # untouched
    st = json.loads(run(cli, ws, "backup", "status", "--json").stdout)
    assert st["repo"] is True and st["dirty"] == []


def test_restore_clones_and_makes_the_copy_private(ws: Path, tmp_path: Path, cli: Any) -> None:
    assert run(cli, ws, "backup", "init").returncode == 0
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(ws), str(origin))
    dest = tmp_path / "new-machine" / "agent"
    out = cli("backup", "restore", str(origin), str(dest))
    assert out.returncode == 0, out.stderr
    assert (dest / "memory" / "2026-01-02.md").read_text() == "# 2026-01-02\n- chose Postgres\n"
    for p in [dest, *dest.rglob("*")]:
        if p.is_symlink():
            continue
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o077 == 0, f"{p} is {mode:o}"
    doctor = json.loads(cli("-w", str(dest), "doctor", "--json").stdout)
    assert not [f for f in doctor["findings"] if f["check"] == "permissions"]
    # never into a directory that holds something
    out = cli("backup", "restore", str(origin), str(dest))
    assert out.returncode == 1 and "not empty" in out.stderr
    assert "Traceback" not in out.stderr


def test_restore_into_the_workspace_named_with_w_on_a_new_machine(ws: Path, tmp_path: Path, cli: Any) -> None:
    """On a new machine the workspace does not exist yet: restoring is what creates it, so
    `-w` naming it is not refused as a typo (every other command still is)."""
    assert run(cli, ws, "backup", "init").returncode == 0
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(ws), str(origin))
    dest = tmp_path / "new-machine" / "agent"
    status = cli("-w", str(dest), "backup", "status")
    assert status.returncode == 2 and "does not exist" in status.stderr
    out = cli("-w", str(dest), "backup", "restore", str(origin))
    assert out.returncode == 0, out.stderr
    assert (dest / "memory" / "2026-01-02.md").read_text() == "# 2026-01-02\n- chose Postgres\n"


def test_restore_from_a_bare_repository_made_with_plain_git_init(ws: Path, tmp_path: Path, cli: Any) -> None:
    """The docs' flow with a self-hosted remote: `git init --bare` (HEAD on master), then
    `git push -u origin HEAD` of the `main` that `backup init` commits on. git clones that
    without checking anything out; the restore must still bring the files back."""
    assert run(cli, ws, "backup", "init").returncode == 0
    origin = tmp_path / "nas.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "master", str(origin))
    git(ws, "remote", "add", "origin", str(origin))
    git(ws, "push", "-q", "-u", "origin", "HEAD")
    dest = tmp_path / "new-machine" / "agent"
    out = cli("backup", "restore", str(origin), str(dest))
    assert out.returncode == 0, out.stderr
    assert (dest / "memory" / "2026-01-02.md").read_text() == "# 2026-01-02\n- chose Postgres\n"
    assert "missing" not in out.stdout
    # a remote nothing was pushed to is an error, and leaves no empty clone behind
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    out = cli("backup", "restore", str(empty), str(tmp_path / "other"))
    assert out.returncode == 1 and "holds no commits" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "other").exists()


def test_git_missing_is_a_clear_error(ws: Path, tmp_path: Path, cli: Any) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    out = cli("-w", str(ws), "backup", "init", env={"PATH": str(empty)})
    assert out.returncode == 1
    assert "git is not installed" in out.stderr and "Traceback" not in out.stderr


def test_git_without_an_identity_says_how_to_set_one(ws: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(key, raising=False)
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.useConfigOnly", "GIT_CONFIG_VALUE_0": "true"}
    out = cli("-w", str(ws), "backup", "init", env=env)
    assert out.returncode == 1
    assert "git config --global user.email" in out.stderr and "Traceback" not in out.stderr


def test_commit_outside_a_repository_says_to_init(ws: Path, cli: Any) -> None:
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 1 and "soulframe backup init" in out.stderr


def test_backup_of_a_workspace_that_does_not_exist(tmp_path: Path, cli: Any) -> None:
    missing = tmp_path / "nope"
    # like every command but init: exit 2, the path named, `soulframe init` suggested
    for args in (("backup", "init"), ("backup", "status")):
        out = run(cli, missing, *args)
        assert out.returncode == 2 and f"{missing} does not exist" in out.stderr
        assert f"soulframe init {missing}" in out.stderr
    assert not missing.exists()


def test_a_secret_config_committed_before_is_refused_until_untracked(ws: Path, cli: Any) -> None:
    assert run(cli, ws, "backup", "init").returncode == 0
    assert "soulframe.toml" in committed(ws)  # no secret in it then
    (ws / "soulframe.toml").write_text('timezone = "UTC"\n[embedding]\napi_key = "k-123"\n')
    assert run(cli, ws, "backup", "init").returncode == 0  # now ignores it, but it is tracked
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 1 and "git rm --cached soulframe.toml" in out.stderr
    assert "k-123" not in out.stderr
    git(ws, "rm", "-q", "--cached", "soulframe.toml")
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 0, out.stderr
    assert "soulframe.toml" not in committed(ws)


def test_the_suggested_commands_work_pasted_for_a_path_with_spaces(tmp_path: Path, cli: Any) -> None:
    import shlex

    root = tmp_path / "my agent"
    seed_workspace(root)
    (root / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    out = run(cli, root, "backup", "init")
    line = next(ln.strip() for ln in out.stdout.splitlines() if "remote add origin" in ln)
    assert shlex.split(line)[:3] == ["git", "-C", str(root)]


def test_a_commit_checks_the_files_it_takes_not_every_tracked_one(ws: Path, cli: Any) -> None:
    token = "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp"
    assert run(cli, ws, "backup", "init").returncode == 0
    # a key committed long ago, by git itself: it is in the history whatever this commit
    # does; re-reading every tracked file for it made each commit of a big workspace slow
    old = ws / "memory" / "2026-01-02.md"
    old.write_text(f"# 2026-01-02\n- chose Postgres\n- deploy token {token}\n")
    git(ws, "commit", "-qam", "by hand")
    (ws / "memory" / "2026-01-03.md").write_text("# 2026-01-03\n- booked the dentist\n")
    out = run(cli, ws, "backup", "commit")
    assert out.returncode == 0, out.stderr
    assert "memory/2026-01-03.md" in committed(ws)
    # what the commit takes is still checked: an edited file, a new one, one staged by hand
    for name, stage in (("memory/2026-01-03.md", False), ("memory/2026-01-04.md", False), ("TOOLS.md", True)):
        path = ws / name
        path.write_text(f"# note\n- the key: {token}\n")
        if stage:  # the working copy and git's index alike: only the staged list names it
            git(ws, "add", name)
        out = run(cli, ws, "backup", "commit")
        assert out.returncode == 1 and f"{name} line 2" in out.stderr, (name, out.stderr)
        assert token not in out.stderr + out.stdout
        path.write_text("# note\n")
