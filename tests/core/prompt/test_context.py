"""collect_context: sources -> merge -> transforms -> session filter -> truncation.

Real workspaces on disk, the real default plugins, and small real plugins for per-user files
and transforms."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from soulframe import Agent, Session, hookimpl
from soulframe._engine.model import ContextFile, Registration
from soulframe._engine.prompt.context import collect_context, heartbeat_has_tasks, merge
from soulframe.testing import make_agent

ALL_BOOTSTRAP = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"]
NOW = dt.datetime(2026, 3, 15, 10, 0)


def write_all(ws: Path, *, memory: bool = True) -> None:
    for name in ALL_BOOTSTRAP:
        (ws / name).write_text(f"# {name}\ncontent of {name}\n")
    if memory:
        (ws / "MEMORY.md").write_text("# MEMORY\nthe user's secret preference\n")
        (ws / "memory").mkdir(exist_ok=True)
        (ws / "memory" / "2026-03-15.md").write_text("today's note\n")
        (ws / "memory" / "2026-03-14.md").write_text("yesterday's note\n")
        (ws / "memory" / "2026-03-13.md").write_text("older note\n")


# the store's per-user source seeds templates for a new user; the tests that bring their own
# per-user files leave it out
OWN_USER_FILES = ["soulframe_userfiles"]


def names(agent: Agent, session: Session) -> list[str]:
    return collect_context(agent, session).names


def test_main_session_sees_everything_in_seed_order(workspace: Path) -> None:
    write_all(workspace)
    got = names(make_agent(workspace, seed=False, timezone="UTC"), Session.main(now=NOW))
    assert got == [*ALL_BOOTSTRAP, "MEMORY.md", "memory/2026-03-14.md", "memory/2026-03-15.md"]


# the session filter matrix (seed 000 §1, seed 003 §1.2 / §5.5)
MATRIX = {
    "main": [*ALL_BOOTSTRAP, "MEMORY.md", "memory/2026-03-14.md", "memory/2026-03-15.md"],
    "subagent": ["AGENTS.md", "TOOLS.md"],
    "cron": ["AGENTS.md", "TOOLS.md"],
    "heartbeat": ["AGENTS.md", "TOOLS.md", "HEARTBEAT.md"],
    # daily logs are read in every session (seed 003 §1.2); MEMORY.md and USER.md are not
    "group": ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "HEARTBEAT.md",
              "memory/2026-03-14.md", "memory/2026-03-15.md"],
}


@pytest.mark.parametrize("kind", sorted(MATRIX))
def test_session_filter_matrix(workspace: Path, kind: str) -> None:
    write_all(workspace)
    got = names(make_agent(workspace, seed=False, timezone="UTC"), Session(kind=kind, now=NOW))  # type: ignore[arg-type]
    assert got == MATRIX[kind]


def test_heartbeat_without_light_context_still_gets_no_private_memory(workspace: Path) -> None:
    write_all(workspace)
    agent = make_agent(workspace, seed=False, timezone="UTC", prompt__heartbeat_light_context=False)
    got = names(agent, Session.heartbeat(now=NOW))
    # the daily logs are there to consolidate (seed 003 §2.5); MEMORY.md stays private
    assert got == ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
                   "memory/2026-03-14.md", "memory/2026-03-15.md"]


class LeakyTransform:
    """A transform that tries to inject private memory into every session."""

    __name__ = "leaky"

    @hookimpl
    def transform_context_files(self, files: list[ContextFile]) -> list[ContextFile]:
        return [*files, ContextFile("MEMORY.md", "injected secret"),
                ContextFile("memory/2026-03-15.md", "injected log"), ContextFile("SOUL.md", "x")]


@pytest.mark.parametrize("kind", ["subagent", "cron", "group"])
def test_filter_runs_after_transforms_so_nothing_leaks(workspace: Path, kind: str) -> None:
    write_all(workspace)
    result = collect_context(make_agent(workspace, seed=False, plugins=[LeakyTransform()], disabled=OWN_USER_FILES,
                                        timezone="UTC"), Session(kind=kind, now=NOW))  # type: ignore[arg-type]
    assert "MEMORY.md" not in result.names
    if kind != "group":  # a group session reads the daily logs (seed 003 §1.2)
        assert not any(n.startswith("memory/") for n in result.names)
    assert all("secret" not in f.content for f in result.files)


def test_lower_case_memory_md_is_read_when_it_is_the_only_one(workspace: Path) -> None:
    (workspace / "memory.md").write_text("lower-case memory\n")
    result = collect_context(make_agent(workspace, seed=False, timezone="UTC"), Session.main(now=NOW))
    assert result.names == ["memory.md"]
    assert collect_context(make_agent(workspace, seed=False, timezone="UTC"), Session.group(now=NOW)).names == []


def test_daily_logs_follow_the_agent_timezone(workspace: Path) -> None:
    (workspace / "memory").mkdir()
    for day in ("2026-03-14", "2026-03-15", "2026-03-16"):
        (workspace / "memory" / f"{day}.md").write_text(day)
    # 23:30 UTC on the 15th is already the 16th in Tokyo
    moment = dt.datetime(2026, 3, 15, 23, 30, tzinfo=dt.UTC)
    tokyo = Agent.open(workspace, timezone="Asia/Tokyo")
    assert names(tokyo, Session.main(now=moment)) == ["memory/2026-03-15.md", "memory/2026-03-16.md"]
    utc = Agent.open(workspace, timezone="UTC")
    assert names(utc, Session.main(now=moment)) == ["memory/2026-03-14.md", "memory/2026-03-15.md"]


def test_missing_and_empty_files_are_skipped(workspace: Path) -> None:
    (workspace / "SOUL.md").write_text("   \n\n")
    (workspace / "AGENTS.md").write_text("rules")
    assert names(make_agent(workspace, seed=False, timezone="UTC"), Session.main(now=NOW)) == ["AGENTS.md"]


def test_bootstrapping_only_while_bootstrap_md_has_content(workspace: Path) -> None:
    write_all(workspace, memory=False)
    agent = make_agent(workspace, seed=False, timezone="UTC")
    assert collect_context(agent, Session.main(now=NOW)).bootstrapping is True
    # the ritual ends by writing an empty BOOTSTRAP.md
    (workspace / "BOOTSTRAP.md").write_text("")
    result = collect_context(agent, Session.main(now=NOW))
    assert result.bootstrapping is False
    assert "BOOTSTRAP.md" not in result.names
    # a sub-agent is never "bootstrapping"
    (workspace / "BOOTSTRAP.md").write_text("ritual")
    assert collect_context(agent, Session.subagent(now=NOW)).bootstrapping is False


# --------------------------------------------------------------------------- per-user merge


class UserFiles:
    """A per-user source like a store's user_context_files table (seed 000 §4, §6)."""

    __name__ = "userfiles"

    def __init__(self, files: dict[str, dict[str, str]]) -> None:
        self.files = files

    @hookimpl
    def register_context_sources(self) -> list[Registration]:
        return [Registration("users", lambda agent: self)]

    name = "users"

    def load(self, agent: Any, session: Session) -> list[ContextFile]:
        mine = self.files.get(session.user_id or "", {})
        return [ContextFile(n, c, source="users", scope="user") for n, c in mine.items()]


class VirtualFiles:
    __name__ = "virtualfiles"
    name = "test-virtual"

    @hookimpl
    def register_context_sources(self) -> list[Registration]:
        return [Registration("test-virtual", lambda agent: self)]

    def load(self, agent: Any, session: Session) -> list[ContextFile]:
        return [ContextFile("TEAM.md", "team roster", source="virtual", kind="virtual"),
                ContextFile("DELEGATION.md", "targets", source="virtual", kind="virtual")]


def test_per_user_files_override_agent_files_and_base_only_files_are_kept(workspace: Path) -> None:
    write_all(workspace, memory=False)
    (workspace / "BOOTSTRAP.md").unlink()
    users = UserFiles({"alice": {"USER.md": "Alice, prefers tea", "SOUL.md": "alice's soul"}})
    agent = make_agent(workspace, seed=False, plugins=[users, VirtualFiles()], disabled=OWN_USER_FILES,
                       timezone="UTC")
    alice = collect_context(agent, Session.main(user_id="alice", now=NOW))
    by_name = {f.name: f for f in alice.files}
    assert by_name["USER.md"].content == "Alice, prefers tea"
    assert by_name["USER.md"].scope == "user"
    assert by_name["SOUL.md"].content == "alice's soul"
    assert by_name["AGENTS.md"].scope == "agent"  # base-only: kept
    assert alice.names[-2:] == ["TEAM.md", "DELEGATION.md"]  # virtual files after the bootstrap files
    bob = collect_context(agent, Session.main(user_id="bob", now=NOW))
    assert bob.file("USER.md") is not None and "Alice" not in bob.file("USER.md").content  # type: ignore[union-attr]


def test_merge_user_scope_wins_whatever_the_source_order() -> None:
    user = ContextFile("USER.md", "user copy", scope="user")
    base = ContextFile("USER.md", "agent copy", scope="agent")
    assert merge([[user], [base]])[0].content == "user copy"
    assert merge([[base], [user]])[0].content == "user copy"
    later = ContextFile("USER.md", "later agent copy", scope="agent")
    assert merge([[base], [later]])[0].content == "later agent copy"


def test_virtual_files_are_left_out_during_the_first_run(workspace: Path) -> None:
    write_all(workspace, memory=False)
    agent = make_agent(workspace, seed=False, plugins=[VirtualFiles()], disabled=OWN_USER_FILES,
                       timezone="UTC")
    assert "TEAM.md" not in collect_context(agent, Session.main(now=NOW)).names
    (workspace / "BOOTSTRAP.md").unlink()
    assert "TEAM.md" in collect_context(agent, Session.main(now=NOW)).names


class BrokenTransform:
    __name__ = "broken"

    @hookimpl
    def transform_context_files(self, files: list[ContextFile]) -> list[ContextFile]:
        raise RuntimeError("boom")


def test_a_failing_transform_is_a_warning_not_a_traceback(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("rules")
    with pytest.warns(UserWarning, match="broken.*boom"):
        result = collect_context(make_agent(workspace, seed=False, plugins=[BrokenTransform()],
                                                disabled=OWN_USER_FILES, timezone="UTC"), Session.main(now=NOW))
    assert result.names == ["AGENTS.md"]
    assert any("boom" in w for w in result.warnings)


def test_truncation_notices_reach_the_result(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("A" * 30_000)
    result = collect_context(make_agent(workspace, seed=False, timezone="UTC"), Session.main(now=NOW))
    (notice,) = result.notices
    assert notice.name == "AGENTS.md" and notice.original_chars == 30_000
    assert "[...truncated, read AGENTS.md for full content...]" in result.files[0].content


def test_unknown_truncation_policy_is_a_clear_error(workspace: Path) -> None:
    from soulframe._engine.model import UnknownNameError

    with pytest.raises(UnknownNameError, match=r"bootstrap.truncation.*'hed-tail'.*did you mean 'head-tail'"):
        collect_context(make_agent(workspace, seed=False, timezone="UTC", bootstrap__truncation="hed-tail"), Session.main())


# --------------------------------------------------------------------------- heartbeat


@pytest.mark.parametrize("text,expected", [
    ("", False),
    (None, False),
    ("# HEARTBEAT.md\n\n## Tasks\n", False),
    ("# HEARTBEAT\n<!-- - check the server -->\n- \n- [ ]\n* \n---\n", False),
    ("<!--\nmulti-line\ncomment\n-->\n## Tasks\n", False),
    ("# HEARTBEAT\n- Check the backup server.\n", True),
    ("Check mail", True),
    ("## Tasks\n- [ ] water the plants\n", True),
])
def test_heartbeat_has_tasks(text: str | None, expected: bool) -> None:
    assert heartbeat_has_tasks(text) is expected


def test_the_heartbeat_template_has_nothing_to_do() -> None:
    from soulframe._engine.workspace import workspace_templates

    template = {t.name: t for t in workspace_templates()}["HEARTBEAT.md"]
    assert heartbeat_has_tasks(template.content) is False
