"""Skills speed: search over 5,000 skills, the warm prompt block, and hot-reload latency.

Targets (issue 5):
* a skill search over 5,000 skills: median <= 2 ms warm;
* a new or edited SKILL.md is visible to the next prompt build within 1 s of the write
  (the watcher's debounce is 500 ms);
* the warm skills block for 40 skills stays far below the prompt's 1 ms budget.

Run: ``pytest tests/benchmarks/bench_skills.py -o python_files=bench_*.py -s``.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import soulframe_skills
from soulframe import Agent, Identity, PromptContext, Session
from soulframe.plugins import make_plugin_manager

WORDS = (
    "deploy site backup database invoice calendar translate weather recipe budget travel email "
    "report summary meeting notes review code test release docker kubernetes python sql chart "
    "image resize pdf merge slack github issue pull request lint format schedule reminder "
    "expense receipt contract legal tax health workout music playlist podcast news feed"
).split()


def make_skills(root: Path, n: int) -> None:
    for i in range(n):
        words = [WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(6)]
        d = root / f"skill-{i:05d}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: {words[0]}-{words[1]}-{i}\n"
            f"description: {' '.join(words)} helper number {i} for everyday tasks\n---\n"
            f"# {words[2].title()} {words[3]}\n\n## Steps\n1. Do the thing.\n"
        )


def open_agent(ws: Path, tmp: Path, **over: object) -> Agent:
    pm = make_plugin_manager(load_entrypoints=False, plugins=[soulframe_skills])
    return Agent.open(ws, pm=pm, embedding__provider="none",
                      skills__personal_dir=str(tmp / "p"), skills__global_dir=str(tmp / "g"), **over)


def median_us(fn: Callable[[], object], runs: int = 200) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def ctx_for(agent: Agent) -> PromptContext:
    s = Session.main()
    return PromptContext(agent=agent, spec=agent.spec, session=s, mode="full", config=agent.config,
                         files=[], tools=agent.tools(s), identity=Identity(), now=dt.datetime(2026, 1, 1))


def test_search_over_5000_skills(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_skills(ws / "skills", 5000)
    time.sleep(0.2)  # files written moments ago are re-read once (mtime ticks are coarse)
    agent = open_agent(ws, tmp_path)
    t0 = time.perf_counter()
    n = len(agent.skills)
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    agent.skills.search("deploy")
    build = time.perf_counter() - t0
    queries = ["deploy the website", "merge pdf", "tax receipt expense", "kubernetes release notes",
               "weather", "podcast playlist music"]
    agent.skills.watch()
    time.sleep(0.7)  # let the watcher's first debounce window pass
    agent.skills.search("warm up")
    watched = statistics.median(median_us(lambda q=q: agent.skills.search(q)) for q in queries)
    agent.skills.stop_watching()
    agent.skills.search("warm up")
    polled = statistics.median(median_us(lambda q=q: agent.skills.search(q), runs=30) for q in queries)
    hits = agent.skills.search("merge pdf")
    print(f"\n  {n} skills: cold load {load * 1000:.0f} ms, BM25 index build {build * 1000:.0f} ms")
    print(f"  search, warm, watcher running : median {watched / 1000:.3f} ms (target <= 2 ms)")
    print(f"  search, warm, no watcher      : median {polled / 1000:.3f} ms "
          f"(the edit check over ~{2 * n:,} paths runs at most every ~150 ms)")
    print(f"  top hit for 'merge pdf': {hits[0].name} ({hits[0].score:.2f})")
    assert n == 5003
    assert watched <= 2000, f"warm search took {watched:.0f} us (target 2 ms)"


def test_warm_prompt_block_for_40_skills(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_skills(ws / "skills", 37)  # + 3 built-ins = 40
    agent = open_agent(ws, tmp_path)
    ctx = ctx_for(agent)
    assert len(agent.skills) == 40 and agent.skills.prompt_block(ctx)
    polled = median_us(lambda: agent.skills.prompt_block(ctx), runs=500)
    agent.skills.watch()
    time.sleep(0.7)
    agent.skills.prompt_block(ctx)
    watched = median_us(lambda: agent.skills.prompt_block(ctx), runs=2000)
    agent.skills.stop_watching()
    print(f"\n  skills block, 40 skills, warm: watcher running {watched:.1f} us; "
          f"no watcher {polled:.1f} us (stats 85 paths)")
    assert watched < 100


def visible_after_write(agent: Agent, write: Callable[[], None], check: Callable[[str], bool]) -> float:
    ctx = ctx_for(agent)
    agent.skills.prompt_block(ctx)  # warm: any pending reload happens before the write
    write()
    start = time.perf_counter()
    while not check(agent.skills.prompt_block(ctx) or ""):
        if time.perf_counter() - start > 5:
            raise AssertionError("change not visible within 5 s")
        time.sleep(0.002)
    return time.perf_counter() - start


def test_hot_reload_latency(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_skills(ws / "skills", 37)
    # 40 skills are past the inline threshold: force inline so the new entry shows in the block
    agent = open_agent(ws, tmp_path, skills__mode="inline")
    agent.skills.watch()
    time.sleep(0.7)
    new_dir = ws / "skills" / "brand-new"

    def create() -> None:
        new_dir.mkdir()
        (new_dir / "SKILL.md").write_text("---\nname: brand-new\ndescription: first\n---\n")

    def edit() -> None:
        (new_dir / "SKILL.md").write_text("---\nname: brand-new\ndescription: second edit\n---\n")

    created = visible_after_write(agent, create, lambda b: "<name>brand-new</name>" in b)
    time.sleep(0.7)
    edited = visible_after_write(agent, edit, lambda b: "second edit" in b)
    agent.skills.stop_watching()
    time.sleep(0.2)

    def edit_again() -> None:
        (new_dir / "SKILL.md").write_text("---\nname: brand-new\ndescription: third edit\n---\n")

    polled = visible_after_write(agent, edit_again, lambda b: "third edit" in b)
    print(f"\n  watcher (debounce 500 ms): new skill visible after {created * 1000:.0f} ms, "
          f"edit after {edited * 1000:.0f} ms (target <= 1,000 ms)")
    print(f"  no watcher (stat check)  : edit visible after {polled * 1000:.1f} ms")
    assert created <= 1.0 and edited <= 1.0 and polled <= 1.0
