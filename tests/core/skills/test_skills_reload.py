"""Hot reload: with a watcher (watchdog, debounced) and without one (stat check), the next
prompt build and search see new, edited and removed skills."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import soulframe_skills
from soulframe import Agent, Identity, PromptContext, Session, SkillSource, SoulframeError, hookimpl
from soulframe._engine.plugins import make_plugin_manager
from soulframe._engine.skills.skillset import SkillReload


def write_skill(root: Path, dirname: str, name: str, description: str) -> Path:
    d = root / dirname
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody\n")
    return d / "SKILL.md"


def ctx_for(agent: Agent) -> PromptContext:
    s = Session.main()
    return PromptContext(agent=agent, spec=agent.spec, session=s, mode="full", config=agent.config,
                         files=[], tools=agent.tools(s), identity=Identity(), now=dt.datetime(2026, 1, 1))


def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> float:
    """Poll until ``check()``; returns the seconds it took (fails after ``timeout``)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            pytest.fail(f"not seen within {timeout} s")
        time.sleep(0.01)
    return time.monotonic() - start


@pytest.fixture
def agent(workspace: Path, tmp_path: Path) -> Iterator[Agent]:
    pm = make_plugin_manager(load_entrypoints=False, plugins=[soulframe_skills])
    a = Agent.open(workspace, pm=pm, embedding__provider="none", skills__watch_debounce_ms=100,
                   skills__personal_dir=str(tmp_path / "personal"), skills__global_dir=str(tmp_path / "global"))
    yield a
    a.skills.stop_watching()


def test_without_a_watcher_the_next_prompt_build_sees_new_edited_and_removed_skills(agent: Agent, workspace: Path) -> None:
    ctx = ctx_for(agent)
    assert "<name>fresh</name>" not in (agent.skills.prompt_block(ctx) or "")
    path = write_skill(workspace / "skills", "fresh", "fresh", "first words")
    assert "<description>first words</description>" in (agent.skills.prompt_block(ctx) or "")
    # an in-place edit of the same size, immediately: same mtime tick, same size
    path.write_text(path.read_text().replace("first words", "other words"))
    assert "<description>other words</description>" in (agent.skills.prompt_block(ctx) or "")
    assert agent.skills.search("other")[0].name == "fresh"
    shutil.rmtree(path.parent)
    assert "fresh" not in agent.skills
    # a SKILL.md appearing in a directory that existed before
    (workspace / "skills" / "later").mkdir()
    assert "later" not in agent.skills
    (workspace / "skills" / "later" / "SKILL.md").write_text("---\nname: later\ndescription: d\n---\n")
    assert "later" in agent.skills


def test_watcher_reloads_on_new_edited_and_removed_skills(agent: Agent, workspace: Path) -> None:
    events: list[SkillReload] = []
    agent.skills.watch(events.append)
    assert agent.skills.watching
    version = agent.skills.version
    ctx = ctx_for(agent)

    path = write_skill(workspace / "skills", "hot", "hot", "appears while watching")
    wait_for(lambda: "<name>hot</name>" in (agent.skills.prompt_block(ctx) or ""))
    assert agent.skills.version > version
    wait_for(lambda: any("hot" in e.added for e in events))

    path.write_text(path.read_text().replace("appears while watching", "edited in place"))
    wait_for(lambda: any("hot" in e.changed for e in events))
    assert agent.skills.get("hot").description == "edited in place"  # type: ignore[union-attr]
    assert agent.skills.search("edited")[0].name == "hot"

    shutil.rmtree(path.parent)
    wait_for(lambda: any("hot" in e.removed for e in events))
    assert "hot" not in agent.skills


def test_watcher_picks_up_a_root_created_after_it_started(agent: Agent, tmp_path: Path) -> None:
    personal = tmp_path / "personal"
    assert not personal.exists() and not (personal.parent / "global").exists()
    agent.skills.watch()
    write_skill(personal, "mine", "mine", "a personal skill in a brand-new root")
    wait_for(lambda: "mine" in agent.skills)
    assert agent.skills.get("mine").tier == 3  # type: ignore[union-attr]
    # the new root is now watched recursively: a second skill arrives too
    write_skill(personal, "second", "second", "another")
    wait_for(lambda: "second" in agent.skills)


def test_atomic_rename_into_place_is_seen(agent: Agent, workspace: Path) -> None:
    agent.skills.watch()
    d = workspace / "skills" / "atomic"
    d.mkdir(parents=True)
    tmp = d / ".SKILL.md.tmp"
    tmp.write_text("---\nname: atomic\ndescription: written by an editor\n---\n")
    os.replace(tmp, d / "SKILL.md")
    wait_for(lambda: "atomic" in agent.skills)


def test_while_watching_a_prompt_build_does_not_stat_the_skill_files(agent: Agent, workspace: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(5):
        write_skill(workspace / "skills", f"s{i}", f"s{i}", "x")
    agent.skills.watch()
    ctx = ctx_for(agent)
    agent.skills.prompt_block(ctx)
    time.sleep(0.3)  # let the debounce window that watch() opened (if any) close
    agent.skills.prompt_block(ctx)
    from soulframe._engine.skills import loader as skills_loader

    calls: list[Any] = []
    real = skills_loader.sig_of
    monkeypatch.setattr("soulframe._engine.skills.skillset.sig_of", lambda p: calls.append(p) or real(p))
    for _ in range(10):
        agent.skills.prompt_block(ctx)
    assert calls == []
    agent.skills.stop_watching()
    agent.skills.prompt_block(ctx)  # may reload once (files written moments ago are re-read)
    calls.clear()
    agent.skills.prompt_block(ctx)
    # without a watcher: the roots, the skill dirs and the SKILL.md files are checked
    assert {str(workspace / "skills" / "s3"), str(workspace / "skills" / "s3" / "SKILL.md")} <= set(calls)


def test_a_store_backed_source_reloads_when_its_version_changes(workspace: Path, tmp_path: Path) -> None:
    """How a managed-mode tier plugs in: ``load`` returns skills, ``version`` says when."""
    from soulframe._engine.model import Skill

    materialised = tmp_path / "store" / "report" / "SKILL.md"
    materialised.parent.mkdir(parents=True)
    materialised.write_text("---\nname: report\ndescription: v1\n---\n")
    state = {"version": 1, "description": "weekly report v1"}

    class StorePlugin:
        @staticmethod
        @hookimpl
        def register_skill_sources(agent: Any) -> list[SkillSource]:
            def load() -> list[Skill]:
                return [Skill(name="report", description=state["description"], path=materialised, tier=4)]
            return [SkillSource(name="store", tier=4, load=load, version=lambda: state["version"])]

    pm = make_plugin_manager(load_entrypoints=False, plugins=[StorePlugin])
    agent = Agent.open(workspace, pm=pm, embedding__provider="none")
    assert agent.skills.get("report").description == "weekly report v1"  # type: ignore[union-attr]
    state.update(version=2, description="weekly report v2")
    assert agent.skills.get("report").description == "weekly report v2"  # type: ignore[union-attr]
    assert agent.skills.get("report").tier_name == "store"  # type: ignore[union-attr]


def test_closing_the_agent_stops_the_watcher(agent: Agent) -> None:
    agent.skills.watch()
    assert agent.skills.watching
    agent.close()
    assert not agent.skills.watching


def test_a_large_tree_without_a_watcher_still_shows_an_edit(workspace: Path, tmp_path: Path) -> None:
    # 600 skills = 1,200+ paths: past the point where the stat check is throttled
    for i in range(600):
        write_skill(workspace / "skills", f"s{i:03d}", f"skill-{i:03d}", f"helper {i}")
    time.sleep(0.15)  # past the coarse-mtime window, so the first load is trusted
    pm = make_plugin_manager(load_entrypoints=False, plugins=[soulframe_skills])
    agent = Agent.open(workspace, pm=pm, embedding__provider="none",
                       skills__personal_dir="", skills__global_dir="")
    assert len(agent.skills) == 603
    write_skill(workspace / "skills", "s042", "skill-042", "rewritten description")
    wait_for(lambda: agent.skills.get("skill-042").description == "rewritten description")  # type: ignore[union-attr]
    assert agent.skills.search("rewritten")[0].name == "skill-042"


def test_a_skill_file_dated_in_the_future_is_not_reparsed_on_every_build(agent: Agent, workspace: Path) -> None:
    path = write_skill(workspace / "skills", "future", "future", "dated tomorrow")
    tomorrow = time.time() + 86_400
    os.utime(path, (tomorrow, tomorrow))
    os.utime(path.parent, (tomorrow, tomorrow))
    assert "future" in agent.skills
    time.sleep(0.15)  # the skills/ directory itself was just created: let that settle
    version = agent.skills.version
    for _ in range(3):
        agent.skills.prompt_block(ctx_for(agent))
    assert agent.skills.version == version  # no reload: nothing changed


def test_a_skill_swapped_for_a_link_out_of_its_root_is_not_read_while_a_watcher_runs(
        agent: Agent, workspace: Path, tmp_path: Path) -> None:
    """The watcher's snapshot is trusted between its reloads (debounced): a SKILL.md swapped
    for a link to a file outside the skill root in that window is still never read."""
    path = write_skill(workspace / "skills", "notes", "notes", "take notes")
    agent.skills.watch()
    assert "Body" in agent.skills.read("notes")
    outside = tmp_path / "outside.txt"
    outside.write_text("---\nname: notes\ndescription: x\n---\nthe neighbour's diary\n")
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(SoulframeError, match="outside its skill root"):
        agent.skills.read("notes")


def test_a_workspace_replaced_while_watched_is_watched_again(agent: Agent, workspace: Path, tmp_path: Path) -> None:
    """Moved away and made again (restored from a backup, cloned afresh): the watch followed
    the old skills directory, the skill set trusted it, and no later skill was ever seen."""
    write_skill(workspace / "skills", "before", "before", "there before the restore")
    agent.skills.watch()
    assert "before" in agent.skills
    workspace.rename(tmp_path / "ws-before")
    write_skill(workspace / "skills", "restored", "restored", "in the workspace made again")
    wait_for(lambda: "restored" in agent.skills and "before" not in agent.skills)
    # and the new directory is the one watched now
    write_skill(workspace / "skills", "later", "later", "written after the restore")
    wait_for(lambda: "later" in agent.skills)
