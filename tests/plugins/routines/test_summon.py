"""Agent summoning (seed 000 §7): five files from a description in one model call, with a
fallback to the embedded templates that says why. The model is a real HTTP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, Reply, fail, say
from pg_fixtures import pg_dsn, pg_server  # noqa: F401  (fixtures)
from soulframe._engine.config import load_config
from soulframe._engine.model import SoulframeError
from soulframe._engine.workspace import seed_workspace, workspace_templates
from soulframe_routines.summon import SUMMON_FILES, SummonParseError, parse_files, summon

GOOD = "\n".join(
    f'<file name="{name}">\n# {name}\n\nRusty {name.split(".")[0].lower()} content, sarcastic.\n</file>'
    for name in SUMMON_FILES
)


def agent_at(workspace: Path, srv: FakeLLMServer | None = None, **overrides):
    from soulframe._engine.agent import Agent

    model = {}
    if srv is not None:
        model = {
            "model.provider": "openai-compatible",
            "model.name": "m",
            "model.base_url": srv.openai_base_url,
        }
    return Agent(load_config(search=False, workspace=workspace, overrides={**model, **overrides}))


def templates() -> dict[str, str]:
    return {t.name: t.content for t in workspace_templates() if t.name in SUMMON_FILES}


# --------------------------------------------------------------------------- parsing


def test_parse_is_lenient_about_form():
    reply = (
        "Sure! Here are the files:\n```xml\n"
        "<FILE name='identity.md'>- **Name:** Ferris</FILE>\n"
        '<file name="SOUL.md"><![CDATA[# SOUL\nYou <really> dislike `unsafe`.]]></file>\n'
        '<file name = "AGENTS.md">\n```markdown\n# AGENTS\n- review PRs\n```\n</file>\n'
        '<file name="TOOLS.md">Use cargo &amp; clippy &lt;always&gt;</file>\n'
        '<file name="HEARTBEAT.md">- check CI</file>\n'
        '<file name="EXTRA.md">ignored</file>\n'
        "```\nEnjoy."
    )
    files = parse_files(reply)
    assert set(files) == set(SUMMON_FILES)
    assert files["IDENTITY.md"] == "- **Name:** Ferris\n"
    assert files["SOUL.md"] == "# SOUL\nYou <really> dislike `unsafe`.\n"
    assert files["AGENTS.md"] == "# AGENTS\n- review PRs\n"
    assert files["TOOLS.md"] == "Use cargo & clippy <always>\n"


@pytest.mark.parametrize(
    "reply,message",
    [
        ("I'd rather not.", "no <file"),
        (
            GOOD.replace('<file name="TOOLS.md">', '<file name="TOOLS.md" >').replace(
                "</file>", "", 1
            ),
            "missing SOUL.md",
        ),
        (GOOD.replace("HEARTBEAT.md", "HEARTBEAT.txt"), "missing HEARTBEAT.md"),
        (
            GOOD.split('<file name="AGENTS.md">')[0] + '<file name="AGENTS.md">   </file>',
            "missing AGENTS.md",
        ),
    ],
)
def test_parse_rejects_incomplete_replies(reply, message):
    with pytest.raises(SummonParseError, match=message):
        parse_files(reply)


# --------------------------------------------------------------------------- summoning


def test_summon_writes_the_five_files_from_one_call(workspace):
    with FakeLLMServer([say(GOOD)]) as srv:
        result = summon(agent_at(workspace, srv), "sarcastic Rust reviewer")
    assert result.source == "model" and result.reason is None
    assert result.written == SUMMON_FILES
    for name in SUMMON_FILES:
        assert "sarcastic" in (workspace / name).read_text()
        assert (workspace / name).stat().st_mode & 0o777 == 0o600
    assert len(srv.requests) == 1
    sent = json.dumps(srv.requests[0].json)
    assert "sarcastic Rust reviewer" in sent and '<file name=\\"SOUL.md\\">' in sent


@pytest.mark.parametrize(
    "script,why",
    [
        ([say("Here is a persona: be sarcastic.")], "no <file"),
        ([say(GOOD.replace('name="TOOLS.md"', 'name="NOTES.md"'))], "missing TOOLS.md"),
        ([fail(500, "upstream exploded")], "HTTP 500"),
        ([say(GOOD, delay=3)], "timed out"),
    ],
)
def test_summon_falls_back_to_the_templates_and_says_why(workspace, script, why):
    with FakeLLMServer(script) as srv:
        result = summon(
            agent_at(workspace, srv, **{"model.max_retries": 0}),
            "sarcastic Rust reviewer",
            timeout=1,
        )
    assert result.source == "templates"
    assert why in (result.reason or "")
    assert result.written == SUMMON_FILES
    expected = templates()
    for name in SUMMON_FILES:
        assert (workspace / name).read_text() == expected[name]


def test_summon_without_a_model_falls_back(workspace):
    result = summon(agent_at(workspace), "sarcastic Rust reviewer")
    assert result.source == "templates"
    assert "no chat model configured" in (result.reason or "")
    assert sorted(p.name for p in workspace.iterdir() if p.suffix == ".md") == sorted(SUMMON_FILES)


def test_existing_files_are_never_overwritten_without_force(workspace):
    (workspace / "SOUL.md").write_text("My own soul.\n")
    with FakeLLMServer([say(GOOD)]) as srv:
        with pytest.raises(SoulframeError, match="SOUL.md already exist.*--force"):
            summon(agent_at(workspace, srv), "sarcastic Rust reviewer")
        assert srv.requests == []  # refused before spending tokens
        assert (workspace / "SOUL.md").read_text() == "My own soul.\n"
        summon(agent_at(workspace, srv), "sarcastic Rust reviewer", force=True)
    assert "sarcastic" in (workspace / "SOUL.md").read_text()


def test_untouched_templates_may_be_replaced_without_force(workspace):
    seed_workspace(workspace)
    with FakeLLMServer([say(GOOD)]) as srv:
        result = summon(agent_at(workspace, srv), "sarcastic Rust reviewer")
    assert result.source == "model"
    assert "sarcastic" in (workspace / "IDENTITY.md").read_text()
    assert (workspace / "USER.md").read_text() == templates_all()["USER.md"]  # not ours: untouched


def test_a_summon_ends_the_first_run_ritual_of_a_new_workspace(workspace):
    """After `init` and a summon, BOOTSTRAP.md stayed: the next prompt still told the agent
    "time to figure out who you are", and the first chat redid (and overwrote) the summoned
    identity. The untouched template is removed; one edited by hand is kept and said so."""
    from soulframe._engine.model import Session

    seed_workspace(workspace)
    assert (workspace / "BOOTSTRAP.md").is_file()
    with FakeLLMServer([say(GOOD), say(GOOD)]) as srv:
        agent = agent_at(workspace, srv)
        result = summon(agent, "sarcastic Rust reviewer")
        assert result.bootstrap == "removed" and result.to_dict()["bootstrap"] == "removed"
        assert not (workspace / "BOOTSTRAP.md").exists()
        assert "FIRST RUN" not in agent.system_prompt(Session.main()).text
        (workspace / "BOOTSTRAP.md").write_text("# BOOTSTRAP.md\nAsk about their garden first.\n")
        again = summon(agent, "sarcastic Rust reviewer", force=True)
    assert again.bootstrap == "kept"
    assert "garden" in (workspace / "BOOTSTRAP.md").read_text()


def test_a_failed_summon_leaves_the_first_run_ritual(workspace):
    seed_workspace(workspace)
    with FakeLLMServer([say("no files here")]) as srv:
        result = summon(agent_at(workspace, srv), "x")
    assert result.source == "templates" and result.bootstrap is None
    assert (workspace / "BOOTSTRAP.md").read_text() == templates_all()["BOOTSTRAP.md"]


def templates_all() -> dict[str, str]:
    return {t.name: t.content for t in workspace_templates()}


def test_a_fallback_with_force_never_replaces_personal_files(workspace):
    (workspace / "SOUL.md").write_text("My own soul.\n")
    with FakeLLMServer([Reply(raw_body=b"not json")]) as srv:
        result = summon(agent_at(workspace, srv), "x", force=True)
    assert result.source == "templates"
    assert result.kept == ("SOUL.md",)
    assert (workspace / "SOUL.md").read_text() == "My own soul.\n"
    assert set(result.written) == set(SUMMON_FILES) - {"SOUL.md"}


# --------------------------------------------------------------------------- the command


def write_config(workspace: Path, srv: FakeLLMServer | None) -> None:
    lines = ['state_dir = "state"']
    if srv is not None:
        lines += [
            "[model]",
            'provider = "openai-compatible"',
            'name = "m"',
            f'base_url = "{srv.openai_base_url}"',
        ]
    (workspace / "soulframe.toml").write_text("\n".join(lines) + "\n")


def test_cli_summon(workspace, cli):
    seed_workspace(workspace)  # as after `soulframe init`
    with FakeLLMServer([say(GOOD)]) as srv:
        write_config(workspace, srv)
        out = cli("-w", str(workspace), "agents", "summon", "sarcastic Rust reviewer")
    assert out.returncode == 0, out.stderr
    assert "Summoned agent 'default'" in out.stdout and "SOUL.md" in out.stdout
    assert "Removed BOOTSTRAP.md" in out.stdout and not (workspace / "BOOTSTRAP.md").exists()
    assert "sarcastic" in (workspace / "HEARTBEAT.md").read_text()


def test_cli_summon_fallback_is_loud_and_refusal_is_an_error(workspace, cli):
    with FakeLLMServer([say("<file>nope</file>")]) as srv:
        write_config(workspace, srv)
        out = cli("-w", str(workspace), "agents", "summon", "sarcastic Rust reviewer", "--json")
        assert out.returncode == 1, out.stderr  # templates written, but nobody was summoned
        data = json.loads(out.stdout)
        assert data["source"] == "templates" and "no <file" in data["fallback_reason"]
        (workspace / "SOUL.md").write_text("edited\n")
        again = cli("-w", str(workspace), "agents", "summon", "another")
    assert again.returncode != 0
    assert "already exist" in again.stderr and "--force" in again.stderr
    assert "Traceback" not in again.stderr


def test_cli_summon_without_a_model_says_so_and_fails(workspace, cli):
    write_config(workspace, None)
    out = cli("-w", str(workspace), "agents", "summon", "sarcastic Rust reviewer")
    assert out.returncode == 1
    assert "Could not summon with the model: no chat model configured" in out.stderr
    assert "Wrote the embedded templates instead" in out.stdout


# --------------------------------------------------------------------------- managed mode


@pytest.mark.postgres
def test_predefined_agent_in_a_store_is_summoned_into_the_store(workspace, pg_dsn):  # noqa: F811
    from soulframe._engine import agentstore
    from soulframe_userfiles.rules import ContextFileReadOnlyError, write_context_file

    with FakeLLMServer([say(GOOD)]) as srv:
        agent = agent_at(
            workspace,
            srv,
            **{"store.backend": "postgres", "store.dsn": pg_dsn, "agent_type": "predefined"},
        )
        try:
            result = summon(agent, "sarcastic Rust reviewer")
            stored = agentstore.context_store(agent).agent_files()
            # chat cannot change these shared files; summoning went past that rule by design
            with pytest.raises(ContextFileReadOnlyError):
                write_context_file(agent, "alice", "SOUL.md", "evil", from_chat=True)
            with pytest.raises(SoulframeError, match="already exist in the store"):
                summon(agent, "another")
        finally:
            agent.close()
    assert result.target == "store" and result.source == "model"
    assert set(SUMMON_FILES) <= set(stored)
    assert all("sarcastic" in stored[name] for name in SUMMON_FILES)
    assert not any((workspace / name).exists() for name in SUMMON_FILES)


def test_cli_summon_that_changed_nothing_exits_1(workspace, cli):
    """--force asked for new files; the model failed and a fallback never replaces files,
    so nothing changed: a script must not read that as success."""
    for name in SUMMON_FILES:
        (workspace / name).write_text(f"# {name}\nmine\n")
    with FakeLLMServer([say("Sure! Here is your agent.")]) as srv:
        write_config(workspace, srv)
        out = cli("-w", str(workspace), "agents", "summon", "sarcastic Rust reviewer", "--force")
    assert out.returncode == 1
    assert "Could not summon with the model" in out.stderr and "Kept existing" in out.stdout
    assert all((workspace / name).read_text().endswith("mine\n") for name in SUMMON_FILES)


def test_cli_summon_right_after_init(workspace, cli):
    """`init` seeds the five templates; they are not yet personalised, so summoning right
    after is not a conflict: with a model they are replaced without --force, without one the
    templates are already what the fallback would write (no "Kept existing"; exit 1: nobody
    was summoned)."""
    assert cli("init", str(workspace)).returncode == 0
    out = cli("-w", str(workspace), "agents", "summon", "sarcastic Rust reviewer")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no chat model configured" in out.stderr
    assert "Kept existing" not in out.stdout and "already in place" in out.stdout
    assert "--force" not in out.stdout
    with FakeLLMServer([say(GOOD)]) as srv:
        write_config(workspace, srv)
        out = cli("-w", str(workspace), "agents", "summon", "sarcastic Rust reviewer")
    assert out.returncode == 0, out.stderr
    assert all("sarcastic" in (workspace / n).read_text() for n in SUMMON_FILES)
