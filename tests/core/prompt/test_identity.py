"""The identity chain (seed 003 §1.3 / §2.3) and the lenient IDENTITY.md parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from soulframe import Agent, Session
from soulframe._engine.prompt.identity import explain_identity, parse_identity_md, resolve_identity

SEED_EXAMPLE = """# IDENTITY.md

- **Name:** Aria
- **Creature:** AI with opinions
- **Vibe:** Calm, dry, sharp
- **Emoji:** 🌿
- **Avatar:** avatars/aria.png
"""


def test_the_seed_example_parses() -> None:
    parsed = parse_identity_md(SEED_EXAMPLE)
    assert parsed.values == {"name": "Aria", "creature": "AI with opinions", "vibe": "Calm, dry, sharp",
                             "emoji": "🌿", "avatar": "avatars/aria.png"}
    assert parsed.lines["name"] == 3
    assert parsed.problems == []


@pytest.mark.parametrize("line", [
    "- **Name:** Sage",
    "**Name:** Sage",
    "**Name**: Sage",
    "Name: Sage",
    "- Name: Sage",
    "* name = Sage",
    "1. Name: Sage",
    "  - __Name:__ Sage  ",
    "Name：Sage",
    "- **Name:** *Sage*",
    "- **Name:** `Sage`",
    "name: Sage",
])
def test_name_formats(line: str) -> None:
    assert parse_identity_md(f"# IDENTITY.md\n\n{line}\n").values.get("name") == "Sage"


def test_emoji_with_modifiers_and_zwj_survives() -> None:
    parsed = parse_identity_md("- **Emoji:** 🧑\u200d💻\n- **Name:** Dev\n")
    assert parsed.values["emoji"] == "🧑\u200d💻"


def test_template_placeholders_count_as_unset_without_a_warning() -> None:
    from soulframe._engine.workspace import workspace_templates

    template = {t.name: t for t in workspace_templates()}["IDENTITY.md"].content
    parsed = parse_identity_md(template)
    assert parsed.values == {} and parsed.problems == []


def test_fields_in_code_fences_and_headings_are_ignored() -> None:
    parsed = parse_identity_md("# Name: Heading\n```\nName: Fenced\n```\n- Name: Real\n")
    assert parsed.values == {"name": "Real"}


def test_malformed_identity_gives_warnings_naming_the_line() -> None:
    text = "- **Name:** " + "x" * 100 + "\n- **Name:** Sage\n- **Name:** Other\n"
    parsed = parse_identity_md(text)
    assert parsed.values["name"] == "Sage"
    assert any("IDENTITY.md:1" in p and "100 characters" in p for p in parsed.problems)
    assert any("IDENTITY.md:3" in p and "second name" in p for p in parsed.problems)


def test_prose_without_fields_is_a_warning() -> None:
    parsed = parse_identity_md("I am a helpful bot who likes cats.\n")
    assert parsed.values == {}
    assert "no identity field found" in parsed.problems[0]


# --------------------------------------------------------------------------- the chain


def test_default_is_assistant(workspace: Path) -> None:
    ident = resolve_identity(Agent.open(workspace))
    assert ident.name == "Assistant" and ident.source == "default" and ident.emoji is None


def test_identity_md_is_used(workspace: Path) -> None:
    (workspace / "IDENTITY.md").write_text(SEED_EXAMPLE)
    ident = resolve_identity(Agent.open(workspace))
    assert (ident.name, ident.emoji, ident.avatar, ident.source) == ("Aria", "🌿", "avatars/aria.png", "IDENTITY.md")


def test_agent_config_overrides_identity_md_field_by_field(workspace: Path, tmp_path: Path) -> None:
    (workspace / "IDENTITY.md").write_text(SEED_EXAMPLE)
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text(f'[[agents]]\nid = "aria"\nworkspace = "{workspace}"\nidentity = {{ name = "C-3PO" }}\n')
    report = explain_identity(Agent.open(config=str(cfg)))
    assert report.identity.name == "C-3PO" and report.identity.source == "config"
    assert report.sources["name"] == "agents[aria].identity"
    assert report.identity.emoji == "🌿" and report.sources["emoji"] == "IDENTITY.md:6"


def test_ui_config_wins_over_everything(workspace: Path, tmp_path: Path) -> None:
    (workspace / "IDENTITY.md").write_text(SEED_EXAMPLE)
    cfg = tmp_path / "soulframe.toml"
    cfg.write_text(f'[ui]\nassistant_name = "Jarvis"\nassistant_emoji = "🤖"\n'
                   f'[[agents]]\nid = "a"\nworkspace = "{workspace}"\nidentity = {{ name = "C-3PO" }}\n')
    report = explain_identity(Agent.open(config=str(cfg)))
    assert report.identity.name == "Jarvis" and report.identity.source == "ui"
    assert report.identity.emoji == "🤖" and report.sources["emoji"] == "ui.assistant_emoji"
    assert report.identity.avatar == "avatars/aria.png"


def test_malformed_identity_md_warns_and_falls_back(workspace: Path) -> None:
    (workspace / "IDENTITY.md").write_bytes(b"\xff\xfe\x00garbage\x00\x01 \xc3")
    assert resolve_identity(Agent.open(workspace)).name == "Assistant"
    with pytest.warns(UserWarning, match="IDENTITY.md: skipped — a binary file"):
        Agent.open(workspace).system_prompt(Session.main())


def test_identity_cli_json_says_where_each_field_came_from(workspace: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (workspace / "IDENTITY.md").write_text(SEED_EXAMPLE)
    out = cli("-w", str(workspace), "identity", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["identity"]["name"] == "Aria"
    assert data["sources"]["name"] == "IDENTITY.md:3"
    assert data["sources"]["creature"] == "IDENTITY.md:4"


def test_identity_cli_text_shows_warnings_not_a_traceback(workspace: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (workspace / "IDENTITY.md").write_text("just prose, no fields\n")
    out = cli("-w", str(workspace), "identity")
    assert out.returncode == 0
    assert "Assistant" in out.stdout and "(default)" in out.stdout
    assert "no identity field found" in out.stderr and "Traceback" not in out.stderr

