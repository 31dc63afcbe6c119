"""``soulframe logs``: every chat-model call soulframe makes is logged — when, what for, which
model, tokens, how long, the outcome — never the prompt or the reply, secrets masked. The
model is a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from fakes.llm_server import FakeLLMServer, fail, say
from soulframe._engine.workspace import seed_workspace

KEY = "sk-logged-0123456789abcdefXYZ"


def _config(ws: Path, srv: FakeLLMServer, extra: str = "") -> None:
    (ws / "soulframe.toml").write_text(
        f'state_dir = "state"\n{extra}[model]\nprovider = "openai"\nname = "gpt-test"\n'
        f'base_url = "{srv.openai_base_url}"\napi_key = "{KEY}"\nmax_retries = 0\n')


def test_each_call_is_logged_with_its_outcome_and_no_text(cli, workspace: Path) -> None:
    seed_workspace(workspace)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the secret backup plan.\n")
    with FakeLLMServer([say("HEARTBEAT_OK"), fail(500, f"upstream broke, key {KEY}")]) as srv:
        _config(workspace, srv)
        assert cli("-w", str(workspace), "heartbeat").returncode == 0
        assert cli("-w", str(workspace), "heartbeat").returncode == 2
    out = json.loads(cli("-w", str(workspace), "logs", "--json", check=True).stdout)
    ok, bad = out["calls"]
    assert ok["purpose"] == "heartbeat" and ok["outcome"] == "ok" and ok["model"] == "gpt-test"
    assert ok["input_tokens"] == 10 and ok["output_tokens"] == 5 and ok["duration_s"] >= 0
    assert bad["outcome"] == "error" and "500" in bad["error"]
    path = Path(out["path"])
    raw = path.read_text()
    assert KEY not in raw and "secret backup plan" not in raw and "HEARTBEAT_OK" not in raw
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    table = cli("-w", str(workspace), "logs", check=True).stdout
    assert "heartbeat" in table and "gpt-test" in table and "error:" in table
    assert len(json.loads(cli("-w", str(workspace), "logs", "-n", "1", "--json",
                              check=True).stdout)["calls"]) == 1
    assert json.loads(cli("-w", str(workspace), "logs", "--purpose", "summon", "--json",
                          check=True).stdout)["calls"] == []


def test_retention_and_opting_out(cli, workspace: Path) -> None:
    seed_workspace(workspace)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the backups.\n")
    log = workspace / "state" / "model-calls.jsonl"
    log.parent.mkdir(mode=0o700)
    old = {"time": "2020-01-01T00:00:00+00:00", "agent": "default", "purpose": "heartbeat",
           "provider": "openai", "model": "ancient", "outcome": "ok"}
    log.write_text(json.dumps(old) + "\n")
    os.chmod(log, 0o600)
    with FakeLLMServer([say("HEARTBEAT_OK"), say("HEARTBEAT_OK")]) as srv:
        _config(workspace, srv)
        cli("-w", str(workspace), "heartbeat", check=True)
        assert "ancient" not in log.read_text()  # past logs.retention_days: dropped
        _config(workspace, srv, "[logs]\nenabled = false\n")
        before = log.read_text()
        cli("-w", str(workspace), "heartbeat", check=True)
    assert log.read_text() == before
