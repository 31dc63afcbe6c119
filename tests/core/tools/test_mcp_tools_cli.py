"""`soulframe tools export` and `soulframe tools call` as a user scripting a tool-calling
loop meets them: each format has the shape its chat API expects, and a bad call exits 1
with the message the model would read, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

SERVED = {"memory_search", "memory_get", "memory_remember", "skill_search", "skill_read"}


@pytest.fixture
def ws(workspace: Path) -> Path:
    run_cli("init", str(workspace), check=True)
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The Lisbon trip moved to 14 October.\n")
    return workspace


def export(ws: Path, fmt: str, *extra: str) -> list[dict]:
    out = run_cli("-w", str(ws), "tools", "export", "--format", fmt, *extra)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_export_in_each_format(ws: Path) -> None:
    openai = export(ws, "openai")
    assert {t["function"]["name"] for t in openai} >= SERVED
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in openai)
    anthropic = export(ws, "anthropic")
    assert {t["name"] for t in anthropic} >= SERVED
    assert all(set(t) == {"name", "description", "input_schema"} for t in anthropic)
    mcp = export(ws, "mcp")
    assert all(set(t) == {"name", "description", "inputSchema"} for t in mcp)
    # one set of tools, three shapes
    assert [t["function"]["parameters"] for t in openai] == [t["input_schema"] for t in anthropic]


def test_export_for_a_group_session_leaves_out_private_writes(ws: Path) -> None:
    names = {t["name"] for t in export(ws, "anthropic", "--session", "group")}
    assert "memory_remember" not in names and "memory_search" in names


def test_an_unknown_format_is_refused_naming_the_formats(ws: Path) -> None:
    out = run_cli("-w", str(ws), "tools", "export", "--format", "gemini")
    assert out.returncode == 2 and "openai" in out.stderr and "anthropic" in out.stderr


def test_call_prints_the_json_result(ws: Path) -> None:
    out = run_cli("-w", str(ws), "tools", "call", "memory_search", '{"query": "when is the Lisbon trip"}')
    assert out.returncode == 0, out.stderr
    assert "14 October" in json.dumps(json.loads(out.stdout))


def test_call_reads_the_arguments_from_stdin_with_a_dash(ws: Path) -> None:
    """A note with quotes and $ signs had to survive shell quoting inside a JSON string;
    `-` reads the arguments as `memory remember -` reads a note, and as boundedly."""
    note = {"text": 'Door code is "4711" & the $pare key is under the mat'}
    out = run_cli("-w", str(ws), "tools", "call", "memory_remember", "-", input=json.dumps(note))
    assert out.returncode == 0, out.stderr
    saved = json.loads(out.stdout)["path"]
    assert '- Door code is "4711" & the $pare key is under the mat' in (ws / saved).read_text()
    huge = run_cli("-w", str(ws), "tools", "call", "memory_search", "-", input=" " * (1024 * 1024 + 1))
    assert huge.returncode == 2 and "over 1,048,576 bytes" in huge.stderr


@pytest.mark.parametrize(("name", "arguments", "message"), [
    ("memory_search", "{bad", "not valid JSON"),
    ("memory_search", "[1, 2]", "expected object"),
    ("memory_search", '{"qeury": "x"}', "missing required argument 'query'"),
    ("memory_get", '{"path": "../../etc/passwd"}', "not allowed"),
    ("no_such_tool", "{}", "unknown tool 'no_such_tool'; available:"),
    ("memory_remember", json.dumps({"text": "x" * 100_000}), "over the limit"),
])
def test_a_bad_call_exits_1_with_the_models_error(ws: Path, name: str, arguments: str, message: str) -> None:
    out = run_cli("-w", str(ws), "tools", "call", name, arguments)
    assert out.returncode == 1
    error = json.loads(out.stderr)["error"]  # the error object every --json command answers
    assert message in error["message"] and error["code"] == 1
    assert "Traceback" not in out.stderr and out.stdout == ""
