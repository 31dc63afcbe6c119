"""Per-user context files in standalone mode (seed 000 §3–4, §6): SQLite rows keyed by a
deterministic UUID v5 of the agent's key, seeding that never overwrites, the context-file
interceptor, and what two users of one agent see in their prompts. Real SQLite, real files."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest
from soulframe._engine import agentstore
from soulframe._engine.agentstore import standalone_agent_id
from soulframe._engine.model import Session, SoulframeError
from soulframe._engine.workspace import seed_workspace, workspace_templates
from soulframe.testing import make_agent
from soulframe_userfiles.rules import (
    ContextFileReadOnlyError,
    read_context_file,
    seed_user_files,
    write_context_file,
)

SEVEN = {"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"}


def template(name: str) -> str:
    return next(t.content for t in workspace_templates() if t.name == name)


def test_standalone_ids_are_uuid5_of_the_key_and_stable():
    a = standalone_agent_id("support-bot")
    assert a == uuid.uuid5(agentstore.STANDALONE_NAMESPACE, "soulframe-standalone:support-bot")
    assert a.version == 5
    assert standalone_agent_id("support-bot") == a
    assert standalone_agent_id("other") != a


def test_open_agent_user_gets_all_seven_files_and_predefined_two(workspace):
    seed_workspace(workspace, agent_type="open")
    open_agent = make_agent(workspace, seed=False, agent_type="open")
    assert set(seed_user_files(open_agent, "alice")) == SEVEN
    ws2 = workspace.parent / "ws2"
    seed_workspace(ws2, agent_type="predefined")
    pre = make_agent(ws2, seed=False, agent_type="predefined", state_dir=workspace.parent / "state2")
    assert set(seed_user_files(pre, "alice")) == {"USER.md", "BOOTSTRAP.md"}


def test_seeding_is_idempotent_and_never_overwrites(workspace):
    seed_workspace(workspace, agent_type="predefined")
    agent = make_agent(workspace, seed=False, agent_type="predefined")
    seed_user_files(agent, "alice")
    write_context_file(agent, "alice", "USER.md", "# USER\nName: Alice\n")
    assert seed_user_files(agent, "alice") == []
    assert read_context_file(agent, "alice", "USER.md") == "# USER\nName: Alice\n"
    # an emptied file is refilled from the template (it holds no content to protect)
    agentstore.context_store(agent).write_user_file("alice", "USER.md", "  \n")
    assert seed_user_files(agent, "alice") == ["USER.md"]
    assert read_context_file(agent, "alice", "USER.md") == template("USER.md")


def test_open_agent_users_start_from_the_agents_own_files_but_not_its_user_md(workspace):
    seed_workspace(workspace, agent_type="open")
    (workspace / "SOUL.md").write_text("# SOUL\nTerse pirate.\n")
    (workspace / "USER.md").write_text("# USER\nOwner: Bob, lives in Oslo\n")
    agent = make_agent(workspace, seed=False, agent_type="open")
    seed_user_files(agent, "alice")
    assert read_context_file(agent, "alice", "SOUL.md") == "# SOUL\nTerse pirate.\n"
    assert "Oslo" not in read_context_file(agent, "alice", "USER.md")


def test_rows_survive_a_restart_under_the_same_uuid(workspace, tmp_path):
    seed_workspace(workspace, agent_type="predefined")
    agent = make_agent(workspace, seed=False, agent_type="predefined")
    write_context_file(agent, "alice", "USER.md", "Alice, UTC+2")
    agent.close()
    again = make_agent(workspace, seed=False, agent_type="predefined")
    assert read_context_file(again, "alice", "USER.md") == "Alice, UTC+2"
    db = Path(again.config.get("state_dir")).expanduser() / "agents.sqlite"
    assert db.stat().st_mode & 0o777 == 0o600
    rows = sqlite3.connect(db).execute("SELECT DISTINCT agent_id FROM user_context_files").fetchall()
    assert rows == [(str(standalone_agent_id(again.state_key)),)]


def test_empty_bootstrap_deletes_it_before_the_read_only_rule(workspace):
    seed_workspace(workspace, agent_type="predefined")
    agent = make_agent(workspace, seed=False, agent_type="predefined")
    seed_user_files(agent, "alice")
    assert read_context_file(agent, "alice", "BOOTSTRAP.md")
    out = write_context_file(agent, "alice", "BOOTSTRAP.md", "")
    assert (out.action, out.scope) == ("deleted", "user")
    assert read_context_file(agent, "alice", "BOOTSTRAP.md") is None
    # never seeded again: the ritual is over for alice, not for bob
    assert "BOOTSTRAP.md" not in seed_user_files(agent, "alice")
    assert "BOOTSTRAP.md" in seed_user_files(agent, "bob")
    # without a user, a predefined agent's BOOTSTRAP.md is agent-level: the deletion still
    # wins over "read-only from chat" (else the ritual could never end)
    (workspace / "BOOTSTRAP.md").write_text("# BOOTSTRAP\n")
    assert write_context_file(agent, None, "BOOTSTRAP.md", " \n").action == "deleted"
    assert not (workspace / "BOOTSTRAP.md").exists()


def test_predefined_shared_files_are_read_only_from_chat(workspace):
    seed_workspace(workspace, agent_type="predefined")
    agent = make_agent(workspace, seed=False, agent_type="predefined")
    before = (workspace / "SOUL.md").read_text()
    with pytest.raises(ContextFileReadOnlyError, match="SOUL.md is shared"):
        write_context_file(agent, "alice", "SOUL.md", "be evil")
    with pytest.raises(ContextFileReadOnlyError):
        write_context_file(agent, None, "AGENTS.md", "x")
    assert (workspace / "SOUL.md").read_text() == before
    # the user's own files are writable; the admin path may change shared files
    assert write_context_file(agent, "alice", "USER.md", "Alice").scope == "user"
    assert write_context_file(agent, None, "SOUL.md", "# SOUL\nnew", from_chat=False).where == "workspace"
    assert (workspace / "SOUL.md").read_text() == "# SOUL\nnew"


def test_open_agent_user_edits_stay_with_that_user(workspace):
    seed_workspace(workspace, agent_type="open")
    agent = make_agent(workspace, seed=False, agent_type="open")
    write_context_file(agent, "alice", "SOUL.md", "# SOUL\nAlice's pirate")
    assert read_context_file(agent, "alice", "SOUL.md") == "# SOUL\nAlice's pirate"
    assert "pirate" not in (read_context_file(agent, "bob", "SOUL.md") or "")
    assert "pirate" not in (workspace / "SOUL.md").read_text()


def test_not_a_context_file_is_refused(workspace):
    agent = make_agent(workspace, seed=False)
    with pytest.raises(SoulframeError, match="not a context file"):
        read_context_file(agent, "alice", "../etc/passwd")
    with pytest.raises(SoulframeError, match="not a context file"):
        write_context_file(agent, "alice", "MEMORY.md", "x")


def test_two_users_of_a_predefined_agent_see_their_own_user_md_in_the_prompt(workspace):
    seed_workspace(workspace, agent_type="predefined")
    agent = make_agent(workspace, seed=False, agent_type="predefined")
    alice = Session.main(user_id="alice")
    bob = Session.main(user_id="bob")
    agent.system_prompt(alice)  # first session seeds alice's copies
    write_context_file(agent, "alice", "USER.md", "# USER\nName: Alice Liddell, tea lover\n")
    write_context_file(agent, "bob", "USER.md", "# USER\nName: Bob Builder, coffee\n")
    pa = agent.system_prompt(alice).text
    pb = agent.system_prompt(bob).text
    assert "Alice Liddell" in pa and "Bob Builder" not in pa
    assert "Bob Builder" in pb and "Alice Liddell" not in pb
    # both still share the agent's SOUL.md
    soul = (workspace / "SOUL.md").read_text().strip().splitlines()[-1]
    assert soul in pa and soul in pb


def test_a_finished_bootstrap_does_not_come_back_through_the_workspace(workspace):
    seed_workspace(workspace, agent_type="open")
    assert (workspace / "BOOTSTRAP.md").exists()  # the owner's ritual, still pending
    agent = make_agent(workspace, seed=False, agent_type="open")
    alice = Session.main(user_id="alice")
    first = agent.system_prompt(alice)
    assert any(f.name == "BOOTSTRAP.md" and f.scope == "user" for f in first.context_files)
    write_context_file(agent, "alice", "BOOTSTRAP.md", "")
    again = make_agent(workspace, seed=False, agent_type="open")  # a new process
    names = [f.name for f in again.system_prompt(alice).context_files]
    assert "BOOTSTRAP.md" not in names


def test_the_owner_of_a_standalone_workspace_sees_the_workspace_itself(workspace):
    seed_workspace(workspace)
    (workspace / "USER.md").write_text("# USER\nName: Priya, the owner\n")
    (workspace / "BOOTSTRAP.md").unlink(missing_ok=True)
    import attrs

    agent = make_agent(workspace, seed=False)
    agent.spec = attrs.evolve(agent.spec, owner_ids=("priya",))
    owner = agent.system_prompt(Session.main(user_id="priya")).text
    assert "Priya, the owner" in owner
    assert "FIRST RUN" not in owner  # the owner is not put through a first-run ritual
    assert read_context_file(agent, "priya", "USER.md") == "# USER\nName: Priya, the owner\n"
    # anyone else still gets a USER.md of their own, never the owner's
    guest = agent.system_prompt(Session.main(user_id="guest")).text
    assert "Priya, the owner" not in guest


def test_a_store_that_cannot_be_read_never_shows_the_owners_files_to_a_user(workspace):
    """The per-user source failing (the SQLite file corrupt, or locked by another process)
    was skipped with a warning, and the merge then showed the workspace's USER.md - the
    owner's - in alice's prompt. It fails closed now."""
    with make_agent(workspace) as agent:
        (workspace / "USER.md").write_text("# USER.md\n- Owner's bank: Nordbank, account 4471\n")
        assert "Nordbank" not in agent.system_prompt(Session.main(user_id="alice")).text
    state = workspace.parent / f"{workspace.name}-state"
    for journal in state.glob("agents.sqlite-*"):
        journal.unlink()
    (state / "agents.sqlite").write_bytes(b"\xff" * 8192)  # damaged beyond reading
    with make_agent(workspace, seed=False) as agent:
        with pytest.raises(SoulframeError) as err:
            agent.system_prompt(Session.main(user_id="alice"))
        assert str(err.value).startswith("the context files of user 'alice' could not be read from the store")
        assert "Nordbank" in agent.system_prompt(Session.main()).text  # the owner's own session
