"""Skills follow the session's user (seed 000 §12, managed mode, on a real PostgreSQL): a
skill private to bob or granted to bob is in bob's skills block, his `skill_search` and
`skill_read`, and in no one else's; an agent grant's version pin holds in every session; and
the database tier *replaces* the filesystem global tier (seed 000 §12 "Managed-mode Tier 4")."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from soulframe import Agent, Session
from soulframe._engine.config import load_config
from soulframe._engine.tools import ToolError, dispatch

pytestmark = pytest.mark.postgres


def write_skill(root: Path, name: str, body: str) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} helper for {body}\n---\n# {name}\n\n{body}\n")
    return d


@pytest.fixture
def setup(workspace: Path, pg_dsn: str, tmp_path: Path, _isolated_home: Path):  # type: ignore[no-untyped-def]
    tag = uuid.uuid4().hex[:6]
    names = {k: f"{k}-{tag}" for k in ("bobonly", "granted", "pinned", "pub", "fsglobal")}
    # a skill in the filesystem global tier (~/.soulframe/skills): not read in managed mode
    write_skill(_isolated_home / ".soulframe" / "skills", names["fsglobal"], "filesystem global")
    cfg = load_config(search=False, workspace=workspace, overrides={
        "store.backend": "postgres", "store.dsn": pg_dsn, "embedding.provider": "none",
        "agent_type": "open", "skills.global_dir": str(_isolated_home / ".soulframe" / "skills")})
    agent = Agent(cfg)
    api = agent.store.skills()
    src = tmp_path / "src"
    api.publish(write_skill(src, names["bobonly"], "bob's private payroll routine"),
                visibility="private", owner_id="bob")
    api.publish(write_skill(src, names["granted"], "granted invoice routine"), visibility="internal")
    api.grant_user(names["granted"], "bob")
    api.publish(write_skill(src, names["pinned"], "deploy steps version one"), visibility="internal")
    api.publish(write_skill(src, names["pinned"], "deploy steps version two"), visibility="internal")
    api.grant_agent(names["pinned"], agent.state_key, pinned_version=1)
    api.publish(write_skill(src, names["pub"], "public weather routine"), visibility="public")
    yield agent, names
    agent.close()


def block(agent: Agent, session: Session) -> str:
    return next(s.text for s in agent.system_prompt(session).sections if s.name == "skills")


def test_a_skill_granted_only_to_bob_is_in_bobs_session_and_nowhere_else(setup) -> None:  # type: ignore[no-untyped-def]
    agent, n = setup
    bob = Session.main(user_id="bob")
    text = block(agent, bob)
    for key in ("bobonly", "granted", "pinned", "pub"):
        assert f"<name>{n[key]}</name>" in text, key
    for other in (Session.main(user_id="alice"), Session.main(), Session.group(user_id="carol")):
        text = block(agent, other)
        assert n["bobonly"] not in text and n["granted"] not in text, other
        assert f"<name>{n['pub']}</name>" in text and f"<name>{n['pinned']}</name>" in text

    found = dispatch(agent, "skill_search", {"query": "payroll routine"}, session=bob)
    assert n["bobonly"] in {r["name"] for r in found["results"]}
    alice = Session.main(user_id="alice")
    found = dispatch(agent, "skill_search", {"query": "payroll routine"}, session=alice)
    assert n["bobonly"] not in {r["name"] for r in found["results"]}
    assert "payroll" in dispatch(agent, "skill_read", {"name": n["bobonly"]}, session=bob)["content"]
    with pytest.raises(ToolError, match="unknown skill|no skill"):
        dispatch(agent, "skill_read", {"name": n["bobonly"]}, session=alice)


def test_the_agents_version_pin_holds_in_every_session(setup) -> None:  # type: ignore[no-untyped-def]
    agent, n = setup
    for session in (Session.main(user_id="bob"), Session.main()):
        content = dispatch(agent, "skill_read", {"name": n["pinned"]}, session=session)["content"]
        assert "version one" in content and "version two" not in content


def test_the_database_tier_replaces_the_filesystem_global_tier(setup) -> None:  # type: ignore[no-untyped-def]
    agent, n = setup
    assert agent.skills.get(n["fsglobal"]) is None
    assert {s.name for s in agent.skills.sources()} >= {"managed", "workspace", "builtin"}
    assert "global" not in {s.name for s in agent.skills.sources()}
    for session in (Session.main(), Session.main(user_id="bob")):
        assert n["fsglobal"] not in block(agent, session)
