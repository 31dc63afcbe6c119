"""``-m/--model`` on the commands that call a chat model, aliases, ``models default`` and
``models list`` (chat models beside embedding providers). The model is a real HTTP server on
127.0.0.1; what it was asked for is read from the requests it received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer, say
from soulframe._engine.chatmodels import resolve
from soulframe._engine.model import ConfigError
from soulframe._engine.workspace import seed_workspace


def _ws(workspace: Path, srv: FakeLLMServer, model: str = 'provider = "openai"\nname = "gpt-configured"\n') -> Path:
    seed_workspace(workspace)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the backups.\n")
    (workspace / "soulframe.toml").write_text(
        f'[model]\n{model}base_url = "{srv.openai_base_url}"\napi_key = "sk-test-0123456789abcd"\n'
        'max_retries = 0\n[model.aliases]\nfast = "openai/gpt-fast"\n')
    return workspace


def _asked(srv: FakeLLMServer) -> str:
    return str(srv.requests[-1].json["model"])


def test_m_overrides_the_configured_model(cli, workspace: Path) -> None:
    with FakeLLMServer([say("HEARTBEAT_OK"), say("HEARTBEAT_OK"), say("HEARTBEAT_OK")]) as srv:
        ws = _ws(workspace, srv)
        cli("-w", str(ws), "heartbeat", check=True)
        assert _asked(srv) == "gpt-configured"
        cli("-w", str(ws), "heartbeat", "-m", "gpt-other", check=True)
        assert _asked(srv) == "gpt-other"
        cli("-w", str(ws), "heartbeat", "--model", "fast", check=True)  # an alias
        assert _asked(srv) == "gpt-fast"


ANTHROPIC_KEY = "sk-ant-api03-configured-0123456789"
OPENAI_KEY = "sk-openai-own-0123456789abcdef"


def _anthropic_ws(workspace: Path) -> Path:
    seed_workspace(workspace)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT.md\n\n- Check the backups.\n")
    (workspace / "soulframe.toml").write_text(
        '[model]\nprovider = "anthropic"\nname = "claude-x"\napi_key_env = "MY_ANTHROPIC_KEY"\n'
        'max_retries = 0\n[model.aliases]\nlocal = "vllm/qwen2.5-7b"\nfast = "openai/gpt-fast"\n')
    return workspace


def _serve_preset(monkeypatch: pytest.MonkeyPatch, provider: str, srv: FakeLLMServer) -> None:
    """The provider's default server is this one: the real defaults are api.openai.com and
    127.0.0.1:8000, which a test neither reaches nor can count on being free."""
    import attrs
    from soulframe_chat.settings import PRESETS

    monkeypatch.setitem(PRESETS, provider, attrs.evolve(PRESETS[provider], base_url=srv.openai_base_url))


def test_m_to_another_provider_never_sends_the_configured_key(
    cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[model]'s key is the configured provider's: -m that picks another provider (here through
    aliases) uses that provider's server and its own key, or none when it needs none."""
    ws = _anthropic_ws(workspace)
    env = {"MY_ANTHROPIC_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}
    with FakeLLMServer([say("HEARTBEAT_OK")]) as vllm, FakeLLMServer([say("HEARTBEAT_OK")]) as openai:
        _serve_preset(monkeypatch, "vllm", vllm)
        _serve_preset(monkeypatch, "openai", openai)
        cli("-w", str(ws), "heartbeat", "-m", "local", env=env, check=True)
        cli("-w", str(ws), "heartbeat", "-m", "fast", env=env, check=True)
    assert _asked(vllm) == "qwen2.5-7b" and "authorization" not in vllm.requests[0].headers
    assert _asked(openai) == "gpt-fast"
    assert openai.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"


def test_m_to_a_provider_without_its_own_key_or_server_says_what_to_set(
    cli, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _anthropic_ws(workspace)
    with FakeLLMServer([say("HEARTBEAT_OK")]) as openai:
        _serve_preset(monkeypatch, "openai", openai)
        out = cli("-w", str(ws), "heartbeat", "-m", "fast", env={"MY_ANTHROPIC_KEY": ANTHROPIC_KEY})
    assert out.returncode == 2
    assert out.stderr.startswith("Error: -m fast: provider 'openai' needs its own API key")
    assert "OPENAI_API_KEY" in out.stderr and ANTHROPIC_KEY not in out.stderr
    assert openai.requests == []
    # no default server to go to: [model] base_url is the configured provider's, not this one's
    out = cli("-w", str(ws), "heartbeat", "-m", "openai-compatible/llama", env={"MY_ANTHROPIC_KEY": ANTHROPIC_KEY})
    assert out.returncode == 2
    assert out.stderr.startswith("Error: -m openai-compatible/llama: provider 'openai-compatible' has no default base_url")


def test_models_default_is_used_when_the_config_names_no_model(cli, workspace: Path) -> None:
    out = json.loads(cli("models", "default", "openai/gpt-default", "--json", check=True).stdout)
    assert out["default"] == "openai/gpt-default"
    with FakeLLMServer([say("HEARTBEAT_OK")]) as srv:
        ws = _ws(workspace, srv, model="")
        cli("-w", str(ws), "heartbeat", check=True)
        assert _asked(srv) == "gpt-default"
    assert cli("models", "default", check=True).stdout.strip() == "openai/gpt-default"


@pytest.mark.parametrize("name", ["gpt-4o", "openai/"])
def test_models_default_refuses_a_name_without_a_provider(cli, workspace: Path, name: str) -> None:
    """Saved, such a default made every command that reads the config fail (backup
    status, soul-evil status ...), with an error about a '-m' nobody typed."""
    out = cli("models", "default", name)
    assert out.returncode == 1 and "no chat provider" in out.stderr and "openai" in out.stderr
    assert "Traceback" not in out.stderr
    assert cli("models", "default", check=True).stdout.startswith("no default chat model")
    cli("init", str(workspace), check=True)
    assert cli("-w", str(workspace), "backup", "status").returncode == 0


def test_a_stored_default_without_a_provider_is_named_as_such(cli, workspace: Path) -> None:
    from soulframe._engine.chatmodels import default_model_path

    cli("init", str(workspace), check=True)
    default_model_path().parent.mkdir(parents=True, exist_ok=True)
    default_model_path().write_text("gpt-4o\n")  # an older release took it
    out = cli("-w", str(workspace), "backup", "status")
    assert out.returncode != 0 and "soulframe models default" in out.stderr and "-m " not in out.stderr
    cli("models", "default", "openai/gpt-4o", check=True)  # and it can be put right
    assert cli("-w", str(workspace), "backup", "status").returncode == 0


def test_every_chat_model_command_takes_m() -> None:
    from soulframe._engine.plugins import make_plugin_manager
    from soulframe.cli import build_cli

    cli = build_cli(make_plugin_manager())
    for path in (["heartbeat"], ["boot"], ["agents", "summon"], ["memory", "flush"]):
        cmd = cli
        for part in path:
            cmd = cmd.commands[part]  # type: ignore[attr-defined]
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert {"-m", "--model"} <= opts, path


def test_models_list_shows_chat_models_and_embedding_providers(cli, workspace: Path) -> None:
    (workspace / "soulframe.toml").write_text('[model]\nprovider = "anthropic"\nname = "claude-x"\n'
                                              '[model.aliases]\nfast = "openai/gpt-fast"\n')
    data = json.loads(cli("-w", str(workspace), "models", "list", "--json", check=True).stdout)
    names = {p["name"] for p in data["chat"]["providers"]}
    assert {"openai", "anthropic", "ollama"} <= names
    assert data["chat"]["provider"] == "anthropic" and data["chat"]["aliases"] == {"fast": "openai/gpt-fast"}
    assert any(r["name"] == "local" for r in data["embedding"]["providers"])
    text = cli("-w", str(workspace), "models", "list", check=True).stdout
    assert "chat models" in text and "embedding providers" in text and "alias fast -> openai/gpt-fast" in text
    # the providers' descriptions start in one column, the selected one marked
    chat = text.split("embedding providers")[0]
    rows = [line for line in chat.splitlines() if any(line[2:].startswith(n + " ") for n in names)]
    assert len(rows) == len(names) and "* anthropic " in chat
    columns = {len(line) - len(line[2:].split(" ", 1)[1].lstrip()) for line in rows}
    assert len(columns) == 1, rows


def test_resolve_names() -> None:
    providers = ["openai", "anthropic", "openrouter"]
    assert resolve("anthropic/claude-haiku", providers) == ("anthropic", "claude-haiku")
    assert resolve("openrouter/meta-llama/llama-3", providers) == ("openrouter", "meta-llama/llama-3")
    assert resolve("meta-llama/llama-3", providers) == (None, "meta-llama/llama-3")
    assert resolve("fast", providers, {"fast": "cheap", "cheap": "openai/gpt-mini"}) == ("openai", "gpt-mini")
    assert resolve("loop", providers, {"loop": "loop"}) == (None, "loop")
    with pytest.raises(ConfigError):
        resolve(" ", providers)


def test_aliases_set_on_the_command_line_are_used_by_m(cli, workspace: Path) -> None:
    with FakeLLMServer([say("HEARTBEAT_OK"), say("HEARTBEAT_OK")]) as srv:
        ws = _ws(workspace, srv)
        cli("models", "aliases", "set", "cheap", "openai/gpt-cheap", check=True)
        cli("-w", str(ws), "heartbeat", "-m", "cheap", check=True)
        assert _asked(srv) == "gpt-cheap"
        # the workspace's [model.aliases] wins on a name both define
        cli("models", "aliases", "set", "fast", "openai/gpt-user-fast", check=True)
        cli("-w", str(ws), "heartbeat", "-m", "fast", check=True)
        assert _asked(srv) == "gpt-fast"
    listed = json.loads(cli("-w", str(ws), "models", "aliases", "list", "--json", check=True).stdout)
    assert listed["cheap"]["model"] == "openai/gpt-cheap"
    assert listed["fast"] == {"model": "openai/gpt-fast", "from": "config"}
    text = cli("-w", str(ws), "models", "aliases", "list", check=True).stdout
    assert "cheap" in text and "openai/gpt-cheap" in text
    assert cli("models", "aliases", "remove", "cheap", check=True).returncode == 0
    gone = cli("models", "aliases", "remove", "cheap")
    assert gone.returncode == 1 and "no alias 'cheap'" in gone.stderr
    bad = cli("models", "aliases", "set", "two words", "x")
    assert bad.returncode == 1 and "without spaces" in bad.stderr
