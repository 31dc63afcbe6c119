"""MCP resources serve exactly what the server's session may see, judged by the file reached.

A group server lists no BOOTSTRAP.md, USER.md or MEMORY.md, a sub-agent server only AGENTS.md
and TOOLS.md; and no other name leads to those files — a symlink (``SOUL.md -> MEMORY.md``),
a hard link (``ln USER.md AGENTS.md``), a link inside ``memory/`` — nor to a file outside
the workspace hard-linked into ``memory/``. Driven by the MCP SDK's own client against
``soulframe serve``, in both protocol revisions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_servers import MEMORY_NOTE, REVISIONS, client, http_server, make_workspace, stdio_params
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.model import Session

SERVED = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
          "BOOTSTRAP.md", "MEMORY.md")
CONTEXT = "soulframe://workspace/"


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
            listed = {str(r.uri)[len(CONTEXT):] for r in (await client.list_resources()).resources
                      if str(r.uri).startswith(CONTEXT)}
            with adversary.attempt(f"resources of a {kind} server") as a:
                a.leaked(bool(listed - expected))
                assert listed == expected
            for name in sorted(set(SERVED) - expected):
                with adversary.attempt(f"read {name} from a {kind} server") as a:
                    try:
                        got = await client.read_resource(f"{CONTEXT}{name}")
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


PRIVATE_MEMORY = "PRIVATE-MEMORY-7f3a"
PRIVATE_USER = "PRIVATE-USER-19c2"
OUTSIDE = "OUTSIDE-SECRET-5d0e"
MARKERS = (PRIVATE_MEMORY, PRIVATE_USER, OUTSIDE)


def linked_workspace(workspace: Path) -> list[str]:
    """A workspace where other names lead to MEMORY.md, USER.md and a file outside; the URIs
    an attacker would try."""
    ws = make_workspace(workspace)
    (ws / "MEMORY.md").write_text(f"# Memory\n\n- {PRIVATE_MEMORY}\n")
    (ws / "USER.md").write_text(f"# USER\n\n{PRIVATE_USER}\n")
    outside = ws.parent / "outside.md"
    outside.write_text(f"# notes\n\n{OUTSIDE}\n")
    mem = ws / "memory"
    (ws / "SOUL.md").unlink()
    (ws / "SOUL.md").symlink_to("MEMORY.md")  # a context file that is MEMORY.md
    (ws / "AGENTS.md").unlink()
    os.link(ws / "USER.md", ws / "AGENTS.md")  # a hard link: the same file under a public name
    (ws / "TOOLS.md").unlink()
    (ws / "TOOLS.md").symlink_to(outside)  # out of the workspace
    os.link(outside, mem / "notes.md")  # a file from elsewhere, hard-linked into public memory
    os.link(ws / "MEMORY.md", mem / "copy.md")
    os.link(ws / "USER.md", mem / "profile.md")
    (mem / "mem.md").symlink_to("../MEMORY.md")
    (mem / "all").symlink_to("..")  # the whole workspace under memory/
    return [f"{CONTEXT}{n}" for n in SERVED] + [
        "memory://MEMORY.md", "memory://memory.md", "memory://memory/notes.md", "memory://memory/copy.md",
        "memory://memory/profile.md", "memory://memory/mem.md", "memory://memory/all/MEMORY.md",
        "memory://memory/all/USER.md", "memory://memory%2F..%2FMEMORY.md", "memory://memory/../MEMORY.md",
        "memory://../outside.md", "memory:///etc/passwd",
    ]


async def _attack(c: Client, adversary, tries: list[str], what: str, own: frozenset[str] = frozenset()) -> None:
    """``own``: URIs the session may list as its user's own copy (read below like the rest:
    none may hold the owner's text)."""
    listed = [r for r in (await c.list_resources()).resources]
    with adversary.attempt(f"{what}: list resources") as a:
        names = {str(r.uri) for r in listed}
        a.leaked(bool(names & ({"memory://MEMORY.md", f"{CONTEXT}MEMORY.md", f"{CONTEXT}USER.md"} - own)))
    for r in listed:  # whatever is listed reaches no private file
        with adversary.attempt(f"{what}: read listed {r.uri}") as a:
            text = (await c.read_resource(str(r.uri))).contents[0].text
            a.leaked(any(m in text for m in MARKERS))
    for uri in tries:
        with adversary.attempt(f"{what}: read {uri}") as a:
            try:
                got = await c.read_resource(uri)
            except Exception as exc:
                a.refused("not a served resource" in str(exc))
            else:
                a.leaked(any(m in got.contents[0].text for m in MARKERS))
    # the served public memory is still there: refusing everything would pass the above
    assert "memory://memory/2026-01-02.md" in {str(r.uri) for r in listed}


@pytest.mark.parametrize("revision", list(REVISIONS))
def test_a_group_server_serves_no_private_file_under_another_name(workspace: Path, adversary, revision: str) -> None:
    tries = linked_workspace(workspace)

    async def main() -> None:
        async with client(stdio_params(workspace, "--session", "group"), revision) as c:
            await _attack(c, adversary, tries, f"group server ({revision}, stdio)")

    anyio.run(main)


def test_a_group_server_over_http_serves_no_private_file(workspace: Path, adversary) -> None:
    tries = linked_workspace(workspace)
    with http_server(workspace, "--session", "group") as server:
        async def main() -> None:
            async with client(server, "2026-07-28") as c:
                await _attack(c, adversary, tries, "group server (2026-07-28, http)")

        anyio.run(main)


def test_a_file_swapped_for_a_link_after_listing_is_not_read(workspace: Path, adversary) -> None:
    """The check is made on the file opened, not on the name listed a moment before."""
    ws = make_workspace(workspace)
    (ws / "MEMORY.md").write_text(f"# Memory\n\n- {PRIVATE_MEMORY}\n")
    log = ws / "memory" / "2026-01-02.md"

    async def main() -> None:
        async with client(stdio_params(ws, "--session", "group"), "2026-07-28") as c:
            assert "memory://memory/2026-01-02.md" in {str(r.uri) for r in (await c.list_resources()).resources}
            log.unlink()
            os.link(ws / "MEMORY.md", log)
            with adversary.attempt("read a listed log swapped for a hard link of MEMORY.md") as a:
                try:
                    got = await c.read_resource("memory://memory/2026-01-02.md")
                except Exception as exc:
                    a.refused("not a served resource" in str(exc))
                else:
                    a.leaked(PRIVATE_MEMORY in got.contents[0].text)

    anyio.run(main)


def test_a_server_for_another_user_serves_none_of_the_owners_memory(workspace: Path, adversary) -> None:
    """Curated memory follows its owner: `serve --user bob` (bob not in owner_ids) is a main
    session, yet MEMORY.md and USER.md are the owner's, under any name."""
    tries = linked_workspace(workspace)

    async def main() -> None:
        async with client(stdio_params(workspace, "--user", "bob"), "2026-07-28") as c:
            # bob's prompt shows his own USER.md (a copy of the template), never the owner's
            await _attack(c, adversary, tries, "main server for user bob", own=frozenset({f"{CONTEXT}USER.md"}))

    anyio.run(main)


def test_a_group_server_acknowledges_no_subscription_to_private_files(workspace: Path, adversary) -> None:
    """subscriptions/listen honours only what the server serves, as resources/subscribe
    refuses the rest: a group server acknowledges a daily log, never MEMORY.md or USER.md."""
    ws = make_workspace(workspace)

    async def main() -> None:
        async with client(stdio_params(ws, "--session", "group"), "2026-07-28") as c:
            wanted = ["memory://MEMORY.md", "soulframe://workspace/USER.md", "memory://memory/2026-01-02.md"]
            async with c.listen(resource_subscriptions=wanted) as sub:
                honored = set(sub.honored.resource_subscriptions or ())
            with adversary.attempt("a group server asked to watch MEMORY.md and USER.md") as a:
                a.leaked(bool(honored & {"memory://MEMORY.md", "soulframe://workspace/USER.md"}))
                a.refused()
            assert honored == {"memory://memory/2026-01-02.md"}

    anyio.run(main)


def test_a_user_servers_context_files_are_the_ones_its_prompt_shows(workspace: Path, adversary) -> None:
    """`serve --user bob` shows bob his own SOUL.md and USER.md in the prompt and through
    context_read: its resources are those files too, not the workspace's (a host attaching
    soulframe://workspace/SOUL.md would hand the model another persona), and no other user
    or the owner is shown bob's, nor bob the owner's."""
    ws = make_workspace(workspace)
    bob_soul, bob_user = "BOB-SOUL-3e1d", "BOB-USER-77aa"

    async def as_bob() -> None:
        async with client(stdio_params(ws, "--user", "bob"), "2026-07-28") as c:
            for name, text in (("SOUL.md", f"# SOUL.md\n{bob_soul}\n"), ("USER.md", f"# USER.md\n{bob_user}\n")):
                wrote = await c.call_tool("context_write", {"name": name, "content": text})
                assert wrote.structured_content["scope"] == "user", wrote.structured_content
            prompt = (await c.get_prompt("system_prompt", {})).messages[0].content.text
            assert bob_soul in prompt and bob_user in prompt
            listed = {str(r.uri): r for r in (await c.list_resources()).resources}
            assert {f"{CONTEXT}SOUL.md", f"{CONTEXT}USER.md"} <= set(listed)
            assert f"{CONTEXT}MEMORY.md" not in listed and "memory://MEMORY.md" not in listed
            for name, mine in (("SOUL.md", bob_soul), ("USER.md", bob_user)):
                got = (await c.read_resource(f"{CONTEXT}{name}")).contents[0].text
                assert mine in got, (name, got)
                assert listed[f"{CONTEXT}{name}"].size == len(got.encode())
                with adversary.attempt(f"bob reads {name} as a resource") as a:
                    a.leaked("Be warm, brief and exact." in got or "12 Private Lane" in got)
            with adversary.attempt("bob reads the owner's MEMORY.md as a resource") as a:
                try:
                    got = await c.read_resource(f"{CONTEXT}MEMORY.md")
                except Exception as exc:
                    a.refused("not a served resource" in str(exc))
                else:
                    a.leaked(MEMORY_NOTE in got.contents[0].text)

    async def as_others() -> None:
        for extra, soul in ((("--user", "carol"), "Be warm, brief and exact."), ((), "Be warm, brief and exact.")):
            async with client(stdio_params(ws, *extra), "2026-07-28") as c:
                for name in ("SOUL.md", "USER.md"):
                    try:
                        got = (await c.read_resource(f"{CONTEXT}{name}")).contents[0].text
                    except Exception as exc:
                        assert "not a served resource" in str(exc)
                        continue
                    with adversary.attempt(f"{extra or 'the owner'} reads {name}: bob's copy?") as a:
                        a.leaked(bob_soul in got or bob_user in got)
                assert soul in (await c.read_resource(f"{CONTEXT}SOUL.md")).contents[0].text

    anyio.run(as_bob)
    anyio.run(as_others)
