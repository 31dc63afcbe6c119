"""Memory, one plugin: everything of it a plugin contributes.

* ``register_tools``: ``memory_search``, ``memory_get`` and ``memory_remember``
  (:mod:`soulframe_memory.tools`);
* ``register_chunkers``: the default ``lines`` chunker;
* ``before_compaction``: the pre-compaction memory flush (seed 000 §16,
  :mod:`soulframe_memory.flush`), with its ``flush.*`` config keys;
* ``register_commands``: ``soulframe memory flush``, ``memory logs`` and ``memory prune``
  (reviewing and archiving daily logs, seed 003 §8.4);
* ``register_doctor_checks``: the memory index and memory files growing towards the
  bootstrap limit.

The memory index itself (sync, search, the journal) is the core's :mod:`soulframe._engine.memory`.
Nothing heavy is imported here: every module is loaded when a command or a hook needs it.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from soulframe import (
    Chunk,
    ContextFile,
    DoctorCheck,
    K,
    Key,
    Registration,
    Session,
    SoulframeError,
    SoulframeWarning,
    ToolSpec,
    hookimpl,
)

if TYPE_CHECKING:
    import click
    from soulframe import AgentLike, Chunker

# the logger name is kept from when the flush lived with the chat clients: hosts filter on it
log = logging.getLogger("soulframe.chat")


@hookimpl
def register_tools() -> list[ToolSpec]:
    from .tools import memory_tools

    return memory_tools()


class LinesChunker:
    """The default chunker (seed 000 §14): up to ``memory.chunk_max_chars`` per chunk, ending
    at a blank line once half full, over-long lines split at a space (see
    :func:`soulframe_memory.chunking.chunk_text`)."""

    name = "lines"

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def chunk(self, text: str, path: str) -> list[Chunk]:
        from .chunking import chunk_text  # with the index, not at start-up

        return [Chunk(path=path, start_line=c.start_line, end_line=c.end_line, text=c.text)
                for c in chunk_text(text, self.max_chars)]


@hookimpl
def register_chunkers() -> list[Registration[Chunker]]:
    return [Registration(
        name="lines",
        factory=lambda agent: LinesChunker(int(agent.config.get("memory.chunk_max_chars"))),
        description="chunks of up to memory.chunk_max_chars, cut at blank lines (default)",
    )]


@hookimpl
def before_compaction(agent: AgentLike, session: Session, usage: Any) -> None:
    """Run the memory flush when it is due; a failure is a warning, never an exception in
    the host's compaction path."""
    from .flush import maybe_flush

    try:
        result = maybe_flush(agent, session, usage)
    except (SoulframeError, OSError) as exc:  # e.g. no model configured, state dir unwritable
        warnings.warn(f"memory flush skipped: {exc}", SoulframeWarning, stacklevel=2)
        return
    if result.ran:
        log.info(
            "memory flush: %s after %d model call(s); wrote %s",
            result.status,
            result.iterations,
            ", ".join(result.written) or "nothing",
        )
        if result.error:
            warnings.warn(f"memory flush: {result.error}", SoulframeWarning, stacklevel=2)


@hookimpl(trylast=True)
def register_commands(cli: click.Group) -> None:
    # trylast: the core's memory group exists by now, so the commands join it
    from .commands import add_commands

    add_commands(cli)


@hookimpl
def register_doctor_checks() -> Iterable[DoctorCheck]:
    from .checks import CHECKS

    return CHECKS


@hookimpl
def register_config_keys() -> dict[str, Key]:
    return {
        # ----------------------------------------------------------------- memory flush
        "flush.enabled": K(True, "write durable memories before compaction", seed="003 §7.5"),
        "flush.soft_threshold_tokens": K(4_000, "flush this many tokens before the threshold", seed="000 §16"),
        "flush.reserve_tokens_floor": K(20_000, "tokens kept free for the reply", seed="000 §16"),
        "flush.max_iterations": K(5, "model calls per flush", seed="000 §16"),
        "flush.timeout_s": K(90.0, "deadline for one flush", seed="000 §16"),
        "flush.prompt": K("Store durable memories now.", "the flush instruction", seed="000 §16"),
        "flush.allow_exec": K(False, "offer an exec tool (confined to the workspace) during a flush"),
    }


@hookimpl
def session_ended(agent: AgentLike, session: Any, messages: Any) -> None:
    """Save a finished conversation (seed 003: the end of a session is kept on reset),
    unless memory.session.save_on_end is off: a group's to memory/, any other's as private
    memory (sessions/YYYY-MM-DD-<slug>.md, or the user's own)."""
    if not agent.config.get("memory.enabled") or not agent.config.get("memory.session.save_on_end"):
        return
    if isinstance(messages, Mapping):  # the request body a host keeps: {"messages": [...]}
        messages = messages.get("messages")
    if not isinstance(messages, str):  # a JSON transcript is save_session's to read
        messages = list(messages or ())
        if all(isinstance(m, Mapping) for m in messages) and not any(
                m.get("role") in ("user", "assistant") for m in messages):
            return  # nothing was said (a reset right after the system prompt): nothing to keep
    from soulframe.memorykit import save_session

    try:
        save_session(agent, messages, via="session end",
                     session=session if isinstance(session, Session) else None)
    except (SoulframeError, OSError) as exc:
        # refused (unsafe text), no memory, a disk that is full or read-only: the host's
        # reset goes on, and so do the other plugins told of it, but it hears the talk was lost
        warnings.warn(f"session not saved: {exc}", SoulframeWarning, stacklevel=2)


@hookimpl
def transform_context_files(files: list[ContextFile]) -> list[ContextFile]:
    """The prompt's MEMORY.md (and daily logs) leave out superseded entries
    (``- ~~old~~ (superseded by: new, date)``): the file keeps its history, the model
    sees only what is true now. Provenance comments (``<!-- src: … -->``) are left out
    too: they are for the person reading the file, not tokens for the model."""
    import attrs
    from soulframe.memorykit import drop_superseded, is_curated, is_superseded_chunk
    from soulframe.memorykit import strip_provenance as strip

    out = []
    for f in files:
        content = f.content
        if is_curated(f.name) or f.name.startswith("memory/"):
            if is_superseded_chunk(content):
                content = drop_superseded(content)
            f = attrs.evolve(f, content=strip(content)) if content != f.content or "src:" in content else f
        out.append(f)
    return out
