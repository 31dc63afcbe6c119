"""Text in memory files that is not memory: the workspace template's boilerplate (the
instructions at the top of a fresh MEMORY.md) and routine status lines (the heartbeat's
``- 09:15 heartbeat: OK``). They are blanked before chunking — lines keep their numbers, so
citations stay right — and so are never embedded, matched or returned as memory.

A heartbeat that needs attention (``heartbeat: needs attention — …``) is kept: it says
something happened.
"""

from __future__ import annotations

import re

#: a heartbeat run that found nothing to do, as ``soulframe heartbeat`` logs it
_STATUS = re.compile(r"^\s*[-*]?\s*(\d{1,2}:\d{2}\s+)?heartbeat:\s*ok\.?\s*$", re.IGNORECASE)

#: the boilerplate paragraphs of the MEMORY.md template (soulframe_workspace's
#: templates/MEMORY.md; tests/core/memory/test_memory_noise.py keeps the two in step), line by line
TEMPLATE_LINES: frozenset[str] = frozenset({
    "_Curated knowledge that should survive every session. Loaded only in your main, private",
    "session — never in group chats or for sub-agents._",
    "Keep entries short and dated. Move durable facts here from the daily notes in `memory/`;",
    "remove what is stale or superseded.",
})


def is_noise(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and (stripped in TEMPLATE_LINES or bool(_STATUS.match(stripped)))


def without_noise(text: str) -> str:
    """``text`` with its noise lines emptied (line numbers unchanged)."""
    if "heartbeat" not in text.lower() and not any(t in text for t in TEMPLATE_LINES):
        return text
    return "\n".join("" if is_noise(ln) else ln for ln in text.split("\n"))
