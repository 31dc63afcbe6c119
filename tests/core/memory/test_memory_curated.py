"""`memory remember --curated` files a note in MEMORY.md's `## Notes` section, not under
the template's last heading (docs/memory.md "Where a curated note goes")."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from conftest import run_cli
from soulframe import Agent
from soulframe._engine.memory.curated import file_note
from soulframe._engine.memory.provenance import strip as unmarked


def sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("#"):
            current = line
            out[current] = []
        elif line.strip():
            out.setdefault(current, []).append(line)
    return out


def test_after_init_the_note_is_not_filed_under_lessons_learned(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    out = run_cli("-w", str(workspace), "memory", "remember", "--curated", "Lease renewed until 2027-10")
    assert out.returncode == 0, out.stderr
    text = unmarked((workspace / "MEMORY.md").read_text())
    got = sections(text)
    assert got["## Lessons learned"] == []
    today = dt.date.today().isoformat()
    assert got["## Notes"] == [f"- Lease renewed until 2027-10 (added {today})"]
    assert text.rstrip().endswith(f"(added {today})")
    # the next one joins it, even after the owner added a section below
    (workspace / "MEMORY.md").write_text(text + "\n## Projects\n\n- Studio site relaunch\n")
    run_cli("-w", str(workspace), "memory", "remember", "--curated", "Prefers invoices as PDF", check=True)
    got = sections((workspace / "MEMORY.md").read_text())
    assert [ln.split(" (added")[0] for ln in got["## Notes"]] == [
        "- Lease renewed until 2027-10", "- Prefers invoices as PDF"]
    assert got["## Projects"] == ["- Studio site relaunch"]


def test_file_note_cases() -> None:
    e = "- x (added 2026-01-01)\n"
    assert file_note("", e) == "# MEMORY.md\n\n" + e
    flat = "# MEMORY\n- a\n- b\n"
    assert file_note(flat, e) == flat + e
    assert file_note("# M\n\n## Notes\n\n## People\n- Jonas\n", e) == "# M\n\n## Notes\n\n" + e + "\n## People\n- Jonas\n"
    assert file_note("# M\n## Notes\n- old\n\n## People\n", e) == "# M\n## Notes\n- old\n" + e + "\n## People\n"
    assert file_note("# M\n\n## People\n- Jonas", e) == "# M\n\n## People\n- Jonas\n\n## Notes\n\n" + e
    # a deeper heading inside Notes stays part of it
    assert file_note("## Notes\n### 2026\n- a\n## B\n", e) == "## Notes\n### 2026\n- a\n" + e + "## B\n"


def test_concurrent_curated_notes_are_all_kept(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    agent = Agent.open(workspace, embedding__provider="none")
    notes = [f"note number {i}" for i in range(20)]
    threads = [threading.Thread(target=agent.memory.remember, args=(n,), kwargs={"curated": True}) for n in notes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = sections((workspace / "MEMORY.md").read_text())["## Notes"]
    assert sorted(ln.split(" (added")[0] for ln in got) == sorted(f"- {n}" for n in notes)
