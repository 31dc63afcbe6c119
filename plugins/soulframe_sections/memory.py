"""Recall and reply conventions: memory recall (12.5; full, slim or minimal text, with the
``memory.citations`` rule of seed 001 §3), silent replies (NO_REPLY, seed 000 §5) and
heartbeats (HEARTBEAT_OK, seed 001 §5)."""

from __future__ import annotations

from soulframe import PromptContext

from ._common import has_tool

_CITATIONS = {
    "on": "Cite what you use from memory as path#Lstart-Lend (e.g. memory/2026-04-04.md#L3-L5).",
    "off": "Don't mention memory file paths or line numbers unless the user asks where something came from.",
    "auto": "Cite path#Lstart-Lend when it helps the user check or find a memory (they ask "
            "where something came from, or sources disagree); otherwise just answer.",
}


def memory_recall(ctx: PromptContext) -> str | None:
    if not ctx.config.get("memory.enabled") or not has_tool(ctx, "memory_search"):
        return None
    getter = " and read only the lines you need with memory_get" if has_tool(ctx, "memory_get") else ""
    cite = _CITATIONS.get(str(ctx.config.get("memory.citations")), _CITATIONS["auto"])
    if ctx.mode == "minimal":
        return (
            "## Memory\n"
            f"If the task needs past context, run memory_search over the agent's notes{getter}."
        )
    if ctx.mode == "task":
        return (
            "## Memory Recall\n"
            "For questions about prior work, decisions or preferences, run memory_search "
            f"first{getter}. {cite}"
        )
    scope = (
        "over MEMORY.md and memory/*.md" if ctx.session.is_private
        # the memory tools leave private files out of shared sessions; say so, or the
        # model reports "nothing found" as if it had looked everywhere
        else "over the shared notes (your owner's private MEMORY.md is not searched in this chat)"
    )
    return (
        "## Memory Recall\n"
        "Before answering anything about prior work, decisions, dates, people, preferences "
        f"or todos, run memory_search {scope}{getter}. If nothing relevant turns up, say that "
        "you checked.\n"
        "Write down what should outlast this conversation: day-to-day notes in "
        "memory/YYYY-MM-DD.md, durable facts and preferences in MEMORY.md. Mental notes do "
        "not survive a restart; files do.\n"
        f"{cite}"
    )


def silent_replies(ctx: PromptContext) -> str:
    return (
        "## Silent Replies\n"
        "When you have nothing to say — a message not meant for you, or a background turn "
        "that needs no answer — reply with exactly NO_REPLY. It must be the whole message, "
        "never part of a real answer."
    )


def heartbeat(ctx: PromptContext) -> str | None:
    if ctx.file("HEARTBEAT.md") is None or ctx.session.kind == "group":
        return None  # health checks come to the agent itself, not through a shared room
    # the section belongs to full mode; a heartbeat session (minimal mode) still needs it,
    # otherwise the health check it exists for would get a chatty answer
    if ctx.mode != "full" and ctx.session.kind != "heartbeat":
        return None
    return (
        "## Heartbeats\n"
        "HEARTBEAT.md (loaded above) lists your periodic checks. When a message is a heartbeat or "
        "health check, work through HEARTBEAT.md; if nothing needs attention, reply with "
        "exactly HEARTBEAT_OK and nothing else."
    )
