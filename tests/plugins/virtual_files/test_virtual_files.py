"""DELEGATION.md and TEAM.md (soulframe_virtual_files): generated from the agent's options,
shown in <system_context>, skipped during the first run, and bad options reported clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_support import NOW, example_agent
from soulframe import Session
from soulframe._engine.model import ConfigError, ContextFile
from soulframe._engine.prompt.context import collect_context

TARGETS = [{"id": "scout", "description": "Web research"}, {"id": "ledger", "description": "Finances"}]
LEAD = {
    "name": "Launch Crew",
    "role": "lead",
    "workspace": "/srv/teams/launch",
    "members": [{"id": "writer", "description": "Drafts copy and release notes"},
                {"id": "designer", "description": "Makes the visuals"}],
}


def files(tmp_path: Path, session: Session | None = None, **kw: object) -> dict[str, ContextFile]:
    agent = example_agent(tmp_path, **kw)  # type: ignore[arg-type]
    return {f.name: f for f in collect_context(agent, session or Session.main(now=NOW)).files}


def test_delegation_md_lists_up_to_the_inline_limit(tmp_path: Path) -> None:
    f = files(tmp_path, options={"delegation_targets": TARGETS})["DELEGATION.md"]
    assert f.kind == "virtual" and f.source == "virtual"
    assert "- scout: Web research\n- ledger: Finances" in f.content
    assert "delegate_search" not in f.content


@pytest.mark.parametrize(("count", "listed"), [(15, True), (16, False)])
def test_more_targets_than_the_limit_become_a_search_instruction(tmp_path: Path, count: int, listed: bool) -> None:
    targets = [{"id": f"agent-{i}", "description": f"does job {i}"} for i in range(count)]
    f = files(tmp_path, options={"delegation_targets": targets})["DELEGATION.md"]
    assert ("- agent-14: does job 14" in f.content) is listed
    assert ("delegate_search" in f.content) is not listed
    if not listed:
        assert f"hand work to {count} other agents" in f.content


def test_the_inline_limit_is_configurable(tmp_path: Path) -> None:
    f = files(tmp_path, options={"delegation_targets": TARGETS}, delegation__inline_max_targets=1)
    assert "delegate_search" in f["DELEGATION.md"].content


def test_no_targets_no_file(tmp_path: Path) -> None:
    assert "DELEGATION.md" not in files(tmp_path, options={"delegation_targets": []})
    assert "TEAM.md" not in files(tmp_path / "b")


def test_team_md_for_a_lead(tmp_path: Path) -> None:
    text = files(tmp_path, options={"team": LEAD})["TEAM.md"].content
    assert text.startswith("# Team: Launch Crew\n\nYou lead this team.")
    assert "Shared team workspace: /srv/teams/launch" in text
    assert text.endswith("## Members\n- writer: Drafts copy and release notes\n- designer: Makes the visuals")


def test_team_md_for_a_member(tmp_path: Path) -> None:
    member = {**LEAD, "role": "member", "lead": "aria"}
    text = files(tmp_path, options={"team": member})["TEAM.md"].content
    assert "You are a member of this team. aria leads it." in text
    assert "report results to the lead" in text
    assert "You lead this team" not in text


@pytest.mark.parametrize(("options", "message"), [
    ({"delegation_targets": "scout"}, r"agent 'aria': options.delegation_targets — expected a list"),
    ({"delegation_targets": [{"description": "no id"}]}, r"options.delegation_targets\[0\] — expected a table with a non-empty 'id'"),
    ({"team": {"name": "X", "role": "boss"}}, r"options.team.role = 'boss' — expected 'lead' or 'member'"),
    ({"team": {"role": "lead"}}, r"options.team.name — expected the team's name"),
    ({"team": ["x"]}, r"options.team — expected a table"),
])
def test_bad_options_name_the_agent_and_key(tmp_path: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        files(tmp_path, options=options)


def test_virtual_files_wait_until_the_first_run_is_over(tmp_path: Path) -> None:
    got = files(tmp_path, options={"team": LEAD}, extra_files={"BOOTSTRAP.md": "# Hi\nAsk their name.\n"})
    assert "DELEGATION.md" not in got and "TEAM.md" not in got
    assert "BOOTSTRAP.md" in got


def test_in_the_prompt_they_are_system_context_in_their_own_sections(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, options={"team": LEAD})
    prompt = agent.system_prompt(Session.main(now=NOW))
    sections = {s.name: s.text for s in prompt.sections}
    assert sections["team_workspace"].startswith('## Team Workspace\n<system_context name="TEAM.md">\n# Team: Launch Crew')
    assert "## Members" not in sections["team_workspace"]
    assert sections["team_members"] == (
        "## Team Members\n- writer: Drafts copy and release notes\n- designer: Makes the visuals")
    assert sections["delegation_targets"].startswith('## Delegation Targets\n<system_context name="DELEGATION.md">')
    assert 'name="TEAM.md"' not in sections["project_context"]
    assert "<context_file name=\"DELEGATION.md\">" not in prompt.text
    assert prompt.text.index("## Workspace") < prompt.text.index("## Team Workspace") < prompt.text.index(
        "## Team Members") < prompt.text.index("## Delegation Targets")


def test_sub_agents_do_not_get_them(tmp_path: Path) -> None:
    got = files(tmp_path, Session.subagent(now=NOW), options={"team": LEAD})
    assert set(got) == {"AGENTS.md", "TOOLS.md"}


def test_context_read_of_a_virtual_file_says_it_is_already_in_context(tmp_path: Path) -> None:
    """Seed 000 §5: virtual files are rendered in <system_context> "so the LLM does not
    attempt to read or write them as files" — a model that tries anyway gets a short answer,
    not a schema error; and it still cannot write them."""
    from soulframe._engine.tools import ToolError, dispatch

    agent = example_agent(tmp_path, options={"delegation_targets": TARGETS, "team": LEAD})
    for name in ("DELEGATION.md", "TEAM.md"):
        got = dispatch(agent, "context_read", {"name": name})
        assert got["exists"] is True and got["virtual"] is True
        assert "already in your context" in got["note"] and name in got["note"]
        with pytest.raises(ToolError, match="DELEGATION.md|TEAM.md"):
            dispatch(agent, "context_write", {"name": name, "content": "x"})
    bare = example_agent(tmp_path / "bare", options={"delegation_targets": []})
    got = dispatch(bare, "context_read", {"name": "TEAM.md"})
    assert got["exists"] is False and "no team" in got["note"]
