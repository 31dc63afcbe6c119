"""Prompt build speed (``tox -e bench``; targets as ratios, see conftest.py).

A warm build (nothing changed since the last one) for a workspace of 9 context files (~3 KB)
and 40 skills costs at most 10x reading those context files from disk — the cache must make
a build cheaper than re-reading the workspace would. (The figure itself is printed: about
half a millisecond on an idle machine, where the target was once 1 ms.) ``soulframe prompt``
as a process is in bench_startup.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_support import NOW, example_agent
from soulframe import Session

from .conftest import interleaved

RUNS = 300


def add_skills(root: Path, n: int) -> None:
    for i in range(n):
        d = root / "skills" / f"skill-{i:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i:02d}\ndescription: \"Does chore number {i} for the studio: "
            f"files, invoices, backups or travel.\"\n---\n\n# Skill {i}\n\nSteps.\n"
        )


def test_warm_prompt_build_is_fast(tmp_path: Path, bench: Any) -> None:
    agent = example_agent(tmp_path)
    for name in ("skills/github", "skills/weather", "skills/invoice"):
        for f in (agent.root / name).iterdir():
            f.unlink()
        (agent.root / name).rmdir()
    add_skills(agent.root, 40)
    session = Session.main(channel="telegram", now=NOW)
    cold = agent.system_prompt(session)
    assert "skill-39" in cold.text or "skill_search" in cold.text
    # the context files this prompt holds, read the plain way (open, read, close)
    files = [agent.root / f.name for f in cold.context_files if (agent.root / f.name).is_file()]
    assert len(files) >= 5
    size = sum(p.stat().st_size for p in files)

    def read_files() -> None:
        for p in files:
            with open(p, encoding="utf-8") as fh:
                fh.read()

    warm, reading = interleaved(lambda: agent.system_prompt(session), read_files, runs=RUNS)
    bench.info("prompt workspace", f"{len(files)} context files, {size / 1024:.1f} KB; 40 skills; "
               f"{cold.tokens} tokens, {len(cold.sections)} sections; warm build "
               f"{warm.cpu * 1000:.3f} ms CPU (median)")
    bench.speed("warm prompt build", warm.cpu, reading.cpu, target=10,
                baseline_name=f"reading its {len(files)} files")
