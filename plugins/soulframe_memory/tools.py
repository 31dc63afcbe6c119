"""The memory tools (seed 001 §3, seed 003 §5.6): ``memory_search``, ``memory_get`` and
``memory_remember``.

``memory_search`` and ``memory_get`` take the session from the
:class:`~soulframe.ToolContext`: in a group or sub-agent session they never return
MEMORY.md or any other private memory — the store query itself leaves private files out, so
no result can leak through a later step. ``memory_get`` reads only memory files, through
``Workspace.resolve`` (no ``..``, no absolute paths, no symlink out of the workspace).
``memory_remember`` appends to today's daily log (a user's own, in the store, when the
session has a user), in a main session only; the MCP server leaves it out when
``serve.allow_remember`` is off or ``serve.read_only`` is on.
"""

from __future__ import annotations

import logging
from typing import Any

from soulframe import ToolContext, ToolSpec
from soulframe.kit import mask_for_model, neutralise
from soulframe.memorykit import MAX_QUERY_CHARS

from .tool_schemas import GET_OUTPUT, REMEMBER_OUTPUT, SEARCH_OUTPUT

log = logging.getLogger("soulframe.memory")

#: a note is a line of the daily log, which is loaded into every main-session prompt: a
#: runaway model must not be able to push megabytes into it through one call
MAX_NOTE_CHARS = 4_000
#: most characters memory_get returns in one call (the model can page with from_line)
MAX_GET_CHARS = 20_000
DEFAULT_GET_LINES = 60

SEARCH_DESCRIPTION = (
    "Search the agent's long-term memory (MEMORY.md and the daily logs memory/YYYY-MM-DD.md) "
    "by meaning and keywords. Use it before answering anything about prior work, decisions, "
    "dates, people, preferences or todos. Returns the best snippets with path, line range, "
    "score and a citation (path#Lstart-Lend); read more with memory_get."
)
GET_DESCRIPTION = (
    "Read lines of a memory file (MEMORY.md or memory/*.md), e.g. around a memory_search hit. "
    "path may be a citation such as memory/2026-08-01.md#L3-L7."
)


def _search(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.agent.memory
    k = args.get("max_results")
    results = memory.search(
        str(args["query"]), None if k is None else int(k), ctx.session,
        min_score=args.get("min_score"), history=bool(args.get("history", False)),
    )
    citations = str(ctx.agent.config.get("memory.citations"))
    hits = []
    for h in results:
        row = h.to_dict()
        # an excerpt goes back to the model: no wrapper tag or boundary marker survives in it
        row["snippet"] = neutralise(mask_for_model(row["snippet"], ctx.agent.config))
        if "provenance" in row:  # ids from an imported export are outside text too
            row["provenance"] = [neutralise(p) for p in row["provenance"]]
        if citations == "off":
            row.pop("citation", None)
        hits.append(row)
    out: dict[str, Any] = {"results": hits, "mode": results.mode}
    if results.notice:
        out["notice"] = results.notice
    return out


def _get(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.agent.memory
    path = str(args["path"])
    lines = args.get("lines")
    if lines is None and "#L" not in path:
        lines = DEFAULT_GET_LINES
    ex = memory.get(path, args.get("from_line"), lines, ctx.session)
    text = ex.text
    truncated = len(text) > MAX_GET_CHARS
    if truncated:
        text = text[:MAX_GET_CHARS]
    return {
        "path": ex.path,
        "from_line": ex.start_line,
        "to_line": ex.end_line,
        "total_lines": ex.total_lines,
        "text": neutralise(mask_for_model(text, ctx.agent.config)),
        "truncated": truncated,
    }


def memory_tools() -> list[ToolSpec]:
    """``memory_remember``, ``memory_search`` and ``memory_get``, in the order they were
    always listed."""
    return [
        ToolSpec(
            name="memory_remember",
            description=(
                "Append a note to today's daily memory log (memory/YYYY-MM-DD.md). Use it when "
                "the user asks you to remember something, or for a fact worth keeping."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": MAX_NOTE_CHARS,
                             "description": "The note, one or two sentences."},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
            handler=_remember,
            writes=True,
            output_schema=REMEMBER_OUTPUT,
            # writing to memory is for the user's own main session only
            sessions=frozenset({"main"}),
            summary="Append a note to today's memory log",
        ),
        ToolSpec(
            name="memory_search",
            description=SEARCH_DESCRIPTION,
            summary="Search long-term memory (MEMORY.md, memory/*.md) by meaning and keywords",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                              "description": "What to look for, in natural language."},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 50,
                                    "description": "Results to return (default 6)."},
                    "min_score": {"type": "number", "minimum": 0, "maximum": 1,
                                  "description": "Drop results scoring below this (default 0.35)."},
                    "history": {"type": "boolean",
                                "description": "Also return superseded facts (struck through, ranked last)."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            handler=_search,
            output_schema=SEARCH_OUTPUT,
            idempotent=True,
        ),
        ToolSpec(
            name="memory_get",
            description=GET_DESCRIPTION,
            summary="Read lines of a memory file",
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1,
                             "description": "Workspace-relative path, e.g. memory/2026-08-01.md."},
                    "from_line": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
                    "lines": {"type": "integer", "minimum": 1, "maximum": 2000,
                              "description": f"How many lines (default {DEFAULT_GET_LINES})."},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            handler=_get,
            output_schema=GET_OUTPUT,
            idempotent=True,
        ),
    ]


def _remember(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    from soulframe.kit import ToolError
    from soulframe.memorykit import effective_user

    if not args["text"].strip():
        raise ToolError("memory_remember: the text is empty; send the note to keep")

    user = effective_user(ctx.agent, ctx.session.user_id)
    if user:
        # a user's notes are theirs: kept in the store under their id, never in the
        # agent's workspace where other users' sessions would find them
        from soulframe.memorykit import UserMemory

        name = UserMemory(ctx.agent, user).append_daily(args["text"], via="memory_remember")
        return {"saved": True, "path": name, "scope": "user"}
    # a refused note (injection, secret) raises UnsafeWriteError: the tool error names it
    path = ctx.agent.memory.append_daily(args["text"], via="memory_remember")
    try:
        # the file this call wrote, indexed now: searchable by the next call, even in a
        # server whose searches leave syncing to its file watcher (that watcher's sync of
        # the same write then finds nothing to do); never a walk of every memory file
        ctx.agent.memory.sync_paths([path], blocking=False)
    except Exception as exc:  # the note is saved; the next sync indexes it
        log.warning("memory_remember: the note is saved, indexing it failed: %s: %s", type(exc).__name__, exc)
    # workspace-relative, like the user scope and memory_search's paths (usable with memory_get)
    return {"saved": True, "path": str(ctx.agent.workspace.relative(path)), "scope": "agent"}
