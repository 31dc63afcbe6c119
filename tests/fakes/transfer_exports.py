"""Small exports of the shapes each tool writes, built in a test's temporary folder, for the
tests of `soulframe import`: one ChatGPT conversation, a Claude Code session transcript, a
Codex rollout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def chatgpt_export(folder: Path, conv_id: str, title: str, messages: list[dict[str, Any]],
                   created: float | None = 1712000000.0) -> Path:
    """A ChatGPT ``conversations.json`` holding one conversation: ``messages`` as one branch
    (each ``role``, ``content``; ``id``, ``time`` (epoch seconds) and ``recipient`` optional)."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"
    for i, m in enumerate(messages):
        node = m.get("id", f"m{i}")
        message = {"id": node, "author": {"role": m["role"]}, "create_time": m.get("time", 1712000000.0 + 60 * i),
                   "content": m["content"], "recipient": m.get("recipient", "all"), "metadata": {}}
        mapping[node] = {"id": node, "parent": parent, "children": [], "message": message}
        mapping[parent]["children"].append(node)
        parent = node
    folder.mkdir(parents=True, exist_ok=True)
    conv = {"id": conv_id, "conversation_id": conv_id, "title": title, "create_time": created,
            "current_node": parent, "mapping": mapping}
    (folder / "conversations.json").write_text(json.dumps([conv]))
    return folder


def text(s: str) -> dict[str, Any]:
    return {"content_type": "text", "parts": [s]}


def claude_code_transcript(folder: Path, session: str, records: list[Any]) -> Path:
    """A Claude Code project folder holding one session transcript: each record one line
    (a string is written as it is, for lines that are not a record)."""
    project = folder / "projects" / "-home-ana-garden"
    project.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, r in enumerate(records):
        if isinstance(r, dict):
            r = {"sessionId": session, "uuid": f"r{i}", "timestamp": f"2025-06-01T10:{i:02d}:00Z",
                 "isSidechain": False, **r}
        lines.append(r if isinstance(r, str) else json.dumps(r))
    (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def said(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": role, "message": {"role": role, "content": content}, **extra}


def codex_rollout(folder: Path, session: str, items: list[Any]) -> Path:
    """A ``~/.codex`` holding one rollout: a session_meta line, then ``items`` as response
    items (a string is written as the line as it is)."""
    day = folder / "sessions" / "2025" / "09" / "20"
    day.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"timestamp": "2025-09-20T10:00:00Z", "type": "session_meta",
                         "payload": {"id": session, "timestamp": "2025-09-20T10:00:00Z", "cwd": "/home/ana/shop"}})]
    for i, item in enumerate(items):
        lines.append(item if isinstance(item, str) else json.dumps(
            {"timestamp": f"2025-09-20T10:{i + 1:02d}:00Z", "type": "response_item", "payload": item}))
    (day / f"rollout-2025-09-20T10-00-00-{session}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def turn(role: str, *texts: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": t} for t in texts]}


ENVIRONMENT = "<environment_context>\n  <cwd>/home/ana/shop</cwd>\n  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>"
