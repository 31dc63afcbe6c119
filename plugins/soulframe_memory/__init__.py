"""The memory tools: ``memory_search`` and ``memory_get`` (seed 001 §3, seed 003 §5.6).

Both take the session from the :class:`~soulframe.model.ToolContext`: in a group or
sub-agent session they never return MEMORY.md or any other private memory — the store
query itself leaves private files out, so no result can leak through a later step.
``memory_get`` reads only memory files, through ``Workspace.resolve`` (no ``..``, no
absolute paths, no symlink out of the workspace).
"""

from __future__ import annotations

from typing import Any

from soulframe import Registration, ToolContext, ToolSpec, hookimpl
from soulframe.memory.chunking import chunk_text
from soulframe.model import Chunk
from soulframe.neutralise import neutralise

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
        row["snippet"] = neutralise(row["snippet"])
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
        "text": neutralise(text),
        "truncated": truncated,
    }


@hookimpl
def register_tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="memory_search",
            description=SEARCH_DESCRIPTION,
            summary="Search long-term memory (MEMORY.md, memory/*.md) by meaning and keywords",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1,
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
        ),
    ]


class LinesChunker:
    """The default chunker (seed 000 §14): up to ``memory.chunk_max_chars`` per chunk, ending
    at a blank line once half full, over-long lines split at a space (see
    :func:`soulframe.memory.chunking.chunk_text`)."""

    name = "lines"

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def chunk(self, text: str, path: str) -> list[Chunk]:
        return [Chunk(path=path, start_line=c.start_line, end_line=c.end_line, text=c.text)
                for c in chunk_text(text, self.max_chars)]


@hookimpl
def register_chunkers() -> list[Registration]:
    return [Registration(
        name="lines",
        factory=lambda config: LinesChunker(int(config.get("memory.chunk_max_chars"))),
        description="chunks of up to memory.chunk_max_chars, cut at blank lines (default)",
    )]


@hookimpl
def register_commands(cli: Any) -> None:
    from .commands import add_commands

    add_commands(cli)


@hookimpl
def session_ended(agent: Any, session: Any, messages: Any) -> None:
    """Save a finished conversation to memory/YYYY-MM-DD-<slug>.md (seed 003: the end of
    a session is kept on reset), unless memory.session.save_on_end is off."""
    import logging

    from soulframe.model import SoulframeError

    if not agent.config.get("memory.enabled") or not agent.config.get("memory.session.save_on_end"):
        return
    turns = [m for m in (messages or ()) if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    if not turns:
        return
    from soulframe.memory.sessions import save_session

    try:
        save_session(agent, messages, via="session end")
    except SoulframeError as exc:  # refused (unsafe text) or no memory: the host goes on
        logging.getLogger("soulframe.memory").warning("session not saved: %s", exc)


@hookimpl
def transform_context_files(files: list[Any]) -> list[Any]:
    """The prompt's MEMORY.md (and daily logs) leave out superseded entries
    (``- ~~old~~ (superseded by: new, date)``): the file keeps its history, the model
    sees only what is true now."""
    import attrs
    from soulframe.memory.supersede import drop_superseded, is_superseded_chunk

    out = []
    for f in files:
        name = getattr(f, "name", "")
        content = getattr(f, "content", None)
        if isinstance(content, str) and (name in ("MEMORY.md", "memory.md") or name.startswith("memory/")) \
                and is_superseded_chunk(content):
            f = attrs.evolve(f, content=drop_superseded(content))
        out.append(f)
    return out
