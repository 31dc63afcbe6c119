"""The shapes of the memory tools' results, as JSON Schemas (an MCP client gets them as each
tool's ``outputSchema`` and validates the ``structuredContent`` against them).

Kept beside the tools and checked by the MCP tests against real results, so a field added
to a result without its schema fails there. Objects stay open (no ``additionalProperties:
false``): a field a later version adds (a hit's provenance) does not break an older client.
"""

from __future__ import annotations

from typing import Any

_SCORE = {"type": ["number", "null"], "minimum": 0}

SEARCH_HIT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Workspace-relative file, e.g. memory/2026-08-01.md."},
        "start_line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
        "score": {"type": "number", "description": "The final fused score."},
        "snippet": {"type": "string"},
        "text_score": {**_SCORE, "description": "The keyword channel's normalised score (null: not found by it)."},
        "vector_score": {**_SCORE, "description": "The vector channel's normalised score (null: not found by it)."},
        "rerank_score": {"type": "number", "description": "The re-ranker's score, when one ran."},
        "citation": {"type": "string", "description": "path#Lstart-Lend, readable with memory_get."},
        "scope": {"type": "string", "description": "agent, or user for a user's own memory."},
        "provenance": {"type": "array", "items": {"type": "string"},
                       "description": "Where imported lines came from (e.g. chatgpt conv=… at=…); "
                                      "absent for hand-written lines."},
    },
    "required": ["path", "start_line", "end_line", "score", "snippet", "text_score", "vector_score", "scope"],
}

SEARCH_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "results": {"type": "array", "items": SEARCH_HIT},
        "mode": {"type": "string", "description": "hybrid, keyword-only, ..."},
        "notice": {"type": "string", "description": "Why the search ran in a reduced mode."},
    },
    "required": ["results", "mode"],
}

GET_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "from_line": {"type": "integer", "minimum": 1},
        "to_line": {"type": "integer", "minimum": 0},
        "total_lines": {"type": "integer", "minimum": 0},
        "text": {"type": "string"},
        "truncated": {"type": "boolean"},
    },
    "required": ["path", "from_line", "to_line", "total_lines", "text", "truncated"],
}

REMEMBER_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "saved": {"type": "boolean"},
        "path": {"type": "string", "description": "Where the note went; memory_get reads it back."},
        "scope": {"type": "string", "enum": ["agent", "user"]},
    },
    "required": ["saved", "path", "scope"],
}
