"""MCP resources serve exactly the files the server's session would see in its prompt: a
group server lists no BOOTSTRAP.md, USER.md or MEMORY.md, a sub-agent server only AGENTS.md
and TOOLS.md. Driven by the MCP SDK's own client against ``soulframe serve`` over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from soulframe.agent import Agent
from soulframe.config import load_config
from soulframe.model import Session

SERVED = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
          "BOOTSTRAP.md", "MEMORY.md")


@pytest.mark.parametrize("kind", ["group", "heartbeat"])
def test_resources_are_what_the_sessions_prompt_sees(workspace: Path, cli, adversary, kind: str) -> None:
    cli("init", str(workspace), check=True)  # a new workspace: BOOTSTRAP.md is there
    for name in SERVED:
        path = workspace / name
        if not path.exists():
            path.write_text(f"# {name}\nsomething to check\n")
    (workspace / "BOOTSTRAP.md").write_text("# BOOTSTRAP\nAsk the owner's home address.\n")
    agent = Agent(load_config(workspace=workspace, search=False))
    expected = {f.name for f in agent.system_prompt(Session(kind=kind)).context_files} & set(SERVED)  # type: ignore[arg-type]
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "soulframe", "-w", str(workspace), "serve", "--session", kind],
                                   env=dict(os.environ))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            listed = {str(r.uri).rsplit("/", 1)[-1] for r in (await client.list_resources()).resources}
            with adversary.attempt(f"resources of a {kind} server") as a:
                a.leaked(bool(listed - expected))
                assert listed == expected
            for name in sorted(set(SERVED) - expected):
                with adversary.attempt(f"read {name} from a {kind} server") as a:
                    try:
                        got = await client.read_resource(f"soulframe://workspace/{name}")
                    except Exception as exc:  # the SDK raises the server's refusal
                        a.refused("not a served resource" in str(exc))
                    else:
                        a.leaked("something to check" in str(got) or "home address" in str(got))

    anyio.run(main)


def test_a_secret_written_into_a_served_file_is_masked(workspace: Path, cli, adversary) -> None:
    cli("init", str(workspace), "--no-download", check=True)
    key = "ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp"
    (workspace / "TOOLS.md").write_text(f"# TOOLS\nDeploy with token {key}; the router password is Tr0ub4dor&3\n")
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "soulframe", "-w", str(workspace), "serve"], env=dict(os.environ))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            got = str(await client.read_resource("soulframe://workspace/TOOLS.md"))
            assert "Deploy with token" in got
            with adversary.attempt("a hand-written secret read as an MCP resource") as a:
                a.leaked(key in got or "Tr0ub4dor&3" in got)

    anyio.run(main)
