"""``soulframe keys``: a key stored outside the workspace, used by the providers (config >
environment > keys file), never printed by ``config show``, ``-v`` logging or an HTTP error.
The model is a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from fakes.llm_server import FakeLLMServer, fail, say
from soulframe._engine.workspace import seed_workspace

KEY = "sk-stored-0123456789abcdefXYZ"


def _model_config(ws: Path, srv: FakeLLMServer) -> None:
    (ws / "soulframe.toml").write_text(
        f'[model]\nprovider = "openai"\nname = "gpt-test"\nbase_url = "{srv.openai_base_url}"\n'
        "max_retries = 0\n")


def test_set_list_path_and_the_file_is_private(cli, tmp_path: Path) -> None:
    done = cli("keys", "set", "openai", input=KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout + done.stderr
    path = Path(cli("keys", "path", check=True).stdout.strip())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"OPENAI_API_KEY": KEY}
    listed = cli("keys", "list", check=True).stdout
    assert listed.strip() == "OPENAI_API_KEY" and KEY not in listed
    assert json.loads(cli("keys", "list", "--json", check=True).stdout)["keys"] == ["OPENAI_API_KEY"]
    assert cli("keys", "set", "bad name!", "--value", "x").returncode != 0
    # `keys get` is the one command that prints a key, for $(...) in a script
    assert cli("keys", "get", "openai", check=True).stdout == KEY + "\n"
    assert cli("keys", "remove", "openai", check=True).returncode == 0
    missing = cli("keys", "get", "openai")
    assert missing.returncode == 1 and "no key stored under OPENAI_API_KEY" in missing.stderr
    assert json.loads(path.read_text()) == {}


def test_a_stored_key_is_used_and_never_printed(cli, workspace: Path) -> None:
    seed_workspace(workspace)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the backups.\n")
    cli("keys", "set", "openai", "--value", KEY, check=True)
    with FakeLLMServer([say("HEARTBEAT_OK")]) as srv:
        _model_config(workspace, srv)
        out = cli("-vv", "-w", str(workspace), "heartbeat")
        assert out.returncode == 0, out.stderr
        assert srv.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in out.stdout + out.stderr
    shown = cli("-w", str(workspace), "config", "show", "--json", check=True).stdout
    assert KEY not in shown
    # an HTTP error that echoes the key back is masked too
    with FakeLLMServer([fail(401, f"Incorrect API key provided: {KEY}")]) as srv:
        _model_config(workspace, srv)
        bad = cli("-vv", "-w", str(workspace), "heartbeat")
    assert bad.returncode != 0
    assert KEY not in bad.stdout + bad.stderr and KEY[:12] not in bad.stdout + bad.stderr


def test_environment_wins_over_the_keys_file(cli, workspace: Path) -> None:
    seed_workspace(workspace)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the backups.\n")
    cli("keys", "set", "OPENAI_API_KEY", "--value", KEY, check=True)
    with FakeLLMServer([say("HEARTBEAT_OK")]) as srv:
        _model_config(workspace, srv)
        out = cli("-w", str(workspace), "heartbeat", env={"OPENAI_API_KEY": "sk-from-the-environment-1234"})
        assert out.returncode == 0, out.stderr
        assert srv.requests[0].headers["authorization"] == "Bearer sk-from-the-environment-1234"


def test_verbose_logs_plugin_loading_on_stderr(cli, workspace: Path) -> None:
    out = cli("-v", "-w", str(workspace), "plugins", "--json")
    assert out.returncode == 0
    assert "soulframe.plugins" not in out.stdout
    deb = cli("-w", str(workspace), "plugins", "--json", env={"SOULFRAME_LOG": "debug"})
    assert "loaded plugin soulframe_memory" in deb.stderr
    quiet = cli("-w", str(workspace), "plugins", "--json")
    assert "loaded plugin" not in quiet.stderr


def test_mask_secrets_shapes() -> None:
    from soulframe._engine.logs import mask_secrets

    text = ("POST http://bob:hunter22@llm.local/v1?key=abcdef123456 Authorization: Bearer abcdefghijkl "
            "sk-ant-0123456789abcdef AKIAABCDEFGHIJKLMNOP ghp_0123456789abcdefghijABCD")
    masked = mask_secrets(text, secrets=[])
    for secret in ("hunter22", "abcdef123456", "abcdefghijkl", "sk-ant-0123456789abcdef",
                   "AKIAABCDEFGHIJKLMNOP", "ghp_0123456789abcdefghijABCD"):
        assert secret not in masked, secret
    assert "llm.local/v1" in masked
