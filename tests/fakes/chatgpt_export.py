"""A generated ChatGPT data export (``conversations.json``) of any size, for the tests and
the benchmark of `soulframe import chatgpt`: each conversation has an abandoned edit, so
following ``current_node`` is exercised at scale too."""

from __future__ import annotations

import json
from pathlib import Path

WORDS = ("allotment tomato rain barrel seed swap compost hive queen ferry kayak shed dentist "
         "invoice lease studio relaunch torque hub sourdough starter rehearsal boathouse").split()


def conversation(i: int, turns: int = 4) -> dict:
    mapping: dict[str, dict] = {"root": {"id": "root", "parent": None, "children": [], "message": None}}
    parent = "root"
    for t in range(turns):
        for role in ("user", "assistant"):
            nid = f"c{i}-{t}-{role}"
            words = " ".join(WORDS[(i * 7 + t * 3 + k) % len(WORDS)] for k in range(30))
            mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
                "id": nid, "author": {"role": role}, "create_time": 1700000000 + i * 3600 + t * 60,
                "content": {"content_type": "text", "parts": [f"conversation {i} turn {t}: {words}"]}}}
            mapping[parent]["children"].append(nid)
            parent = nid
    # an abandoned edit of the first question
    mapping[f"c{i}-edit"] = {"id": f"c{i}-edit", "parent": "root", "children": [], "message": {
        "id": f"c{i}-edit", "author": {"role": "user"}, "create_time": 1700000000 + i * 3600,
        "content": {"content_type": "text", "parts": [f"abandoned-{i} edit"]}}}
    mapping["root"]["children"].insert(0, f"c{i}-edit")
    return {"title": f"Conversation {i}", "create_time": 1700000000 + i * 3600,
            "conversation_id": f"gen-{i:06d}", "current_node": parent, "mapping": mapping}


def write_export(path: Path, n: int, turns: int = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[\n")
        for i in range(n):
            if i:
                fh.write(",\n")
            json.dump(conversation(i, turns), fh)
        fh.write("\n]\n")
    return path
