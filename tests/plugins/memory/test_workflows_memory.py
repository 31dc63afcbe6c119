"""Reviewing and maintaining memory (seed 003 §8.4, §8.10): `soulframe memory logs`,
`soulframe memory prune`, and the doctor checks for the memory index, skills and memory
files growing towards the bootstrap limit."""

from __future__ import annotations

import datetime as dt
import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from soulframe import Agent
from soulframe._engine.workspace import seed_workspace

TODAY = dt.datetime.now(dt.UTC).date()  # the workspaces below are configured for UTC
YESTERDAY = TODAY - dt.timedelta(days=1)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    seed_workspace(root)
    (root / "BOOTSTRAP.md").unlink()
    (root / "soulframe.toml").write_text(
        f'timezone = "UTC"\nstate_dir = "{tmp_path / "state"}"\n'
        # no embedding provider by design, whatever is installed: keyword-only
        '[embedding]\nauto_order = []\n')
    mem = root / "memory"
    (mem / "2025-12-01.md").write_text("# 2025-12-01\n- Chose PostgreSQL for the invoicing app\n")
    (mem / "2026-01-15-trip.md").write_text("# 2026-01-15\n- Lisbon trip\n- Train at 9\n")
    (mem / f"{YESTERDAY}.md").write_text(f"# {YESTERDAY}\n- yesterday's note\n")
    (mem / f"{TODAY}.md").write_text(f"# {TODAY}\n- today's note\n")
    (mem / "projects.md").write_text("# Projects\n")  # not a daily log
    (mem / ".2020-01-01.md").write_text("hidden\n")  # hidden: not a log either
    return root


def run(cli: Any, ws: Path, *args: str) -> Any:
    out = cli("-w", str(ws), *args)
    assert "Traceback" not in out.stderr, out.stderr
    return out


def findings(cli: Any, ws: Path) -> tuple[int, list[dict[str, Any]]]:
    out = run(cli, ws, "doctor", "--json")
    return out.returncode, json.loads(out.stdout)["findings"]


# --------------------------------------------------------------------------- logs


def test_logs_lists_daily_logs_with_date_size_and_lines(ws: Path, cli: Any) -> None:
    rows = json.loads(run(cli, ws, "memory", "logs", "--json").stdout)
    assert [r["path"] for r in rows] == [
        "memory/2025-12-01.md", "memory/2026-01-15-trip.md", f"memory/{YESTERDAY}.md", f"memory/{TODAY}.md"]
    first = rows[0]
    text = (ws / "memory" / "2025-12-01.md").read_text()
    assert first["date"] == "2025-12-01" and first["bytes"] == len(text.encode()) and first["lines"] == 2
    assert rows[1]["date"] == "2026-01-15" and rows[1]["lines"] == 3
    assert [r["at_bootstrap"] for r in rows] == [False, False, True, True]
    human = run(cli, ws, "memory", "logs").stdout
    assert "loaded at bootstrap" in human and "4 logs" in human


def test_logs_flags_a_log_too_big_for_bootstrap(ws: Path, cli: Any) -> None:
    (ws / "memory" / "2025-12-01.md").write_text("x" * 25_000)
    human = run(cli, ws, "memory", "logs").stdout
    line = next(ln for ln in human.splitlines() if "2025-12-01" in ln)
    assert "25,000" in line and "truncated at bootstrap" in line


# --------------------------------------------------------------------------- prune


def test_prune_dry_run_moves_nothing(ws: Path, cli: Any) -> None:
    before = sorted(p.name for p in (ws / "memory").iterdir())
    out = run(cli, ws, "memory", "prune", "--before", "2026-01-01", "--dry-run")
    assert out.returncode == 0
    assert "would move memory/2025-12-01.md -> memory/archive/2025-12-01.md" in out.stdout
    assert sorted(p.name for p in (ws / "memory").iterdir()) == before


def test_prune_archives_old_logs_and_keeps_them_searchable(ws: Path, cli: Any) -> None:
    content = (ws / "memory" / "2025-12-01.md").read_text()
    out = run(cli, ws, "memory", "prune", "--before", (TODAY + dt.timedelta(days=30)).isoformat(), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {m["from"] for m in data["moved"]} == {"memory/2025-12-01.md", "memory/2026-01-15-trip.md"}
    # today's and yesterday's logs are loaded at bootstrap: never archived
    assert {k["path"] for k in data["kept"]} == {f"memory/{TODAY}.md", f"memory/{YESTERDAY}.md"}
    assert (ws / "memory" / f"{TODAY}.md").exists()
    assert (ws / "memory" / "archive" / "2025-12-01.md").read_text() == content  # moved, intact
    assert not (ws / "memory" / "2025-12-01.md").exists()
    assert (ws / "memory" / "projects.md").exists()
    assert (os.stat(ws / "memory" / "archive").st_mode & 0o077) == 0

    listed = json.loads(run(cli, ws, "memory", "logs", "--json").stdout)
    assert [r["path"] for r in listed] == [f"memory/{YESTERDAY}.md", f"memory/{TODAY}.md"]
    everything = json.loads(run(cli, ws, "memory", "logs", "--all", "--json").stdout)
    assert {r["path"] for r in everything if r["archived"]} == {
        "memory/archive/2025-12-01.md", "memory/archive/2026-01-15-trip.md"}

    with Agent.open(ws) as agent, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # keyword-only, by design of this workspace
        hits = agent.memory.search("PostgreSQL invoicing")
    assert hits and hits[0].path == "memory/archive/2025-12-01.md"


def test_prune_never_overwrites_an_archived_log(ws: Path, cli: Any) -> None:
    archive = ws / "memory" / "archive"
    archive.mkdir()
    (archive / "2025-12-01.md").write_text("the archived one\n")
    out = run(cli, ws, "memory", "prune", "--before", "2026-01-01")
    assert out.returncode == 0
    assert "already exists" in out.stdout
    assert (archive / "2025-12-01.md").read_text() == "the archived one\n"
    assert (ws / "memory" / "2025-12-01.md").exists()


def test_prune_refuses_an_archive_that_leads_out_of_the_workspace(ws: Path, tmp_path: Path, cli: Any) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / "memory" / "archive").symlink_to(outside)
    out = run(cli, ws, "memory", "prune", "--before", "2026-01-01")
    assert out.returncode == 1 and "outside the workspace" in out.stderr
    assert list(outside.iterdir()) == [] and (ws / "memory" / "2025-12-01.md").exists()


def test_prune_rejects_a_bad_date(ws: Path, cli: Any) -> None:
    out = run(cli, ws, "memory", "prune", "--before", "last tuesday")
    assert out.returncode == 2 and "'last tuesday' does not match the format '%Y-%m-%d'" in out.stderr
    assert (ws / "memory" / "2025-12-01.md").exists()


# --------------------------------------------------------------------------- doctor


def by(found: list[dict[str, Any]], check: str) -> list[dict[str, Any]]:
    return [f for f in found if f["check"] == check]


def test_doctor_memory_index_missing_then_stale(ws: Path, cli: Any) -> None:
    code, found = findings(cli, ws)
    assert code == 0
    mem = by(found, "memory")
    assert any(f["level"] == "info" and "no memory index yet (6 memory files)" in f["message"] for f in mem)
    keyword = [f for f in mem if "keyword-only" in f["message"]]
    assert keyword and keyword[0]["level"] == "warning"
    assert "soulframe models install" in keyword[0]["message"]  # how to turn semantics on
    assert not (ws.parent / "state" / "memory").exists()  # doctor built no index

    assert run(cli, ws, "memory", "index").returncode == 0
    _, found = findings(cli, ws)
    assert not [f for f in by(found, "memory") if "index" in f["message"]]
    (ws / "MEMORY.md").write_text("# MEMORY.md\n- likes tea\n")
    _, found = findings(cli, ws)
    stale = [f for f in by(found, "memory") if "changed since the last index" in f["message"]]
    assert stale and stale[0]["message"].startswith("1 memory file changed") and "MEMORY.md" in stale[0]["message"]


def test_doctor_names_a_memory_file_the_index_leaves_out(ws: Path, cli: Any) -> None:
    """A binary file or one over memory.max_file_bytes is never found by search: `memory
    index` warned once, and doctor said the memory was healthy."""
    (ws / "memory" / "scan.md").write_bytes(bytes(range(256)) * 8)
    (ws / "memory" / "huge.md").write_text("- a long note\n" * 400_000)  # over 5 MiB
    link = ws / "memory" / "soul.md"
    link.symlink_to(ws / "SOUL.md")  # a link astray: the memory-files check names it, once
    assert run(cli, ws, "memory", "index").returncode == 0
    _, found = findings(cli, ws)
    left_out = {f["path"]: f for f in by(found, "memory") if "not searchable" in f["message"]}
    assert set(left_out) == {"memory/scan.md", "memory/huge.md"}
    assert "binary" in left_out["memory/scan.md"]["message"] and left_out["memory/scan.md"]["level"] == "warning"
    assert "memory.max_file_bytes" in left_out["memory/huge.md"]["message"]
    assert [f["path"] for f in by(found, "memory-files")] == ["memory/soul.md"]


def test_doctor_semantic_search_switched_off_or_unavailable(ws: Path, cli: Any) -> None:
    cfg = ws / "soulframe.toml"
    base = cfg.read_text().replace("[embedding]\nauto_order = []\n", "")
    cfg.write_text(base + '[embedding]\nprovider = "none"\n')
    _, found = findings(cli, ws)
    off = [f for f in by(found, "memory") if "semantic search is off" in f["message"]]
    assert off and off[0]["level"] == "info"

    cfg.write_text(base + '[embedding]\nprovider = "no-such-provider"\n')
    code, found = findings(cli, ws)
    assert code == 1  # asked for by name and unusable: a problem
    assert any(f["level"] == "problem" and "no-such-provider" in f["message"] for f in by(found, "memory"))


def test_doctor_memory_disabled_and_a_broken_store_never_crash(ws: Path, cli: Any) -> None:
    cfg = ws / "soulframe.toml"
    base = cfg.read_text()
    cfg.write_text(base + '[memory]\nenabled = false\n')
    code, found = findings(cli, ws)
    assert code == 0 and any("memory is disabled" in f["message"] for f in by(found, "memory"))

    cfg.write_text(base + '[store]\nbackend = "nowhere"\n')
    code, found = findings(cli, ws)
    assert code == 1
    failed = [f for f in found if f["check"] == "memory" and f["level"] == "problem"]
    assert failed and failed[0]["level"] == "problem" and "nowhere" in failed[0]["message"]


def test_doctor_reports_malformed_skills_and_skills_left_out_of_the_prompt(ws: Path, cli: Any) -> None:
    skills = ws / "skills"
    for i in range(3):
        (skills / f"s{i}").mkdir(parents=True)
        (skills / f"s{i}" / "SKILL.md").write_text(f"---\nname: s{i}\ndescription: skill {i}\n---\nbody\n")
    (skills / "bad").mkdir()
    (skills / "bad" / "SKILL.md").write_text("---\nname: [oops\n---\n")
    (skills / "nameless").mkdir()
    (skills / "nameless" / "SKILL.md").write_text("no front matter at all\n")
    with (ws / "soulframe.toml").open("a") as fh:
        fh.write('[skills]\nmode = "inline"\nmax_in_prompt = 2\n')
    out = run(cli, ws, "doctor", "--json")
    found = by(json.loads(out.stdout)["findings"], "skills")
    skipped = {Path(f["path"]).parent.name for f in found if f["message"].startswith("skipped")}
    assert skipped == {"bad", "nameless"}
    assert any("left out of the prompt" in f["message"] and "skills.max_in_prompt = 2" in f["message"]
               for f in found)
    assert out.stderr.count("oops") == 0  # reported once, as a finding, not also as a log line


def test_doctor_memory_files_near_and_over_the_bootstrap_limit(ws: Path, cli: Any) -> None:
    (ws / "MEMORY.md").write_text("m" * 17_000)  # 85% of 20,000
    (ws / "memory" / f"{TODAY}.md").write_text("t" * 16_500)
    (ws / "memory" / "2025-12-01.md").write_text("o" * 30_000)  # old: no longer loaded
    code, found = findings(cli, ws)
    size = {f["path"]: f for f in by(found, "memory-size")}
    assert size["MEMORY.md"]["level"] == "warning" and "85%" in size["MEMORY.md"]["message"]
    assert size[f"memory/{TODAY}.md"]["level"] == "warning"
    older = [f for f in by(found, "memory-size") if f["path"] is None]
    assert older and older[0]["level"] == "info" and "memory/2025-12-01.md" in older[0]["message"]

    # past the limit: a problem (truncated at bootstrap), reported once per file
    (ws / "MEMORY.md").write_text("m" * 21_000)
    (ws / "memory" / f"{TODAY}.md").write_text("t" * 25_000)
    code, found = findings(cli, ws)
    assert code == 1
    problems = [f for f in found if f["level"] == "problem"]
    assert any(f["path"] == "MEMORY.md" for f in problems)
    assert any(f"memory/{TODAY}.md" in f["message"] and "truncated" in f["message"] for f in problems)
    assert not [f for f in by(found, "memory-size") if f["path"] in ("MEMORY.md", f"memory/{TODAY}.md")]


def test_doctor_soul_evil_enabled_without_its_file(ws: Path, cli: Any) -> None:
    with (ws / "soulframe.toml").open("a") as fh:
        fh.write('[soul_evil]\nenabled = true\nat = "23:30"\nduration = "30m"\n')
    code, found = findings(cli, ws)
    assert code == 1
    evil = by(found, "soul-evil")
    assert evil and evil[0]["level"] == "problem" and "SOUL_EVIL.md does not exist" in evil[0]["message"]
    (ws / "SOUL_EVIL.md").write_text("# SOUL.md\nMischievous.\n")
    code, found = findings(cli, ws)
    assert not by(found, "soul-evil")


def test_checks_run_once_however_often_the_cli_is_built(tmp_path: Path) -> None:
    from soulframe import Agent
    from soulframe._engine.cli.doctor import all_checks
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli
    from soulframe_memory.checks import CHECKS
    from soulframe_skills.checks import skills

    pm = make_plugin_manager()
    build_cli(pm)
    build_cli(pm)
    checks = all_checks(Agent.open(tmp_path, pm=pm))
    for check in (*CHECKS, skills):
        assert checks.count(check) == 1


def _model_installed() -> bool:
    try:
        from soulframe_embeddings.local import LocalProvider
    except ImportError:
        return False
    return bool(LocalProvider().available())


@pytest.mark.skipif(not _model_installed(), reason="offline model not installed (soulframe models install)")
def test_doctor_with_the_offline_model_says_nothing_of_keyword_only_and_loads_no_model(
        ws: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    cfg = ws / "soulframe.toml"
    cfg.write_text(cfg.read_text().replace("[embedding]\nauto_order = []\n", '[embedding]\nprovider = "local"\n'))
    code = (
        "import json, sys\n"
        "from soulframe import Agent\n"
        "from soulframe.cli import build_cli\n"
        "from soulframe._engine.cli.doctor import run_checks\n"
        f"agent = Agent.open({str(ws)!r})\n"
        "build_cli(agent.pm)\n"
        "found = [f.to_dict() for f in run_checks(agent)]\n"
        "print(json.dumps({'found': found, 'heavy': [m for m in ('numpy', 'tokenizers', 'safetensors') if m in sys.modules]}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert not [f for f in data["found"] if "keyword-only" in f["message"] or "semantic" in f["message"]]
    assert data["heavy"] == []  # cheap: no model, not even numpy
