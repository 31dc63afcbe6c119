"""What each prompt mode is made of beyond the section table: `none` is the identity line
only (seed 002), AGENTS.md's mode variants and the other stable files seed 002 names
(AGENTS_CORE.md, AGENTS_TASK.md, CAPABILITIES.md, USER_PREDEFINED.md), the markers for
missing expected files (seed 003 §2.4, §3.1) and sub-agent spawning in minimal mode
(seed 000 §5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli
from prompt_support import NOW, example_agent
from soulframe import Session

VARIANTS = {
    "AGENTS_CORE.md": "# AGENTS_CORE\nCore rule: answer in one paragraph.\n",
    "AGENTS_TASK.md": "# AGENTS_TASK\nTask rule: finish without asking.\n",
    "CAPABILITIES.md": "# CAPABILITIES\nCan book meeting rooms through the calendar API.\n",
    "USER_PREDEFINED.md": "# USER_PREDEFINED\nEvery user is addressed formally.\n",
}
FULL_AGENTS = "Working style"  # a line of the fixture's AGENTS.md


def prompt_text(tmp_path: Path, mode: str | None = None, session: Session | None = None,
                **kw: object) -> str:
    agent = example_agent(tmp_path, **kw)  # type: ignore[arg-type]
    return agent.system_prompt(session or Session.main(channel="telegram", now=NOW), mode=mode).text


# --------------------------------------------------------------------------- none mode


def test_none_mode_is_the_identity_line_only(tmp_path: Path) -> None:
    agent = example_agent(tmp_path)
    prompt = agent.system_prompt(Session.main(channel="telegram", now=NOW), mode="none")
    assert [s.name for s in prompt.sections] == ["identity"]
    assert prompt.stable_prefix == "You are a personal assistant running in telegram (direct chat). Your name is Aria 🌿."
    for leaked in ("## Tooling", "## Safety", "## Workspace", "MEMORY.md", "Alice Moreau", "Project Context"):
        assert leaked not in prompt.text
    assert len(prompt.text) < 200


def test_none_mode_skips_the_first_run_notice_too(tmp_path: Path) -> None:
    text = prompt_text(tmp_path, "none", extra_files={"BOOTSTRAP.md": "# BOOTSTRAP\nAsk the name.\n"})
    assert "FIRST RUN" not in text and "BOOTSTRAP" not in text


# --------------------------------------------------------------------------- mode variants


@pytest.mark.parametrize(("mode", "shown", "hidden"), [
    ("full", ["AGENTS.md", "CAPABILITIES.md"], ["AGENTS_CORE.md", "AGENTS_TASK.md", "USER_PREDEFINED.md"]),
    ("task", ["AGENTS_TASK.md", "CAPABILITIES.md"], ["AGENTS.md", "AGENTS_CORE.md", "USER_PREDEFINED.md"]),
    ("minimal", ["AGENTS_CORE.md", "CAPABILITIES.md"], ["AGENTS.md", "AGENTS_TASK.md", "USER_PREDEFINED.md"]),
    ("none", [], ["AGENTS.md", "AGENTS_CORE.md", "AGENTS_TASK.md", "CAPABILITIES.md"]),
])
def test_each_mode_reads_its_own_agents_file(tmp_path: Path, mode: str, shown: list[str],
                                             hidden: list[str]) -> None:
    text = prompt_text(tmp_path, mode, extra_files=VARIANTS)
    for name in shown:
        assert f'<context_file name="{name}">' in text, (mode, name)
    for name in hidden:
        assert f'name="{name}"' not in text, (mode, name)
    assert ("Core rule" in text) == (mode == "minimal")
    assert ("Task rule" in text) == (mode == "task")
    assert (FULL_AGENTS in text) == (mode == "full")


def test_a_mode_without_its_variant_keeps_agents_md(tmp_path: Path) -> None:
    for mode in ("task", "minimal"):
        text = prompt_text(tmp_path / mode, mode, extra_files={"CAPABILITIES.md": VARIANTS["CAPABILITIES.md"]})
        assert '<context_file name="AGENTS.md">' in text and FULL_AGENTS in text
        assert "Can book meeting rooms" in text


def test_subagents_get_the_core_variant_but_not_capabilities(tmp_path: Path) -> None:
    text = prompt_text(tmp_path, session=Session.subagent(now=NOW), extra_files=VARIANTS)
    assert '<context_file name="AGENTS_CORE.md">' in text and "Core rule" in text
    assert FULL_AGENTS not in text
    assert "CAPABILITIES" not in text and "USER_PREDEFINED" not in text
    assert '<context_file name="TOOLS.md">' in text


def test_user_predefined_is_for_predefined_agents(tmp_path: Path) -> None:
    open_text = prompt_text(tmp_path / "open", extra_files=VARIANTS)
    assert "addressed formally" not in open_text
    pre = prompt_text(tmp_path / "pre", extra_files=VARIANTS, spec={"type": "predefined"})
    assert '<internal_config name="USER_PREDEFINED.md">' in pre and "addressed formally" in pre
    # a stable file: above the cache boundary
    assert pre.index("addressed formally") < pre.index("<!-- SOULFRAME_CACHE_BOUNDARY -->")


def test_the_cli_shows_the_task_variant(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("# AGENTS\nlong rules\n")
    (ws / "AGENTS_TASK.md").write_text("# AGENTS_TASK\nshort task rules\n")
    out = run_cli("-w", str(ws), "prompt", "--mode", "task", check=True).stdout
    assert "short task rules" in out and "long rules" not in out


# --------------------------------------------------------------------------- missing markers


def test_missing_expected_files_are_marked_with_their_path(tmp_path: Path) -> None:
    agent = example_agent(tmp_path)
    (agent.root / "SOUL.md").unlink()
    (agent.root / "TOOLS.md").unlink()
    text = agent.system_prompt(Session.main(channel="telegram", now=NOW)).text
    assert f"<!-- [MISSING] SOUL.md: expected at {agent.root / 'SOUL.md'} -->" in text
    assert f"<!-- [MISSING] TOOLS.md: expected at {agent.root / 'TOOLS.md'} -->" in text
    # optional files are skipped without a marker (seed 002)
    for optional in ("BOOTSTRAP.md", "HEARTBEAT.md", "MEMORY.md", "CAPABILITIES.md", "AGENTS_TASK.md"):
        assert f"[MISSING] {optional}" not in text


def test_markers_follow_what_the_session_would_see(tmp_path: Path) -> None:
    agent = example_agent(tmp_path)
    for name in ("SOUL.md", "USER.md", "TOOLS.md"):
        (agent.root / name).unlink()
    sub = agent.system_prompt(Session.subagent(now=NOW)).text
    assert "[MISSING] TOOLS.md" in sub
    assert "[MISSING] SOUL.md" not in sub and "[MISSING] USER.md" not in sub
    group = agent.system_prompt(Session.group(channel="telegram", chat_title="crew", now=NOW)).text
    assert "[MISSING] SOUL.md" in group and "[MISSING] USER.md" not in group
    # minimal mode has no persona section, so SOUL.md is not expected there
    minimal = agent.system_prompt(Session.main(now=NOW), mode="minimal").text
    assert "[MISSING] SOUL.md" not in minimal and "[MISSING] USER.md" in minimal
    none = agent.system_prompt(Session.main(now=NOW), mode="none").text
    assert "MISSING" not in none


def test_an_empty_workspace_prompt_lists_what_is_missing(tmp_path: Path) -> None:
    ws = tmp_path / "empty"
    ws.mkdir()
    out = run_cli("-w", str(ws), "prompt", check=True).stdout
    for name in ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md"):
        assert f"<!-- [MISSING] {name}: expected at {ws / name} -->" in out
    assert "[MISSING] HEARTBEAT.md" not in out


# --------------------------------------------------------------------------- spawning


def test_minimal_mode_offers_spawning_when_a_spawn_tool_exists(tmp_path: Path) -> None:
    minimal = prompt_text(tmp_path / "m", "minimal")
    assert "## Sub-Agent Spawning" in minimal and "spawn tool" in minimal
    task = prompt_text(tmp_path / "t", "task")
    assert "## Sub-Agent Spawning" not in task
