"""What a current MCP host expects of ``soulframe serve``, per revision and transport, with the
SDK's own client: typed tool results that match their declared schemas, tool annotations,
memory and context files as resources (templates, sizes, modification times), and a change
notification when another process writes memory."""

from __future__ import annotations

import datetime as _dt
import warnings
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from cli_runner import run_cli
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_servers import (
    MEMORY_NOTE,
    REVISIONS,
    client,
    http_server,
    make_workspace,
    stdio_params,
    text_of,
)

CASES = [(t, r) for t in ("stdio", "http") for r in REVISIONS]


def served(workspace: Path, transport: str, *extra: str) -> AbstractContextManager[Any]:
    if transport == "http":
        return http_server(workspace, *extra)
    return nullcontext(stdio_params(workspace, *extra))


def remember_from_another_process(workspace: Path, text: str) -> None:
    # the server is its own process (stdio or HTTP), so this command, run in the test's
    # process, is another process writing to the workspace
    out = run_cli("-w", str(workspace), "memory", "remember", text)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(("transport", "revision"), CASES)
def test_typed_tools_resources_and_a_change_notification(workspace: Path, transport: str, revision: str) -> None:
    ws = make_workspace(workspace)
    today = ws / "memory" / f"{_dt.date.today().isoformat()}.md"
    today.write_text(f"# {_dt.date.today().isoformat()}\n\n- Started the day.\n")
    today_uri = f"memory://memory/{today.name}"

    async def main(target: Any) -> None:
        updates: list[str] = []
        arrived = anyio.Event()

        async def on_message(message: Any) -> None:  # 2025-11-25: notifications arrive here
            root = getattr(message, "root", message)
            if getattr(root, "method", "") == "notifications/resources/updated":
                updates.append(str(root.params.uri))
                arrived.set()

        async with client(target, revision, message_handler=on_message) as c:
            assert c.protocol_version == revision

            # ---- typed results: every tool has an outputSchema, results match it
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert all(t.output_schema and t.output_schema["type"] == "object" for t in tools.values())
            hints = {n: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
                     for n, t in tools.items()}
            assert hints["memory_search"][0] is True and hints["skill_read"][0] is True
            assert hints["memory_remember"] == (False, False, False)  # adds a line each call
            assert hints["context_write"] == (False, True, True)  # replaces the file; same content twice is one write
            calls = {
                "memory_search": {"query": "screenshot appearance"},
                "memory_get": {"path": "MEMORY.md"},
                "skill_search": {"query": "release notes"},
                "skill_read": {"name": "release-notes"},
                "context_read": {"name": "SOUL.md"},
            }
            for name, args in calls.items():
                result = await c.call_tool(name, args)
                assert not result.is_error, text_of(result)
                jsonschema.validate(result.structured_content, tools[name].output_schema)
            hit = (await c.call_tool("memory_search", {"query": "screenshot appearance"})).structured_content["results"][0]
            assert hit["path"] == "MEMORY.md" and MEMORY_NOTE in hit["snippet"]
            assert {"start_line", "end_line", "score", "text_score", "vector_score"} <= set(hit)

            # ---- resources: templates, memory and context files with size and mtime
            templates = {t.uri_template for t in (await c.list_resource_templates()).resource_templates}
            assert templates == {"memory://{path}", "soulframe://workspace/{name}"}
            listed = {str(r.uri): r for r in (await c.list_resources()).resources}
            for uri, path in (("memory://MEMORY.md", ws / "MEMORY.md"), (today_uri, today),
                              ("soulframe://workspace/USER.md", ws / "USER.md")):
                assert listed[uri].size == path.stat().st_size
                stamp = _dt.datetime.fromisoformat(listed[uri].annotations.last_modified.replace("Z", "+00:00"))
                assert abs(stamp.timestamp() - path.stat().st_mtime) < 2
            got = await c.read_resource("memory://memory/2026-01-02.md")
            assert "Paid the studio rent." in got.contents[0].text

            # ---- a memory remember from another process is announced
            note = "Notifications reach the client."
            if revision == "2026-07-28":
                async with c.listen(resources_list_changed=True, resource_subscriptions=[today_uri]) as sub:
                    await anyio.to_thread.run_sync(remember_from_another_process, ws, note)
                    with anyio.fail_after(60):
                        event = await sub.__anext__()
                assert event == ResourceUpdated(today_uri)
            elif transport == "stdio":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # resources/subscribe is 2025-era: deprecated in the SDK
                    await c.subscribe_resource(today_uri)
                await anyio.to_thread.run_sync(remember_from_another_process, ws, note)
                with anyio.fail_after(60):
                    await arrived.wait()
                assert updates == [today_uri]
            else:
                # stateless HTTP has no channel back to a 2025-11-25 client: nothing offered
                assert not c.server_capabilities.resources.subscribe
                return
            reread = await c.read_resource(today_uri)
            assert note in reread.contents[0].text
            # the index followed the change before the client was told: a search finds it
            found = await c.call_tool("memory_search", {"query": "notifications reach the client"})
            assert any(note in h["snippet"] for h in found.structured_content["results"]), found.structured_content
            # where the line came from travels with the hit, typed
            jsonschema.validate(found.structured_content, tools["memory_search"].output_schema)
            hit = next(h for h in found.structured_content["results"] if note in h["snippet"])
            assert any(p.startswith("remember") for p in hit["provenance"]), hit

    with served(ws, transport) as target:
        anyio.run(main, target)


@pytest.mark.parametrize("revision", list(REVISIONS))
def test_a_new_memory_file_changes_the_list(workspace: Path, revision: str) -> None:
    ws = make_workspace(workspace)
    fresh = ws / "memory" / "2026-02-03.md"

    async def main() -> None:
        changed = anyio.Event()

        async def on_message(message: Any) -> None:
            root = getattr(message, "root", message)
            if getattr(root, "method", "") == "notifications/resources/list_changed":
                changed.set()

        async with client(stdio_params(ws), revision, message_handler=on_message) as c:
            before = {str(r.uri) for r in (await c.list_resources()).resources}
            assert "memory://memory/2026-02-03.md" not in before
            if revision == "2026-07-28":
                async with c.listen(resources_list_changed=True) as sub:
                    fresh.write_text("# 2026-02-03\n\n- Booked the venue.\n")
                    with anyio.fail_after(60):
                        assert await sub.__anext__() == ResourcesListChanged()
            else:
                assert c.server_capabilities.resources.list_changed
                fresh.write_text("# 2026-02-03\n\n- Booked the venue.\n")
                with anyio.fail_after(60):
                    await changed.wait()
            after = {str(r.uri) for r in (await c.list_resources()).resources}
            assert after - before == {"memory://memory/2026-02-03.md"}

    anyio.run(main)


@pytest.mark.parametrize("parent", [".openclaw", "venv"])
def test_a_workspace_inside_a_hidden_folder_is_watched(tmp_path: Path, parent: str) -> None:
    """OpenClaw keeps its workspace in ~/.openclaw/workspace: the folders above the workspace
    are not the workspace's own, so a hidden (or venv) one must not hide every change in it
    from the clients and from the index."""
    ws = tmp_path / parent / "workspace"
    ws.mkdir(parents=True)
    make_workspace(ws)
    fresh = ws / "memory" / "2026-02-03.md"

    async def main() -> None:
        async with client(stdio_params(ws), "2026-07-28") as c:
            await c.call_tool("memory_search", {"query": "venue"})  # the server is up and has searched
            async with c.listen(resources_list_changed=True) as sub:
                fresh.write_text("# 2026-02-03\n\n- Booked the glimmerfax venue.\n")
                with anyio.fail_after(60):
                    assert await sub.__anext__() == ResourcesListChanged()
            found = await c.call_tool("memory_search", {"query": "glimmerfax venue"})
            assert any("glimmerfax" in h["snippet"] for h in found.structured_content["results"]), \
                found.structured_content

    anyio.run(main)


def test_a_workspace_replaced_while_served_is_watched_again(tmp_path: Path) -> None:
    """Moved away and made again (restored from a backup, cloned afresh): the server's watch
    followed the old directory, so clients were never told of a change again, and its index
    (which a search trusts while the watch runs) missed every later note."""
    ws = tmp_path / "ws"
    ws.mkdir()
    make_workspace(ws)

    async def main() -> None:
        async with client(stdio_params(ws), "2026-07-28") as c:
            await c.call_tool("memory_search", {"query": "venue"})  # the server is up and has searched
            async with c.listen(resources_list_changed=True) as sub:
                ws.rename(tmp_path / "ws-before")
                make_workspace(ws)
                (ws / "memory" / "2026-02-03.md").write_text("# 2026-02-03\n\n- Booked the quillorn venue.\n")
                with anyio.fail_after(60):
                    assert await sub.__anext__() == ResourcesListChanged()
            found = await c.call_tool("memory_search", {"query": "quillorn venue"})
            assert any("quillorn" in h["snippet"] for h in found.structured_content["results"]), \
                found.structured_content

    anyio.run(main)
