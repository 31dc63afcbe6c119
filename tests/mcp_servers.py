"""``soulframe serve`` as the MCP tests meet it: a workspace with something to find, the
server in a subprocess over stdio or stateless HTTP (with this run's token), and the SDK's
own client speaking either revision."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

#: the revisions the SDK speaks, as a client pins them (legacy = the initialize handshake)
REVISIONS = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}
MEMORY_NOTE = "Priya prefers dark-mode screenshots for every UI bug report."


def make_workspace(workspace: Path) -> Path:
    from conftest import run_cli

    run_cli("init", str(workspace), check=True)
    (workspace / "SOUL.md").write_text("# SOUL.md\nBe warm, brief and exact.\n")
    (workspace / "MEMORY.md").write_text(f"# Memory\n\n- {MEMORY_NOTE}\n")
    (workspace / "USER.md").write_text("# USER.md\nThe owner lives at 12 Private Lane.\n")
    skill = workspace / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from merged pull requests\n---\n"
        "# Release notes\nRead {baseDir}/template.md, then list merged PRs by theme.\n"
    )
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n\n- Paid the studio rent.\n")
    (workspace.parent / "secret.txt").write_text("outside the workspace\n")
    return workspace


def stdio_params(workspace: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "soulframe", "-w", str(workspace), "serve", *extra],
                                 env=dict(os.environ))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@attrs.frozen
class HttpServer:
    url: str
    token: str
    port: int
    proc: subprocess.Popen[str]

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def token_file(workspace: Path, port: int) -> Path:
    from soulframe._engine.agent import Agent

    agent = Agent.open(workspace, embedding__provider="none")
    try:
        return agent.state_dir / "serve" / f"http-{port}.token"
    finally:
        agent.close()


@contextmanager
def http_server(workspace: Path, *extra: str, host: str = "127.0.0.1") -> Iterator[HttpServer]:
    port = free_port()
    where = token_file(workspace, port)
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(workspace), "serve",
                             "--http", str(port), "--host", host, *extra],
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0 and where.exists():
                    break
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read() if proc.stderr else "serve exited")
            time.sleep(0.1)
        else:
            raise AssertionError("serve --http did not start")
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", where.read_text().strip(), port, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def client(target: StdioServerParameters | HttpServer, revision: str, **kwargs: Any) -> Client:
    """The SDK's client for ``target``, speaking ``revision``."""
    if isinstance(target, HttpServer):
        http = httpx2.AsyncClient(headers=target.headers(), timeout=httpx2.Timeout(30, read=120))
        server: Any = streamable_http_client(target.url, http_client=http)
    else:
        server = target
    return Client(server, mode=REVISIONS[revision], read_timeout_seconds=120, **kwargs)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
