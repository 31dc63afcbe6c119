"""examples/agent_loop.py runs for real: against a real HTTP server on 127.0.0.1 that speaks
the OpenAI chat-completions protocol and replays a tool call, then an answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from conftest import REPO, run_cli
from fakes.llm_server import FakeLLMServer, call, say


def test_agent_loop_example_uses_exported_tools_and_dispatch(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The Lisbon trip moved to 14 October.\n")
    script = [call("memory_search", query="when is the Lisbon trip"), say("It moved to 14 October.")]
    with FakeLLMServer(script) as server:
        out = subprocess.run(
            [sys.executable, str(REPO / "examples" / "agent_loop.py"), str(workspace),
             "When is the Lisbon trip?", "--base-url", server.openai_base_url, "--model", "test-model"],
            capture_output=True, text=True, timeout=300,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "It moved to 14 October."
        first, second = (r.json for r in server.requests)
        names = {t["function"]["name"] for t in first["tools"]}
        assert {"memory_search", "memory_get"} <= names
        assert first["messages"][0]["role"] == "system"
        tool_result = json.loads(second["messages"][-1]["content"])
        assert "14 October" in json.dumps(tool_result)


def test_agent_loop_example_explains_http_failures(workspace: Path) -> None:
    run_cli("init", str(workspace), check=True)
    example = [sys.executable, str(REPO / "examples" / "agent_loop.py"), str(workspace), "hi", "--model", "m"]
    with FakeLLMServer([], require_key="sk-right") as server:
        out = subprocess.run([*example, "--base-url", server.openai_base_url], capture_output=True, text=True,
                             timeout=300, env={**os.environ, "OPENAI_API_KEY": "sk-wrong"})
    assert out.returncode == 1 and "HTTP 401" in out.stderr and "Traceback" not in out.stderr
    assert "sk-wrong" not in out.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = subprocess.run([*example, "--base-url", f"http://127.0.0.1:{port}/v1"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1 and "cannot reach" in out.stderr and "Traceback" not in out.stderr
