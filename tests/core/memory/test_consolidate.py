"""Consolidation against a real HTTP server on 127.0.0.1 speaking chat completions with
scripted replies: promotion with citations, the removal guard, undo, the diary."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from conftest import run_cli
from fakes.llm_server import FakeLLMServer, say
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config

MEMORY = (
    "# MEMORY.md\n\n"
    "- Works on the platform team.\n"
    "- Prefers tea to coffee.\n"
    "- Lives in Berlin.\n"
    "- Plays the cello on Sundays.\n"
)
FACT = "- The Lisbon office door code changes every Monday; ask Marta for it."


def setup(workspace: Path, tmp_path: Path, srv: FakeLLMServer | None) -> tuple[Agent, str]:
    today = dt.date.today()
    log_day = (today - dt.timedelta(days=5)).isoformat()
    (workspace / "MEMORY.md").write_text(MEMORY)
    (workspace / "memory").mkdir()
    (workspace / "memory" / f"{log_day}.md").write_text(
        f"# {log_day}\n\n- Lunch at the canteen.\n{FACT}\n- Weather was grey.\n")
    values = {"embedding.provider": "none", "state_dir": str(tmp_path / "state")}
    if srv is not None:
        values |= {"model.provider": "openai-compatible", "model.name": "m",
                   "model.base_url": srv.openai_base_url, "model.max_retries": 0}
    agent = Agent(load_config(search=False, workspace=workspace, overrides=values))
    return agent, f"memory/{log_day}.md#L4"


def recall_over_three_days(agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    now = agent.now()
    for back, q in ((3, "Lisbon office door code"), (2, "who knows the door code"), (1, "office access Monday")):
        monkeypatch.setattr(agent, "now", lambda back=back: now - dt.timedelta(days=back))
        assert "door code" in agent.memory.search(q, min_score=0)[0].snippet
    monkeypatch.undo()


def test_a_fact_recalled_three_times_is_promoted_with_its_citation_and_undone(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from soulframe._engine.memory.consolidate import consolidate, undo_last

    with FakeLLMServer() as srv:
        agent, citation = setup(workspace, tmp_path, srv)
        # not yet: two recalls are below the gate, and no model call is made
        agent.memory.search("Lisbon office door code", min_score=0)
        assert consolidate(agent).candidates == [] and srv.requests == []
        recall_over_three_days(agent, monkeypatch)
        (stat,) = [r for r in agent.store.recalls(5) if "door code" in r.text]
        assert (stat.count, stat.queries, stat.days) == (4, 3, 4)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "The Lisbon office door code changes every Monday; Marta has it.",
             "source": citation}]})))
        before = (workspace / "MEMORY.md").read_bytes()
        result = consolidate(agent)
        assert result.status == "applied", result.messages
        sent = srv.requests[-1].json["messages"][-1]["content"]
        assert f"[{citation}]" in sent and "E3: - Lives in Berlin." in sent
    text = (workspace / "MEMORY.md").read_text()
    assert text.startswith(MEMORY)
    assert f"- The Lisbon office door code changes every Monday; Marta has it. (source: {citation}, consolidated " in text
    # the promoted entry is found by search, with its citation in the file
    assert "MEMORY.md" in [h.path for h in agent.memory.search("door code Monday", min_score=0)]

    # a reply that would drop half the entries is refused; the file is byte-identical
    with FakeLLMServer() as srv:
        agent, citation = setup_again(workspace, tmp_path, srv)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "supersede", "entry": "E1", "text": "Works on the data team.", "source": citation},
            {"op": "delete", "entry": "E2", "source": citation},
            {"op": "delete", "entry": "E3", "source": citation},
        ]})))
        promoted = (workspace / "MEMORY.md").read_bytes()
        refused = consolidate(agent)
        assert refused.status == "refused" and "3 of 5 entries" in refused.refused
        assert (workspace / "MEMORY.md").read_bytes() == promoted

    # undo restores the file from before the applied run, exactly
    undo_last(agent)
    assert (workspace / "MEMORY.md").read_bytes() == before
    diary = (workspace / "memory" / ".diary" / "consolidation.md").read_text()
    assert "applied: 1 change(s) to MEMORY.md" in diary and f"(source: {citation})" in diary
    assert "refused: the run would remove or supersede 3 of 5 entries" in diary
    assert "undone: MEMORY.md restored" in diary
    # the diary is never indexed nor injected
    assert all(".diary" not in f.path for f in agent.memory.files())
    assert "Consolidation diary" not in agent.system_prompt().text
    with pytest.raises(Exception, match="nothing to undo"):
        undo_last(agent)


def test_a_promoted_fact_is_filed_under_notes_not_the_last_heading(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The template's MEMORY.md ends with "## Lessons learned": an added fact appended at the
    end was filed there, the misfiling `remember --curated` avoids by keeping such notes
    under "## Notes"."""
    from soulframe._engine.memory.consolidate import consolidate

    sectioned = ("# MEMORY.md\n\n## Preferences\n\n- Prefers tea to coffee.\n\n"
                 "## Lessons learned\n\n- Test the restore, not only the backup.\n")
    with FakeLLMServer() as srv:
        agent, citation = setup(workspace, tmp_path, srv)
        (workspace / "MEMORY.md").write_text(sectioned)
        recall_over_three_days(agent, monkeypatch)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "The Lisbon office door code changes every Monday; Marta has it.",
             "source": citation}]})))
        assert consolidate(agent).status == "applied"
    text = (workspace / "MEMORY.md").read_text()
    assert text.startswith(sectioned.rstrip("\n") + "\n\n## Notes\n\n- The Lisbon office door code"), text
    # and a later curated note joins it there
    agent.memory.remember("Allergic to penicillin", curated=True)
    notes = (workspace / "MEMORY.md").read_text().split("## Notes\n\n")[1]
    assert notes.startswith("- The Lisbon office door code") and "- Allergic to penicillin" in notes


def test_a_reviewed_dry_run_is_applied_as_shown_without_asking_again(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from soulframe._engine.memory.consolidate import apply_reviewed, consolidate
    from soulframe._engine.model import SoulframeError

    with FakeLLMServer() as srv:
        agent, citation = setup(workspace, tmp_path, srv)
        recall_over_three_days(agent, monkeypatch)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "Marta has the Lisbon door code.", "source": citation}]})))
        before = (workspace / "MEMORY.md").read_bytes()
        reviewed = consolidate(agent, dry_run=True)
        assert reviewed.status == "dry-run" and (workspace / "MEMORY.md").read_bytes() == before
        assert "proposed" not in reviewed.to_dict()  # the JSON output stays the diff, not the file

        # the file changed after the review: applying is refused and nothing is written
        (workspace / "MEMORY.md").write_bytes(before + b"- Edited by hand.\n")
        with pytest.raises(SoulframeError, match="changed since the dry run"):
            apply_reviewed(agent, reviewed)
        assert (workspace / "MEMORY.md").read_bytes() == before + b"- Edited by hand.\n"

        (workspace / "MEMORY.md").write_bytes(before)
        applied = apply_reviewed(agent, reviewed)
        assert applied.status == "applied" and len(srv.requests) == 1  # the model was asked once
    assert (workspace / "MEMORY.md").read_text() == reviewed.proposed
    assert "Marta has the Lisbon door code." in reviewed.proposed
    with pytest.raises(SoulframeError, match="only a dry run"):
        apply_reviewed(agent, applied)


def setup_again(workspace: Path, tmp_path: Path, srv: FakeLLMServer) -> tuple[Agent, str]:
    """A fresh agent over the same workspace and state (recalls persist in the store)."""
    values = {"embedding.provider": "none", "state_dir": str(tmp_path / "state"),
              "model.provider": "openai-compatible", "model.name": "m",
              "model.base_url": srv.openai_base_url, "model.max_retries": 0,
              "memory.consolidate.min_recalls": 1, "memory.consolidate.min_queries": 1}
    agent = Agent(load_config(search=False, workspace=workspace, overrides=values))
    agent.memory.search("Weather was grey", min_score=0)
    log = next((workspace / "memory").glob("*.md"))
    return agent, f"memory/{log.name}#L5"


def test_without_a_model_it_only_removes_repeated_entries(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (workspace / "MEMORY.md").write_text(MEMORY + "- prefers  Tea to coffee (added 2026-11-02)\n")
    dry = run_cli("-w", str(workspace), "memory", "consolidate", "--dry-run", check=True).stdout
    assert "-- prefers  Tea to coffee (added 2026-11-02)" in dry and "dry run: nothing was written" in dry
    assert "repeated an earlier one word for word" in dry and "did nothing else" in dry
    out = json.loads(run_cli("-w", str(workspace), "memory", "consolidate", "--json", check=True).stdout)
    assert out["status"] == "applied" and len(out["operations"]) == 1
    assert (workspace / "MEMORY.md").read_text() == MEMORY
    run_cli("-w", str(workspace), "memory", "consolidate", "--undo", check=True)
    assert "prefers  Tea to coffee (added 2026-11-02)" in (workspace / "MEMORY.md").read_text()


def test_a_candidate_is_promoted_once_and_no_entry_is_written_twice(
        workspace: Path, tmp_path: Path) -> None:
    from soulframe._engine.memory.consolidate import consolidate

    fact = "The Lisbon office door code changes every Monday; Marta has it."
    with FakeLLMServer() as srv:
        agent, citation = setup_again_fresh(workspace, tmp_path, srv)
        grey = citation.replace("#L4", "#L5")
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "Lives in Berlin.", "source": citation},  # E3 already
            {"op": "add", "text": fact, "source": citation},
            {"op": "add", "text": fact, "source": citation},  # the same add twice
            {"op": "add", "text": "Marta has the Lisbon door code, new every Monday.", "source": citation},
            # another candidate cited for the same words, in other case and punctuation
            {"op": "add", "text": "the lisbon office door code changes every monday - marta has it",
             "source": grey},
        ]})))
        result = consolidate(agent)
    assert result.status == "applied", result.messages
    text = (workspace / "MEMORY.md").read_text()
    assert text.startswith(MEMORY) and text.count("door code") == 1 and text.count("Berlin") == 1
    assert [o["text"] for o in result.operations] == [fact]
    assert "operation 1 (add): E3 already says 'Lives in Berlin.'; skipped" in result.messages
    assert f"operation 3 (add): {citation} was already promoted by operation 2; skipped" in result.messages
    assert f"operation 4 (add): {citation} was already promoted by operation 2; skipped" in result.messages
    assert any(m.startswith("operation 5 (add): operation 2 already says") for m in result.messages)


def setup_again_fresh(workspace: Path, tmp_path: Path, srv: FakeLLMServer) -> tuple[Agent, str]:
    """Two candidates at once: the door code (L4) and the weather (L5), each recalled once
    (the gates lowered to one recall)."""
    agent, citation = setup(workspace, tmp_path, srv)
    agent.close()
    agent, _ = setup_again(workspace, tmp_path, srv)
    assert "door code" in agent.memory.search("Lisbon office door code", min_score=0)[0].snippet
    return agent, citation


DISTINCT = (
    "# MEMORY.md\n\n"
    "- Weekly backup of the NAS runs every Sunday at 03:00 to the Backblaze bucket (added 2026-01-02)\n"
    "- Weekly backup of the laptop runs every Sunday at 04:00 to the Backblaze bucket (added 2026-01-05)\n"
    "- The door code of the Lisbon office is 4821; it changes every Monday (added 2026-02-01)\n"
    "- The door code of the Lisbon office is 4827; it changes every Monday (added 2026-02-03)\n"
    "- Every Friday Ana sends the invoice for the studio rent to Rui, who pays it (added 2026-03-01)\n"
    "- Every Friday Rui sends the invoice for the studio rent to Ana, who pays it (added 2026-03-08)\n"
    "- The garage freezer is set to -18 degrees Celsius since the repair (added 2026-04-01)\n"
    "- The garage freezer is set to 18 degrees Celsius since the repair (added 2026-04-02)\n"
    "- Drinks espresso (added 2026-01-02)\n"
)


def test_without_a_model_entries_differing_in_a_word_or_number_all_stay(workspace: Path) -> None:
    # long entries that differ in a device, a time, a door code, the order of two names or a
    # sign are as alike as difflib's 0.9 ratio: each is a fact of its own and must stay
    run_cli("init", str(workspace), check=True)
    (workspace / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    repeat = "- drinks   ESPRESSO. (source: memory/2026-11-02.md#L3, consolidated 2026-11-03)\n"
    (workspace / "MEMORY.md").write_text(DISTINCT + repeat)
    out = json.loads(run_cli("-w", str(workspace), "memory", "consolidate", "--no-model", "--json",
                             check=True).stdout)
    # only the word-for-word repeat goes (other case, spacing, punctuation and note)
    assert out["operations"] == [{"op": "dedupe", "removed": repeat.rstrip("\n")}]
    assert (workspace / "MEMORY.md").read_text() == DISTINCT


def test_entity_pages_collect_facts_and_rank_first(workspace: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from soulframe._engine.memory.consolidate import consolidate

    with FakeLLMServer() as srv:
        agent, citation = setup(workspace, tmp_path, srv)
        agent = Agent(load_config(search=False, workspace=workspace, overrides={
            "embedding.provider": "none", "state_dir": str(tmp_path / "state"),
            "model.provider": "openai-compatible", "model.name": "m", "model.base_url": srv.openai_base_url,
            "memory.consolidate.entities": True}))
        recall_over_three_days(agent, monkeypatch)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "Marta knows the Lisbon office door code (it changes on Mondays).",
             "source": citation, "entities": ["Marta", "Lisbon office"]}]})))
        result = consolidate(agent)
        assert "entities" in srv.requests[-1].json["messages"][0]["content"]
    assert result.status == "applied"
    page = (workspace / "bank" / "entities" / "marta.md").read_text()
    assert page.startswith("# Marta\n\n- Marta knows the Lisbon office door code") and f"(source: {citation}" in page
    assert (workspace / "bank" / "entities" / "lisbon-office.md").exists()
    # indexed, private, and first for a question naming the entity
    assert "bank/entities/marta.md" in {f.path for f in agent.memory.files()}
    hits = agent.memory.search("what does Marta know about the door", min_score=0)
    assert hits[0].path == "bank/entities/marta.md"
    # the daily log matches this question best word for word; the page naming it comes first
    question = "does the Lisbon office door code change every Monday"
    hits = agent.memory.search(question, min_score=0)
    assert hits[0].path == "bank/entities/lisbon-office.md"
    import soulframe._engine.memory.search as search_module

    monkeypatch.setattr(search_module, "_entities_first", lambda index, fused, query: fused)
    assert agent.memory.search(question, min_score=0)[0].path != "bank/entities/lisbon-office.md"
    from soulframe._engine.model import Session

    group = agent.memory.search("what does Marta know about the door", session=Session.group(), min_score=0)
    assert all(not h.path.startswith("bank/") for h in group)


def test_entity_pages_are_off_by_default(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from soulframe._engine.memory.consolidate import consolidate

    with FakeLLMServer() as srv:
        agent, citation = setup(workspace, tmp_path, srv)
        recall_over_three_days(agent, monkeypatch)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "Marta has the door code.", "source": citation, "entities": ["Marta"]}]})))
        consolidate(agent)
        assert "entities" not in srv.requests[-1].json["messages"][0]["content"]
    assert not (workspace / "bank").exists()


def test_cli_dry_run_refusal_and_undo(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as srv:
        agent, citation = setup(workspace, tmp_path, srv)
        recall_over_three_days(agent, monkeypatch)
        agent.close()
        (workspace / "soulframe.toml").write_text(
            f'state_dir = "{tmp_path / "state"}"\n[embedding]\nprovider = "none"\n'
            f'[model]\nprovider = "openai-compatible"\nname = "m"\nbase_url = "{srv.openai_base_url}"\nmax_retries = 0\n')
        add = say(json.dumps({"operations": [{"op": "add", "text": "Door code: ask Marta (changes Mondays).",
                                              "source": citation}]}))
        srv.script.extend([add, add])
        before = (workspace / "MEMORY.md").read_bytes()
        env = {"OPENAI_API_KEY": "k-1"}
        dry = run_cli("-w", str(workspace), "memory", "consolidate", "--dry-run", env=env)
        assert dry.returncode == 0, dry.stderr
        assert f"+- Door code: ask Marta (changes Mondays). (source: {citation}, consolidated" in dry.stdout
        assert (workspace / "MEMORY.md").read_bytes() == before
        assert not (workspace / "memory" / ".diary").exists()  # a dry run keeps no diary
        applied = json.loads(run_cli("-w", str(workspace), "memory", "consolidate", "--json", env=env,
                                     check=True).stdout)
        assert applied["status"] == "applied" and applied["operations"][0]["source"] == citation
        after = (workspace / "MEMORY.md").read_bytes()
        # promoted once (its citation is in MEMORY.md): not a candidate again, no model call
        calls = len(srv.requests)
        again = run_cli("-w", str(workspace), "memory", "consolidate", env=env, check=True)
        assert "no daily-log entry passes the gates" in again.stdout and len(srv.requests) == calls
        # another entry, recalled from the command line by three questions
        for q in ("grey weather", "what was the weather like", "was it grey"):
            run_cli("-w", str(workspace), "memory", "search", q, "--min-score", "0", check=True)
        grey = citation.replace("#L4", "#L5")
        srv.script.append(say(json.dumps({"operations": [
            {"op": "supersede", "entry": "E1", "text": "changed 1", "source": grey},
            *({"op": "delete", "entry": f"E{n}", "source": grey} for n in (2, 3))]})))
        refused = run_cli("-w", str(workspace), "memory", "consolidate", env=env)
        assert f"[{grey}]: - Weather was grey." in srv.requests[-1].json["messages"][-1]["content"]
    assert refused.returncode == 1 and "refused: the run would remove or supersede 3 of 5 entries" in refused.stderr
    assert (workspace / "MEMORY.md").read_bytes() == after
    run_cli("-w", str(workspace), "memory", "consolidate", "--undo", check=True)
    assert (workspace / "MEMORY.md").read_bytes() == before


def cli_setup(workspace: Path, tmp_path: Path, srv: FakeLLMServer,
              monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, str]]:
    """A workspace whose soulframe.toml points at ``srv``, with the door code recalled into a
    candidate; (its citation, the environment for run_cli)."""
    agent, citation = setup(workspace, tmp_path, srv)
    recall_over_three_days(agent, monkeypatch)
    agent.close()
    (workspace / "soulframe.toml").write_text(
        f'state_dir = "{tmp_path / "state"}"\n[embedding]\nprovider = "none"\n'
        f'[model]\nprovider = "openai-compatible"\nname = "m"\nbase_url = "{srv.openai_base_url}"\nmax_retries = 0\n')
    return citation, {"OPENAI_API_KEY": "k-1"}


def test_cli_json_of_a_refused_run_exits_1(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as srv:
        citation, env = cli_setup(workspace, tmp_path, srv, monkeypatch)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "supersede", "entry": "E1", "text": "Works on the data team.", "source": citation},
            {"op": "delete", "entry": "E2", "source": citation}]})))
        before = (workspace / "MEMORY.md").read_bytes()
        done = run_cli("-w", str(workspace), "memory", "consolidate", "--json", env=env)
    # a script sees the refusal in the exit status, and still gets the JSON that says why
    assert done.returncode == 1, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "refused" and "2 of 4 entries" in out["refused"]
    assert (workspace / "MEMORY.md").read_bytes() == before


def test_cli_undo_dry_run_shows_the_restore_and_changes_nothing(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as srv:
        citation, env = cli_setup(workspace, tmp_path, srv, monkeypatch)
        srv.script.append(say(json.dumps({"operations": [
            {"op": "add", "text": "Marta has the Lisbon door code.", "source": citation}]})))
        before = (workspace / "MEMORY.md").read_bytes()
        run_cli("-w", str(workspace), "memory", "consolidate", env=env, check=True)
    after = (workspace / "MEMORY.md").read_bytes()
    diary = workspace / "memory" / ".diary" / "consolidation.md"
    kept = diary.read_bytes()
    dry = run_cli("-w", str(workspace), "memory", "consolidate", "--undo", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"-- Marta has the Lisbon door code. (source: {citation}, consolidated" in dry.stdout
    assert "dry run: nothing was restored" in dry.stdout
    assert (workspace / "MEMORY.md").read_bytes() == after and diary.read_bytes() == kept
    # refused as the undo itself would be when a note came in since the run, still changing nothing
    (workspace / "MEMORY.md").write_bytes(after + b"- A note by hand.\n")
    refused = run_cli("-w", str(workspace), "memory", "consolidate", "--undo", "--dry-run")
    assert refused.returncode == 1 and "undo would lose that change" in refused.stderr
    assert (workspace / "MEMORY.md").read_bytes() == after + b"- A note by hand.\n"
    # the undo copy is still there: the real undo restores that run, not one further back
    (workspace / "MEMORY.md").write_bytes(after)
    run_cli("-w", str(workspace), "memory", "consolidate", "--undo", check=True)
    assert (workspace / "MEMORY.md").read_bytes() == before


def test_cli_dry_run_with_an_unreadable_reply_writes_no_diary(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as srv:
        citation, env = cli_setup(workspace, tmp_path, srv, monkeypatch)
        srv.script.extend([say('Sure! {"operations": [ {op: add} ]')] * 2)
        before = (workspace / "MEMORY.md").read_bytes()
        dry = run_cli("-w", str(workspace), "memory", "consolidate", "--dry-run", env=env)
        assert dry.returncode == 1 and "the model's reply is not valid JSON" in dry.stderr
        assert (workspace / "MEMORY.md").read_bytes() == before
        assert not (workspace / "memory" / ".diary").exists()  # a dry run writes nothing at all
        # the real run records the refusal
        run_cli("-w", str(workspace), "memory", "consolidate", env=env)
    diary = (workspace / "memory" / ".diary" / "consolidation.md").read_text()
    assert "failed: the model's reply is not valid JSON" in diary


def test_a_heartbeat_says_its_consolidation_failed_on_an_unreadable_reply(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It said "refused", as if a guard had judged the text unsafe; the model's reply could
    not be read, and the report says so."""
    from soulframe_routines.heartbeat import run_heartbeat

    with FakeLLMServer() as srv:
        agent, _ = setup(workspace, tmp_path, srv)
        recall_over_three_days(agent, monkeypatch)
        agent.close()
        (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the backups.\n")
        values = {"embedding.provider": "none", "state_dir": str(tmp_path / "state"),
                  "model.provider": "openai-compatible", "model.name": "m", "model.base_url": srv.openai_base_url,
                  "model.max_retries": 0, "memory.consolidate.on_heartbeat": True}
        agent = Agent(load_config(search=False, workspace=workspace, overrides=values))
        srv.script.extend([say("HEARTBEAT_OK"), say('Sure! {"operations": [ {op: add} ]')])
        monkeypatch.setenv("OPENAI_API_KEY", "k-1")
        before = (workspace / "MEMORY.md").read_bytes()
        result = run_heartbeat(agent, log=True)
        agent.close()
    assert result.status == "ok" and result.exit_code == 0  # the agent itself is fine
    assert result.consolidation is not None
    assert result.consolidation.startswith("failed: the model's reply is not valid JSON")
    assert "MEMORY.md was not changed" in result.to_dict()["consolidation"]
    assert (workspace / "MEMORY.md").read_bytes() == before
