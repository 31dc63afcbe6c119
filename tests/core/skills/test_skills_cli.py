"""``soulframe skills`` as a user runs it: list, search, show, new, watch (subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest


def write_skill(root: Path, dirname: str, name: str, description: str, body: str = "") -> Path:
    d = root / dirname
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return d / "SKILL.md"


@pytest.fixture
def tree(workspace: Path, tmp_path: Path) -> Path:
    """A workspace whose soulframe.toml points the personal and global tiers at temp dirs."""
    personal, global_ = tmp_path / "personal", tmp_path / "global"
    (workspace / "soulframe.toml").write_text(
        f'[skills]\npersonal_dir = "{personal}"\nglobal_dir = "{global_}"\n\n'
        '[embedding]\nprovider = "none"\n'
    )
    write_skill(workspace / "skills", "deploy", "deploy", "Deploy the website to production",
                body="Run {baseDir}/deploy.sh\n")
    write_skill(personal, "deploy", "deploy", "my personal deploy")
    write_skill(global_, "backup", "backup", "Back up the database every night")
    write_skill(workspace / "skills", "broken", "", "", body="")
    (workspace / "skills" / "broken" / "SKILL.md").write_text("---\nname: broken\n---\n")
    return workspace


def test_list_shows_the_winning_tier_what_it_shadowed_and_problems(cli, tree: Path, tmp_path: Path) -> None:
    out = cli("-w", str(tree), "skills", "list", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {r["name"]: r for r in data["skills"]}
    assert rows["deploy"]["tier"] == 1 and rows["deploy"]["tier_name"] == "workspace"
    assert rows["deploy"]["shadows"] == [{"tier": 3, "tier_name": "personal",
                                          "location": str(tmp_path / "personal" / "deploy" / "SKILL.md")}]
    assert rows["backup"]["tier_name"] == "global"
    assert {"memory-maintenance", "write-a-skill", "heartbeat-checklist"} <= set(rows)
    assert data["mode"] == "inline"
    assert data["problems"] == [{"path": str(tree / "skills" / "broken" / "SKILL.md"),
                                 "message": "front matter has no 'description' key (it is required)"}]

    text = cli("-w", str(tree), "skills", "list")
    assert text.returncode == 0
    assert "deploy" in text.stdout and "1 workspace" in text.stdout
    assert f"shadows 3 personal: {tmp_path / 'personal' / 'deploy' / 'SKILL.md'}" in text.stdout
    assert "5 skills; prompt mode: inline; 1 skipped (see warnings)" in text.stdout
    # said once, not once as a warning and again by the logging module's last resort
    assert text.stderr.count("broken/SKILL.md: front matter has no 'description' key") == 1


def test_search_and_show(cli, tree: Path) -> None:
    out = cli("-w", str(tree), "skills", "search", "deploy website", "--json", "-k", "2")
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert [h["name"] for h in hits] == ["deploy"]
    assert hits[0]["tier"] == 1 and hits[0]["score"] > 0
    text = cli("-w", str(tree), "skills", "search", "nightly database backup")
    assert text.stdout.split()[1] == "backup"
    none = cli("-w", str(tree), "skills", "search", "zzzz")
    assert "no skill matches 'zzzz'" in none.stdout

    show = cli("-w", str(tree), "skills", "show", "deploy")
    assert show.returncode == 0
    assert f"Run {tree.resolve()}/skills/deploy/deploy.sh" in show.stdout
    assert "# deploy — tier 1 (workspace)" in show.stdout and "# shadows: tier 3 (personal)" in show.stdout
    raw = cli("-w", str(tree), "skills", "show", "deploy", "--raw")
    assert raw.stdout.startswith("---\nname: deploy")
    missing = cli("-w", str(tree), "skills", "show", "deplo")
    assert missing.returncode != 0 and "did you mean 'deploy'" in missing.stderr


def test_new_scaffolds_a_skill_that_parses(cli, tree: Path) -> None:
    out = cli("-w", str(tree), "skills", "new", "release-notes", "--description",
              "Write release notes: summarise merged PRs since the last tag")
    assert out.returncode == 0, out.stderr
    path = tree / "skills" / "release-notes" / "SKILL.md"
    assert f"created {path}" in out.stdout
    listed = json.loads(cli("-w", str(tree), "skills", "list", "--json").stdout)
    row = next(r for r in listed["skills"] if r["name"] == "release-notes")
    assert row["description"] == "Write release notes: summarise merged PRs since the last tag"
    assert row["tier_name"] == "workspace"
    hits = json.loads(cli("-w", str(tree), "skills", "search", "release notes", "--json").stdout)
    assert hits[0]["name"] == "release-notes"
    assert "{baseDir}" in path.read_text()
    assert f"{path.parent.resolve()}/scripts/run.sh" in cli("-w", str(tree), "skills", "show", "release-notes").stdout

    undescribed = cli("-w", str(tree), "skills", "new", "deploy", "--tier", "project")
    assert undescribed.returncode != 0 and "--description" in undescribed.stderr
    project = cli("-w", str(tree), "skills", "new", "deploy", "--tier", "project", "-d", "Deploy the site")
    assert project.returncode == 0, project.stderr
    assert (tree / ".agents" / "skills" / "deploy" / "SKILL.md").exists()
    assert "has the same name and a higher tier; it wins" in project.stdout

    again = cli("-w", str(tree), "skills", "new", "release-notes", "-d", "x")
    assert again.returncode != 0 and "already exists" in again.stderr
    bad = cli("-w", str(tree), "skills", "new", "../escape", "-d", "x")
    assert bad.returncode != 0 and "skill name '../escape'" in bad.stderr
    assert not (tree / "escape").exists()


@pytest.mark.parametrize("name", ["café-notes", "日记", "заметки", "cafe\u0301-decomposed",
                                  "สรุปประชุม", "रिपोर्ट-लिखो", "כתיבת-דוח"])
def test_new_takes_a_name_in_any_script_as_the_loader_does(cli, tree: Path, name: str) -> None:
    import unicodedata

    out = cli("-w", str(tree), "skills", "new", name, "-d", "Notes kept in the user's own language")
    assert out.returncode == 0, out.stderr
    nfc = unicodedata.normalize("NFC", name)
    assert (tree / "skills" / nfc / "SKILL.md").exists()
    listed = json.loads(cli("-w", str(tree), "skills", "list", "--json").stdout)
    assert nfc in {r["name"] for r in listed["skills"]}
    assert cli("-w", str(tree), "skills", "show", nfc).returncode == 0


@pytest.mark.parametrize("name", [".hidden", "..", "a b", "a/b", "deploy\n", "_x", "x" * 65, "\u0e38abc"])
def test_new_refuses_a_name_that_is_no_plain_folder_name(cli, tree: Path, name: str) -> None:
    out = cli("-w", str(tree), "skills", "new", name, "-d", "x")
    assert out.returncode != 0 and "skill name" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_list_and_search_line_up_names_in_wide_scripts(cli, tree: Path) -> None:
    """A Chinese character takes two terminal columns: the tier and score columns line up
    under each other whatever script the names are in, and a long description is cut
    where a character ends (a Thai vowel stays on its letter)."""
    from soulframe._engine.graphemes import display_width, is_safe_cut

    cli("-w", str(tree), "skills", "new", "週報", "-d", "毎週の報告書を書く", check=True)
    cli("-w", str(tree), "skills", "new", "weekly-report-writer", "-d", "Write the weekly report", check=True)
    cli("-w", str(tree), "skills", "new", "สรุป", "-d", "สรุปการประชุมประจำสัปดาห์" * 6, check=True)
    lines = cli("-w", str(tree), "skills", "list", check=True).stdout.splitlines()
    rows = [ln for ln in lines if " workspace " in ln]
    starts = {display_width(ln[: ln.index(" 1 workspace ")]) for ln in rows}
    assert len(rows) >= 3 and len(starts) == 1, lines
    shown = next(ln for ln in rows if ln.startswith("สรุป")).split(" workspace ", 1)[1].strip()
    full = "สรุปการประชุมประจำสัปดาห์" * 6
    assert shown.endswith("…") and display_width(shown) <= 70
    assert full.startswith(shown[:-1]) and is_safe_cut(full, len(shown) - 1)
    found = cli("-w", str(tree), "skills", "search", "report 報告", "--keyword-only", check=True).stdout
    cols = {display_width(ln[: max(ln.find("Write"), ln.find("毎週"))]) for ln in found.splitlines()}
    assert len(found.splitlines()) == 2 and len(cols) == 1, found


def test_watch_prints_reload_events(tree: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "soulframe", "-w", str(tree), "skills", "watch", "--duration", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("watching 5 skill roots"), first + (proc.stderr.read() if proc.poll() else "")
        # the root listing follows; give the observer a moment past its start-up
        time.sleep(0.5)
        write_skill(tree / "skills", "hot", "hot", "added while watching")
        deadline = time.monotonic() + 15
        line = ""
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith("reload"):
                break
        assert line.startswith("reload v") and "+hot" in line, line
    finally:
        proc.terminate()
        proc.wait(timeout=10)
