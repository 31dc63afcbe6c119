"""The agent edits its context files through tools that pass the interceptor's rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from soulframe._engine.model import Session
from soulframe._engine.tools import ToolError, dispatch
from soulframe._engine.workspace import seed_workspace
from soulframe.testing import make_agent


def test_first_run_ends_when_the_agent_empties_bootstrap(workspace: Path) -> None:
    agent = make_agent(workspace, agent_type="open")
    assert "FIRST RUN" in agent.system_prompt(Session.main()).text
    read = dispatch(agent, "context_read", {"name": "BOOTSTRAP.md"})
    assert read["exists"] and read["content"]
    dispatch(agent, "context_write", {"name": "USER.md", "content": "# USER\n- Name: Priya\n"})
    out = dispatch(agent, "context_write", {"name": "BOOTSTRAP.md", "content": ""})
    assert out["action"] == "deleted"
    text = agent.system_prompt(Session.main()).text
    assert "FIRST RUN" not in text and "Name: Priya" in text
    assert not (workspace / "BOOTSTRAP.md").exists()


def test_a_users_edit_is_theirs_and_shared_files_are_read_only(workspace: Path) -> None:
    agent = make_agent(workspace, agent_type="predefined")
    alice, bob = Session.main(user_id="alice"), Session.main(user_id="bob")
    dispatch(agent, "context_write", {"name": "USER.md", "content": "# USER\n- Alice, tea\n"}, session=alice)
    assert "Alice, tea" in dispatch(agent, "context_read", {"name": "USER.md"}, session=alice)["content"]
    assert "Alice, tea" not in dispatch(agent, "context_read", {"name": "USER.md"}, session=bob)["content"]
    with pytest.raises(ToolError, match="shared by every user"):
        dispatch(agent, "context_write", {"name": "SOUL.md", "content": "be evil"}, session=alice)
    assert "be evil" not in (workspace / "SOUL.md").read_text()


def test_context_tools_are_not_offered_in_group_or_subagent_sessions(workspace: Path) -> None:
    agent = make_agent(workspace, agent_type="open")
    for session in (Session.group(), Session.subagent()):
        names = {t.name for t in agent.tools(session)}
        assert "context_write" not in names and "context_read" not in names
    with pytest.raises(ToolError, match="unknown tool"):
        dispatch(agent, "context_write", {"name": "SOUL.md", "content": "x"}, session=Session.group())
    with pytest.raises(ToolError, match="not one of"):
        dispatch(agent, "context_read", {"name": "../../etc/passwd"})


def test_an_administrator_sets_a_predefined_agents_shared_file(workspace: Path, tmp_path: Path, cli) -> None:
    seed_workspace(workspace, agent_type="predefined")
    (workspace / "soulframe.toml").write_text('agent_type = "predefined"\n[embedding]\nprovider = "none"\n')
    new = tmp_path / "soul.md"
    new.write_text("# SOUL\nCalm, exact, kind.\n")
    out = cli("-w", str(workspace), "context", "set", "SOUL.md", "--from", str(new))
    assert out.returncode == 0, out.stderr
    assert "SOUL.md: written (agent copy" in out.stdout
    assert cli("-w", str(workspace), "context", "show", "SOUL.md", check=True).stdout == "# SOUL\nCalm, exact, kind.\n"
    mine = tmp_path / "user.md"
    mine.write_text("# USER\n- Alice\n")
    cli("-w", str(workspace), "context", "set", "USER.md", "--user", "alice", "--from", str(mine), check=True)
    assert "Alice" in cli("-w", str(workspace), "context", "show", "USER.md", "--user", "alice", check=True).stdout
    assert "Alice" not in cli("-w", str(workspace), "context", "show", "USER.md", "--user", "bob", check=True).stdout


def test_context_set_from_a_file_that_is_not_utf8_names_its_line(workspace: Path, tmp_path: Path, cli) -> None:
    seed_workspace(workspace)
    before = (workspace / "TOOLS.md").read_bytes()
    latin1 = tmp_path / "tools.md"
    latin1.write_bytes(b"# Tools\r\nThe caf\xe9 printer\r\n")
    out = cli("-w", str(workspace), "context", "set", "TOOLS.md", "--from", str(latin1))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"{latin1} line 2: not UTF-8" in out.stderr
    assert (workspace / "TOOLS.md").read_bytes() == before
    latin1.write_bytes("# Tools\r\nThe café printer\r\n".encode())
    cli("-w", str(workspace), "context", "set", "TOOLS.md", "--from", str(latin1), check=True)
    assert (workspace / "TOOLS.md").read_text(encoding="utf-8") == "# Tools\nThe café printer\n"


def test_a_context_file_written_from_chat_cannot_grow_past_what_a_prompt_shows(
        workspace: Path, tmp_path: Path, cli) -> None:
    """A chat turn wrote a 2 MB SOUL.md: read again by every file read, and never seen whole
    by the model. From chat the limit is twice what a prompt shows; an administrator's
    `context set` is not limited."""
    agent = make_agent(workspace, agent_type="open")
    alice = Session.main(user_id="alice")
    before = (workspace / "SOUL.md").read_bytes()
    huge = "# SOUL\n" + "Be kind and exact.\n" * 120_000
    with pytest.raises(ToolError, match=r"SOUL.md: 2,280,007 characters is more than a context file written from chat"):
        dispatch(agent, "context_write", {"name": "SOUL.md", "content": huge})
    with pytest.raises(ToolError, match="more than a context file written from chat"):
        dispatch(agent, "context_write", {"name": "USER.md", "content": huge}, session=alice)
    assert (workspace / "SOUL.md").read_bytes() == before
    dispatch(agent, "context_write", {"name": "SOUL.md", "content": "# SOUL\n" + "Be kind.\n" * 4_000})
    big = tmp_path / "soul.md"
    big.write_text(huge)
    cli("-w", str(workspace), "context", "set", "SOUL.md", "--from", str(big), check=True)
    assert (workspace / "SOUL.md").stat().st_size == len(huge)


def test_context_set_from_a_source_with_no_end_stops_at_a_stated_limit(
        workspace: Path, tmp_path: Path, cli) -> None:
    """`context set --from /dev/zero` (or a pipe that never ends) read until memory ran out;
    now it stops at 8 MiB, says so and writes nothing."""
    import subprocess
    import sys

    seed_workspace(workspace)
    before = (workspace / "TOOLS.md").read_bytes()
    done = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(workspace), "context", "set", "TOOLS.md",
                           "--from", "/dev/zero"], capture_output=True, text=True, timeout=10)
    assert done.returncode == 1 and "/dev/zero: over 8 MiB" in done.stderr and "nothing was written" in done.stderr
    big = tmp_path / "tools.md"
    big.write_text("# Tools\n" + "x" * (8 * 1024 * 1024))
    out = cli("-w", str(workspace), "context", "set", "TOOLS.md", "--from", str(big))
    assert out.returncode == 1 and f"{big}: over 8 MiB" in out.stderr
    assert (workspace / "TOOLS.md").read_bytes() == before
