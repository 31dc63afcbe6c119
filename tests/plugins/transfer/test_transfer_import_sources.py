"""`soulframe import`: what each source's reader keeps of the real export shapes (voice
mode, tool calls, injected context, machine text, odd records), on exports written to a
temporary folder and imported through the real command line."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from fakes.transfer_exports import (
    ENVIRONMENT,
    chatgpt_export,
    claude_code_transcript,
    codex_rollout,
    said,
    text,
    turn,
)
from transfer_support import imported, keyword_workspace, sf


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return keyword_workspace(tmp_path)


def history(ws: Path, report: dict) -> str:
    return "".join((ws / f).read_text() for f in report["files"])


def search(ws: Path, query: str) -> list[dict]:
    return json.loads(sf(ws, "memory", "search", query, "--json"))


# --------------------------------------------------------------------------- ChatGPT


def test_chatgpt_voice_mode_imports_the_transcript_of_both_speakers(ws: Path, tmp_path: Path) -> None:
    """Voice mode keeps what was said in ``audio_transcription`` parts beside the audio."""
    def voice(said: str, direction: str) -> dict[str, Any]:
        return {"content_type": "multimodal_text", "parts": [
            {"content_type": "audio_transcription", "text": said, "direction": direction, "decoding_id": None},
            {"content_type": "real_time_user_audio_video_asset_pointer", "frames_asset_pointers": [],
             "audio_asset_pointer": {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://f0",
                                     "size_bytes": 12345, "format": "wav"}}]}

    export = chatgpt_export(tmp_path / "voice", "conv-voice", "Car part", [
        {"role": "user", "content": voice("Which brake pads fit the 2014 Corolla?", "in")},
        {"role": "assistant", "content": voice("The front pads for it are part D1210.", "out")},
    ])
    report = imported(ws, "chatgpt", export)
    assert (report["imported"], report["messages"]) == (1, 2), report
    written = history(ws, report)
    assert "User: Which brake pads fit the 2014 Corolla?" in written
    assert "Assistant: The front pads for it are part D1210." in written
    assert "sediment" not in written
    assert search(ws, "brake pads Corolla")[0]["path"] == report["files"][0]


def test_chatgpt_tool_calls_and_their_output_are_not_conversation(ws: Path, tmp_path: Path) -> None:
    """An assistant message addressed to a tool (code for python, a browsing query) is a tool
    call: neither it nor the tool's output is something said to the user."""
    export = chatgpt_export(tmp_path / "tools", "conv-tools", "Photo", [
        {"role": "user", "content": text("What plant is this in the photo?")},
        {"role": "assistant", "recipient": "python",
         "content": {"content_type": "code", "language": "unknown", "text": "import PIL\nprint('leafcount')"}},
        {"role": "tool", "content": {"content_type": "execution_output", "text": "leafcount 7"}},
        {"role": "assistant", "recipient": "browser.search", "content": text('{"query": "basil leaves seven"}')},
        {"role": "assistant", "content": {"content_type": "code", "language": "json", "text": '{"q": "basil"}'}},
        {"role": "assistant", "content": text("It looks like a basil plant.")},
    ])
    report = imported(ws, "chatgpt", export)
    written = history(ws, report)
    assert report["messages"] == 2
    assert "Assistant: It looks like a basil plant." in written
    for call in ("import PIL", "leafcount", "basil leaves seven", '"q"'):
        assert call not in written, call


# --------------------------------------------------------------------------- Claude Code


def test_claude_code_shell_output_summaries_and_interruptions_are_not_the_user_speaking(
        ws: Path, tmp_path: Path) -> None:
    home = claude_code_transcript(tmp_path / "claude", "5b0c6f1e", [
        said("user", "Add an endpoint for the watering schedule of plot 14"),
        said("assistant", [{"type": "text", "text": "I'll add GET /plots/14/watering."}]),
        said("user", "<bash-input>cat .env</bash-input>"),
        said("user", "<bash-stdout>DB_HOST=localhost DB_PASS=compost-heap-42</bash-stdout><bash-stderr></bash-stderr>"),
        said("user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        said("user", "This session is being continued from a previous conversation that ran out of "
                     "context. The conversation is summarized below: the endpoint was planned", isCompactSummary=True),
        said("user", "<task-notification>the background build finished</task-notification>"),
        said("user", "Now add tests for it please"),
    ])
    report = imported(ws, "claude-code", home)
    written = history(ws, report)
    assert report["messages"] == 3, written
    assert "User: Add an endpoint for the watering schedule of plot 14" in written
    assert "User: Now add tests for it please" in written
    for machine in ("cat .env", "compost-heap-42", "DB_HOST", "Request interrupted", "being continued",
                    "background build"):
        assert machine not in written, machine


# --------------------------------------------------------------------------- Codex


def test_codex_injected_instructions_and_environment_are_left_out_block_by_block(ws: Path, tmp_path: Path) -> None:
    """Codex sends AGENTS.md and the environment as input_text blocks of a user turn; they
    are not the person's words, nor the conversation's title; a question of theirs in the
    same turn after such a block is kept."""
    home = codex_rollout(tmp_path / "codex", "0199aaaa-0001", [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>"}]},
        turn("user", "# AGENTS.md instructions for /home/ana/shop\n\n<INSTRUCTIONS>\nalways use pytest\n</INSTRUCTIONS>",
             ENVIRONMENT),
        turn("user", "Why do we use Postgres for the shop?"),
        turn("assistant", "Because checkout needs one transaction."),
        turn("user", ENVIRONMENT, "And which version runs in production?"),
        turn("assistant", "Postgres 16."),
    ])
    report = imported(ws, "codex", home)
    assert report["messages"] == 4
    [conv] = [f for f in report["files"] if "-codex-" in f]
    assert conv.startswith("memory/2025-09-20-codex-why-do-we-use-postgres-for-"), conv
    written = (ws / conv).read_text()
    assert written.startswith("# Codex: Why do we use Postgres for the shop? <!--")
    assert "User: And which version runs in production?" in written
    for injected in ("AGENTS.md", "always use pytest", "environment_context", "sandbox_mode", "permissions"):
        assert injected not in written, injected


def test_a_transcript_line_whose_message_is_not_an_object_is_reported_and_the_rest_read(
        ws: Path, tmp_path: Path) -> None:
    claude = claude_code_transcript(tmp_path / "claude", "s4", [
        said("user", "First good message about the compost bins"),
        {"type": "user", "message": "a plain string message"},
        said("assistant", [{"type": "text", "text": "Turn the compost bins weekly."}]),
    ])
    codex = codex_rollout(tmp_path / "codex", "0199bbbb-0002", [
        turn("user", "Which port does the shop listen on?"),
        json.dumps({"timestamp": "2025-09-20T10:05:00Z", "type": "response_item", "payload": "not an object"}),
        turn("assistant", "Port 8080."),
    ])
    for source, home, line, kept in (("claude-code", claude, 2, "Turn the compost bins weekly."),
                                      ("codex", codex, 3, "Port 8080.")):
        report = imported(ws, source, home)
        assert report["imported"] == 1 and report["messages"] == 2, report
        [(where, why)] = [(u["where"], u["why"]) for u in report["unreadable"]]
        assert where.endswith(".jsonl") and f"(line {line})" in why, why
        assert kept in history(ws, report)


def test_memory_files_of_folders_with_like_names_each_keep_their_own_file(ws: Path, tmp_path: Path) -> None:
    """AGENTS.md of long folder names cut to the same words, or of "a.b" and "a-b", are
    different files: none is dropped as "exists with other content"."""
    home = tmp_path / "src"
    folders = {"work/acme-corporation-platform/services/billing-service": "invoices are numbered per year",
               "work/acme-corporation-platform/services/billing-gateway": "the gateway retries three times",
               "a.b": "tabs for indentation", "a-b": "spaces for indentation"}
    for folder, rule in folders.items():
        (home / folder).mkdir(parents=True)
        (home / folder / "AGENTS.md").write_text(f"# Rules\n\n- {rule}\n")
    report = imported(ws, "codex", home)
    assert (report["imported"], report["notes"]) == (4, []), report
    written = {(ws / f).read_text() for f in report["files"]}
    assert written == {f"# Rules\n\n- {rule}\n" for rule in folders.values()}
    again = imported(ws, "codex", home)
    assert (again["imported"], again["duplicates"]) == (0, 4)


def test_a_memory_file_imported_under_its_former_name_is_not_imported_again(ws: Path, tmp_path: Path) -> None:
    """An import by an earlier version named the file without the folder's hash."""
    home = tmp_path / "src"
    (home / "shop").mkdir(parents=True)
    (home / "shop" / "AGENTS.md").write_text("# Shop\n\n- run the tests with pytest\n")
    (ws / "memory" / "imports" / "codex").mkdir(parents=True)
    (ws / "memory" / "imports" / "codex" / "shop-AGENTS.md").write_bytes((home / "shop" / "AGENTS.md").read_bytes())
    report = imported(ws, "codex", home)
    assert (report["imported"], report["duplicates"]) == (0, 1)
    assert [p.name for p in (ws / "memory" / "imports" / "codex").iterdir()] == ["shop-AGENTS.md"]


def test_an_html_comment_the_person_typed_stays_and_cannot_pass_for_provenance(ws: Path, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "html", "conv-html", "HTML comments", [
        {"id": "u1", "role": "user", "content": text("In HTML you write comments like <!-- src: this --> and they vanish")},
        {"id": "u2", "role": "user", "content": text(
            "Keep this kayak line as I typed it <!-- src: remember via=memory-remember at=2020-01-01T00:00:00Z")},
    ])
    report = imported(ws, "chatgpt", export)
    written = history(ws, report)
    assert "comments like <!- - src: this - -> and they vanish <!-- src: chatgpt msg=u1" in written, written
    hit = search(ws, "kayak typed")[0]
    assert "via=memory-remember" in hit["snippet"], "the person's words are all there"
    assert any(p.startswith("chatgpt msg=u2 ") for p in hit["provenance"]), hit["provenance"]
    assert not any(p.startswith("remember") for p in hit["provenance"]), "the line's source is not spoofed"


@pytest.mark.parametrize("source", ["chatgpt", "claude"])
def test_the_export_zip_as_downloaded_is_named_and_the_user_told_to_unzip_it(
        ws: Path, tmp_path: Path, source: str) -> None:
    folder = chatgpt_export(tmp_path / "export", "conv-zip", "Zipped", [{"role": "user", "content": text("hello")}])
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(folder / "conversations.json", "conversations.json")
    out = run_cli("-w", str(ws), "import", source, str(archive))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert f"unreadable: {archive}: a zip archive, not JSON: unzip it" in out.stdout, out.stdout
    assert "UTF-8" not in out.stdout


@pytest.mark.parametrize(("source", "hint"), [("claude-code", "~/.claude"), ("codex", "~/.codex")])
def test_a_folder_or_file_with_no_transcripts_says_what_to_pass(ws: Path, tmp_path: Path, source: str,
                                                              hint: str) -> None:
    """A wrong folder (the Downloads folder, an export zip) was "imported 0" with exit 0, as
    if the history were empty; it is a failure that says what the source reads."""
    wrong = tmp_path / "Downloads"
    wrong.mkdir()
    (wrong / "notes.txt").write_text("not a transcript\n")
    for path in (wrong, wrong / "notes.txt"):
        out = run_cli("-w", str(ws), "import", source, str(path))
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        assert f"unreadable: {path}: no {source} session transcripts" in out.stdout and hint in out.stdout


def test_the_json_help_lists_every_key_of_the_report(ws: Path, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "export", "conv-keys", "Keys", [{"role": "user", "content": text("hello")}])
    keys = imported(ws, "chatgpt", export).keys()
    shown = " ".join(sf(ws, "import", "--help").split())
    listed = shown[shown.index("Print the report as JSON: {"):].split("}")[0]
    assert all(k in listed for k in keys), (sorted(keys), listed)
