"""What a user sees around `memory search`: hybrid with the offline model out of the box,
and a notice said once, not once per layer that noticed it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from soulframe_embeddings.local import LocalProvider

OFF = "semantic search is off"


@pytest.fixture
def no_provider(tmp_path: Path) -> Path:
    # auto finds nothing: no Gemini key, and only gemini is tried
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n\n[embedding]\nauto_order = ["gemini"]\n')
    return cfg


def test_semantic_search_off_is_said_once_per_command(tmp_path: Path, no_provider: Path) -> None:
    ws = tmp_path / "agent"
    ws.mkdir(mode=0o700)  # a missing -w workspace is an error, not created on the fly
    base = ("--config", str(no_provider), "-w", str(ws))
    assert run_cli(*base, "memory", "remember", "Tomas keeps the spare key under the blue flowerpot").returncode == 0
    out = run_cli(*base, "memory", "search", "flowerpot")
    assert out.returncode == 0, out.stderr
    assert "blue flowerpot" in out.stdout
    assert (out.stdout + out.stderr).count(OFF) == 1
    js = run_cli(*base, "memory", "search", "flowerpot", "--json")
    assert json.loads(js.stdout)[0]["mode"] == "keyword-only"
    assert (js.stdout.count(OFF), js.stderr.count(OFF)) == (1, 1)  # in the JSON, and said once
    index = run_cli(*base, "memory", "index")
    assert index.stderr.count("keyword-only") == 1 and OFF not in index.stderr


@pytest.mark.skipif(not LocalProvider().available(), reason="offline model not installed")
def test_a_paraphrase_finds_the_note_in_hybrid_mode_without_any_notice(tmp_path: Path) -> None:
    ws = tmp_path / "agent"
    assert run_cli("init", str(ws)).returncode == 0
    assert run_cli("-w", str(ws), "memory", "remember", "Prefers dark-mode screenshots").returncode == 0
    out = run_cli("-w", str(ws), "memory", "search", "screenshot appearance", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows and "dark-mode screenshots" in rows[0]["snippet"]
    assert rows[0]["mode"] == "hybrid" and rows[0]["notice"] is None
    assert "warning" not in out.stderr
