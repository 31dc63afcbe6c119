"""`soulframe import SOURCE PATH`: ChatGPT, Claude.ai, Claude Code, Codex and OpenClaw,
on small hand-written exports in tests/data/transfer, through the real command line."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
from conftest import run_cli
from soulframe._engine.model import ConfigError
from soulframe_transfer import json5
from transfer_support import imported, keyword_workspace, sf

DATA = Path(__file__).parents[2] / "data" / "transfer"
MEMORY = "# MEMORY.md\n\n- Sam prefers tea to coffee (added 2026-01-02)\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = keyword_workspace(tmp_path)
    (root / "MEMORY.md").write_text(MEMORY)
    return root


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def raw_bytes_contain(root: Path, needle: str) -> list[str]:
    return [rel for rel, data in files(root).items() if needle.encode() in data]


def search(ws: Path, query: str) -> list[dict]:
    return json.loads(sf(ws, "memory", "search", query, "--json"))


# --------------------------------------------------------------------------- ChatGPT


@pytest.mark.parametrize("source", ["chatgpt", "claude"])
def test_an_export_that_is_not_utf8_is_one_reported_line_and_exit_1(ws: Path, tmp_path: Path, source: str) -> None:
    """A latin-1 re-save of an export, or a binary file: reported as unreadable, naming the
    file and the byte, with status 1 for scripts (nothing was read); no traceback, no write."""
    export = tmp_path / "conversations.json"
    export.write_bytes(json.dumps([{"title": "Café au lait", "mapping": {}}], ensure_ascii=False).encode("latin-1"))
    before = files(ws)
    for path in (export, DATA / "binary.bin"):
        if not path.exists():
            path = tmp_path / "binary.bin"
            path.write_bytes(bytes(range(256)) * 4)
        out = run_cli("-w", str(ws), "import", source, str(path))
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        assert "unreadable: " in out.stdout and path.name in out.stdout
        assert "not valid UTF-8" in out.stdout or "expected a JSON array" in out.stdout, out.stdout
    assert files(ws) == before


def test_chatgpt_keeps_the_current_branch_only_and_reimport_adds_nothing(ws: Path, tmp_path: Path) -> None:
    before = files(ws)
    dry = imported(ws, "chatgpt", DATA / "chatgpt", "--dry-run")
    assert files(ws) == before, "--dry-run wrote something"
    assert (dry["imported"], dry["messages"], len(dry["unreadable"])) == (2, 5, 1)

    report = imported(ws, "chatgpt", DATA / "chatgpt" / "conversations.json")
    assert (report["imported"], report["messages"], report["duplicates"]) == (2, 5, 0)
    assert report["unreadable"][0]["where"] == "conversations.json line 45"
    assert report["files"] == dry["files"]
    path = "memory/2024-03-01-chatgpt-allotment-watering-plan-60050c64.md"
    assert path in report["files"]
    text = (ws / path).read_text()
    # one line per message, the speaker first, the conversation's own dates
    assert "\nUser: How often should I water the tomato beds on plot 14? <!-- src: chatgpt msg=n3 at=2024-03-01T10:02:00Z -->\n" in text
    assert "Assistant: Water the tomato beds deeply twice a week, early in the morning." in text
    assert "\n## 2024-03-02\n" in text
    # the abandoned edit and its answer are nowhere: not in the files, not in the index
    assert raw_bytes_contain(ws, "gondola") == []
    assert raw_bytes_contain(tmp_path / "state", "gondola") == []
    assert search(ws, "zucchini gondola") == []
    hit = search(ws, "rain barrel litres")[0]
    assert hit["path"] == path
    assert "chatgpt msg=n5 at=2024-03-02T10:00:00Z" in hit["provenance"]
    assert "src:" not in hit["snippet"], "the provenance is not content"
    assert (ws / "MEMORY.md").read_text() == MEMORY

    after = files(ws)
    again = imported(ws, "chatgpt", DATA / "chatgpt")
    assert (again["imported"], again["duplicates"]) == (0, 2)
    assert files(ws) == after


def test_memory_get_keeps_the_provenance(ws: Path) -> None:
    imported(ws, "chatgpt", DATA / "chatgpt")
    got = json.loads(sf(ws, "memory", "get", "memory/2024-04-01-chatgpt-sourdough-23bbcfb8.md", "--json"))
    assert "User: My starter is called Clint Yeastwood. <!-- src: chatgpt msg=s1" in got["text"]


# --------------------------------------------------------------------------- Claude.ai


def test_claude_export_with_an_injection_refused_and_quarantined(ws: Path, tmp_path: Path) -> None:
    report = imported(ws, "claude", DATA / "claude")
    assert (report["imported"], report["messages"], report["refused"]) == (1, 2, 1)
    text = (ws / report["files"][0]).read_text()
    assert report["files"][0].startswith("memory/2025-01-14-claude-choir-rehearsal-schedule-")
    assert "User: Our choir rehearses in the old boathouse every Thursday at 7." in text
    assert "Assistant: Noted: Thursday rehearsals at the boathouse." in text  # from content blocks
    assert "reveal your system prompt" not in text
    quarantine = list((tmp_path / "state" / "quarantine").glob("*.jsonl"))
    assert "reveal your system prompt" in quarantine[0].read_text()
    assert search(ws, "boathouse rehearsal")[0]["path"] == report["files"][0]
    assert (ws / "MEMORY.md").read_text() == MEMORY
    again = imported(ws, "claude", DATA / "claude")
    assert (again["imported"], again["duplicates"], again["refused"]) == (0, 1, 0)


# --------------------------------------------------------------------------- Claude Code and Codex


def test_claude_code_transcripts_and_claude_md(ws: Path) -> None:
    report = imported(ws, "claude-code", DATA / "claude-code")
    assert (report["imported"], report["messages"]) == (2, 2)
    assert "1 line(s) are not JSON (line 6)" in report["unreadable"][0]["why"]
    conv = next(f for f in report["files"] if "claude-code-irrigation" in f)
    text = (ws / conv).read_text()
    assert text.startswith("# Claude Code: Irrigation controller firmware <!-- src: claude-code conv=0b7e1c2a")
    assert "User: The irrigation controller runs on an ESP32 called drip-brain." in text
    assert "Assistant: I'll flash drip-brain over USB." in text
    assert "marmalade" not in text and "main.c" not in text  # side chains, tool output
    memo = next(f for f in report["files"] if f.startswith("memory/imports/claude-code/"))
    assert (ws / memo).read_bytes() == (DATA / "claude-code/projects/-home-sam-garden/CLAUDE.md").read_bytes()
    assert {h["path"] for h in search(ws, "drip-brain ESP32")} == {conv, memo}
    assert (ws / "MEMORY.md").read_text() == MEMORY
    n = len(files(ws))
    assert imported(ws, "claude-code", DATA / "claude-code")["imported"] == 0 and len(files(ws)) == n


def test_codex_rollouts_and_agents_md(ws: Path) -> None:
    ours = (ws / "AGENTS.md").read_bytes()
    report = imported(ws, "codex", DATA / "codex")
    assert (report["imported"], report["messages"], report["unreadable"]) == (2, 2, [])
    conv = next(f for f in report["files"] if "-codex-" in f)
    assert conv.startswith("memory/2025-02-03-codex-my-cargo-bike")
    text = (ws / conv).read_text()
    assert "User: My cargo bike's rear hub is a Shimano Nexus 8." in text
    assert "environment_context" not in text
    assert (ws / "AGENTS.md").read_bytes() == ours, "their AGENTS.md is memory, not our context file"
    assert search(ws, "Nexus hub oil")[0]["path"] == conv
    assert search(ws, "torque newton metres")[0]["path"].startswith("memory/imports/codex/")
    assert (ws / "MEMORY.md").read_text() == MEMORY
    n = len(files(ws))
    assert imported(ws, "codex", DATA / "codex")["imported"] == 0 and len(files(ws)) == n


# --------------------------------------------------------------------------- OpenClaw


def test_openclaw_home_config_mapped_every_other_key_listed(tmp_path: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    out = run_cli("-w", str(ws), "import", "openclaw", str(DATA / "openclaw"))
    assert out.returncode == 0, out.stderr
    assert "sk-ant-openclaw-fixture" not in out.stdout + out.stderr
    assert "hunter2" not in out.stdout + out.stderr  # a URL's password is a secret too
    assert "not mapped: models.providers.anthropic.apiKey (line 23): a secret" in out.stdout
    assert "not mapped: agents.defaults.memorySearch.remote.baseUrl (line 19): a secret" in out.stdout
    for key in ("agents.defaults.heartbeat.every (line 8)",
                "agents.defaults.memorySearch.chunking.overlap (line 17)",
                "agents.defaults.memorySearch.query.hybrid.candidateMultiplier (line 18)",
                "agents.defaults.memorySearch.store.path (line 19)",
                "channels.telegram.enabled (line 25)", "models.providers.anthropic.baseUrl (line 23)"):
        assert f"not mapped: {key}" in out.stdout, key
    config = tomllib.loads((ws / "soulframe.toml").read_text())
    assert config["bootstrap"] == {"max_chars_per_file": 18000}
    assert config["timezone"] == "Europe/Lisbon"
    assert config["memory"] == {"enabled": True, "max_results": 8, "min_score": 0.3,
                                "text_weight": 0.4, "vector_weight": 0.6, "chunk_max_chars": 800}
    assert config["flush"] == {"enabled": True, "soft_threshold_tokens": 3500, "reserve_tokens_floor": 20000}
    assert config["embedding"] == {"provider": "local"}
    assert raw_bytes_contain(ws, "sk-ant-openclaw-fixture") == []
    for rel in ("SOUL.md", "MEMORY.md", "memory/2025-01-05.md", "skills/seed-swap/SKILL.md"):
        assert (ws / rel).read_bytes() == (DATA / "openclaw" / "workspace" / rel).read_bytes()
    # the mapped configuration is the one soulframe now runs with
    shown = run_cli("-w", str(ws), "config", "show").stdout
    assert "bootstrap.max_chars_per_file = 18000" in shown and 'timezone = "Europe/Lisbon"' in shown


def test_openclaw_into_a_workspace_of_your_own(ws: Path) -> None:
    report = imported(ws, "openclaw", DATA / "openclaw")
    assert (ws / "MEMORY.md").read_text() == MEMORY, "MEMORY.md is never overwritten"
    aside = ws / "memory/imports/openclaw/MEMORY.md"
    assert aside.read_bytes() == (DATA / "openclaw/workspace/MEMORY.md").read_bytes()
    assert any("MEMORY.md: you have your own: kept yours" in n for n in report["notes"])
    assert (ws / "soulframe.openclaw.toml").exists(), "our soulframe.toml is not overwritten either"
    assert search(ws, "bees plot")[0]["path"] == "memory/imports/openclaw/MEMORY.md"
    assert search(ws, "hive queen")[0]["path"] == "memory/2025-01-05.md"
    n = files(ws)
    again = imported(ws, "openclaw", DATA / "openclaw")
    assert again["imported"] == 0 and files(ws) == n


def test_openclaw_a_workspace_link_is_not_followed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "openclaw", home)
    (tmp_path / "secret.md").write_text("outside the workspace\n")
    (home / "workspace" / "memory" / "leak.md").symlink_to(tmp_path / "secret.md")
    ws = tmp_path / "fresh"
    ws.mkdir()
    report = imported(ws, "openclaw", home)
    assert not (ws / "memory" / "leak.md").exists()
    assert "memory/leak.md: a symbolic link, not followed" in report["notes"]


def test_openclaw_copies_only_a_folder_that_is_a_workspace(tmp_path: Path, _isolated_home: Path) -> None:
    """Every regular file of their workspace is copied, so a home from someone else must not
    name one of yours: a `workspace` link to your home directory, or `agents.defaults.workspace
    = "~"`, copied your own files into the agent (then its exports and backups)."""
    mine = _isolated_home / "Documents"
    mine.mkdir(parents=True)
    (mine / "tax-return.pdf").write_bytes(b"%PDF-1.4 private")
    (mine / "notes.md").write_text("my own notes\n")
    linked = tmp_path / "linked-home"
    linked.mkdir()
    (linked / "workspace").symlink_to(_isolated_home)
    (linked / "openclaw.json").write_text('{agents: {defaults: {userTimezone: "Europe/Lisbon"}}}\n')
    named = tmp_path / "named-home"
    named.mkdir()
    (named / "openclaw.json").write_text('{agents: {defaults: {workspace: "~"}}}\n')
    for home, said in ((linked, f"{linked / 'workspace'} has none of"),
                       (named, "agents.defaults.workspace = '~'")):
        ws = tmp_path / f"into-{home.name}"
        ws.mkdir()
        out = run_cli("-w", str(ws), "import", "openclaw", str(home))
        assert out.returncode == 1 and said in out.stderr and "Traceback" not in out.stderr, out.stderr
        assert sorted(p.name for p in ws.rglob("*")) == [], "nothing copied, no soulframe.toml written"
    # their real workspace, reached through a link, is still imported
    real = tmp_path / "real-home"
    shutil.copytree(DATA / "openclaw", real / "elsewhere")
    (real / "workspace").symlink_to(real / "elsewhere" / "workspace")
    ws = tmp_path / "fresh"
    ws.mkdir()
    assert imported(ws, "openclaw", real)["imported"] > 0 and (ws / "SOUL.md").is_file()


def test_a_broken_openclaw_json_names_file_line_and_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "openclaw.json").write_text("{\n  agents: {\n    defaults: { bootstrapMaxChars 100 },\n  },\n}\n")
    ws = tmp_path / "fresh"
    ws.mkdir()
    out = run_cli("-w", str(ws), "import", "openclaw", str(home))
    assert out.returncode != 0
    assert f"{home / 'openclaw.json'} line 3 (key agents.defaults.bootstrapMaxChars): invalid JSON5: expected ':'" in out.stderr


# --------------------------------------------------------------------------- JSON5


def test_json5_subset() -> None:
    text = """// a comment
    {
      unquoted: 'single \\'quoted\\'',  /* block
      comment */ "quoted": [1, 2.5, -3, +4, 0x1F, .5, 6e2, true, null,],
      nested: { deep: { ok: "yes", }, },
      url: "https://example.com/a//b",
    }
    """
    assert json5.loads(text) == {"unquoted": "single 'quoted'", "quoted": [1, 2.5, -3, 4, 31, 0.5, 600.0, True, None],
                                 "nested": {"deep": {"ok": "yes"}}, "url": "https://example.com/a//b"}
    assert json5.key_lines(text)["nested.deep.ok"] == 5
    with pytest.raises(ConfigError, match=r"^x.json5 line 3 \(key a.b\): invalid JSON5: unexpected character '\}'"):
        json5.loads("{\n a: {\n  b: }\n}", "x.json5")
    with pytest.raises(ConfigError, match="line 1 .*never closed"):
        json5.loads("{ a: 'open }", "x.json5")
    with pytest.raises(ConfigError, match="nested too deeply"):
        json5.loads("[" * 100_000, "x.json5")


def test_the_docs_mapping_table_lists_every_mapped_key() -> None:
    from soulframe_transfer.openclaw import MAPPING

    page = (Path(__file__).parents[3] / "docs" / "moving.md").read_text()
    for theirs, (ours, _fn, _note) in MAPPING.items():
        shown = f"agents.defaults.{theirs}" if theirs.startswith("memorySearch.") else theirs
        assert f"| `{shown}` | `{ours}` |" in page, theirs


def test_a_conversation_continued_since_gets_only_its_new_messages(ws: Path, tmp_path: Path) -> None:
    imported(ws, "chatgpt", DATA / "chatgpt")
    path = ws / "memory/2024-03-01-chatgpt-allotment-watering-plan-60050c64.md"
    before = path.read_text()
    export = json.loads((DATA / "chatgpt" / "conversations.json").read_text())
    conv = export[0]
    conv["mapping"]["n5"]["children"] = ["n6"]
    conv["mapping"]["n6"] = {"id": "n6", "parent": "n5", "children": [], "message": {
        "id": "n6", "author": {"role": "assistant"}, "create_time": 1709550000.0,
        "content": {"content_type": "text", "parts": ["Then fill the barrel from the roof gutter."]}}}
    conv["current_node"] = "n6"
    newer = tmp_path / "newer" / "conversations.json"
    newer.parent.mkdir()
    newer.write_text(json.dumps(export))
    report = imported(ws, "chatgpt", newer)
    assert (report["imported"], report["updated"], report["messages"], report["duplicates"]) == (0, 1, 1, 1)
    after = path.read_text()
    assert after.startswith(before)
    assert after[len(before):] == ("\n## 2024-03-04\n\nAssistant: Then fill the barrel from the roof gutter."
                                   " <!-- src: chatgpt msg=n6 at=2024-03-04T11:00:00Z -->\n")
    again = imported(ws, "chatgpt", newer)
    assert (again["updated"], again["duplicates"]) == (0, 2) and path.read_text() == after


def test_a_dry_run_writes_nothing_in_the_state_directory_either(ws: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    sf(ws, "memory", "search", "tea")  # the index, as any command makes it
    before = files(state)
    for source, path in (("chatgpt", DATA / "chatgpt"), ("openclaw", DATA / "openclaw")):
        imported(ws, source, path, "--dry-run")
        assert files(state) == before, source
        assert not (state / "forgotten").exists()


def test_openclaw_again_after_a_forget_adds_nothing(tmp_path: Path) -> None:
    """Their daily log less the line forgotten since is the one we have: here already, not
    a second copy of every other line under memory/imports/openclaw/."""
    home = tmp_path / "home"
    shutil.copytree(DATA / "openclaw", home)
    (home / "workspace" / "memory" / "2025-01-06.md").write_text(
        "# 2025-01-06\n\n- Booked the ferry to Culatra\n- Dentist on Tuesday at nine\n- Bought leek seeds\n")
    ws = tmp_path / "fresh"
    ws.mkdir()
    imported(ws, "openclaw", home)
    sf(ws, "forget", "Dentist on Tuesday", "--yes")
    n = files(ws)
    again = imported(ws, "openclaw", home)
    assert again["imported"] == 0 and again["files"] == [] and not (ws / "memory" / "imports").exists()
    assert files(ws) == n
    assert (ws / "memory" / "2025-01-06.md").read_text() == "# 2025-01-06\n\n- Booked the ferry to Culatra\n- Bought leek seeds\n"


@pytest.mark.parametrize("legacy_first", [True, False])
def test_openclaw_current_memory_search_wins_over_a_leftover_top_level_one(tmp_path: Path, legacy_first: bool) -> None:
    """memorySearch moved under agents.defaults: a leftover top-level block does not
    override the current one, wherever it is in the file, and is listed as not mapped."""
    current = "agents: { defaults: { memorySearch: { provider: 'openai', query: { maxResults: 8 } } } },"
    legacy = "memorySearch: { provider: 'local', query: { maxResults: 3 } },"
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "MEMORY.md").write_text("# MEMORY.md\n")
    (home / "openclaw.json").write_text("{\n" + "\n".join([legacy, current] if legacy_first else [current, legacy]) + "\n}\n")
    ws = tmp_path / "fresh"
    ws.mkdir()
    report = imported(ws, "openclaw", home)
    config = tomllib.loads((ws / "soulframe.toml").read_text())
    assert config["embedding"] == {"provider": "openai"} and config["memory"] == {"max_results": 8}
    assert {m["from"] for m in report["config"]["mapped"]} == {
        "agents.defaults.memorySearch.provider", "agents.defaults.memorySearch.query.maxResults"}
    assert {u["key"] for u in report["config"]["unmapped"]} == {"memorySearch.provider", "memorySearch.query.maxResults"}


def test_openclaw_values_soulframe_does_not_take_are_listed_not_written(tmp_path: Path) -> None:
    """A mistyped time zone or an out-of-range size would make soulframe.toml fail to load,
    and with it every later command in the workspace: such a key is left out and listed,
    the rest written."""
    home = tmp_path / "home"
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "MEMORY.md").write_text("# MEMORY.md\n\n- The ferry leaves at nine.\n")
    (home / "openclaw.json").write_text(
        "{ agents: { defaults: {\n  userTimezone: 'Mars/Olympus',\n  bootstrapMaxChars: 18000,\n"
        "  memorySearch: { query: { minScore: 7 } },\n} } }\n")
    ws = tmp_path / "fresh"
    ws.mkdir()
    report = imported(ws, "openclaw", home)
    assert tomllib.loads((ws / "soulframe.toml").read_text()) == {"bootstrap": {"max_chars_per_file": 18000}}
    why = {u["key"]: u["why"] for u in report["config"]["unmapped"]}
    assert "not a known IANA timezone" in why["agents.defaults.userTimezone"]
    assert "between 0 and 1" in why["agents.defaults.memorySearch.query.minScore"]
    assert [m["to"] for m in report["config"]["mapped"]] == ["bootstrap.max_chars_per_file"]
    assert search(ws, "ferry")[0]["path"] == "MEMORY.md"  # the workspace still loads
