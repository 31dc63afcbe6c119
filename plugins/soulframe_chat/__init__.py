"""Chat models and the agent-side loops that need one.

* ``register_chat_models``: ``openai``, ``openai-compatible`` (OpenRouter, LM Studio, Ollama,
  vLLM by ``base_url``), ``anthropic`` and a few presets, over stdlib HTTP with tool calling,
  timeouts and retry.
* ``before_compaction``: the pre-compaction memory flush (seed 000 §16).
* ``register_commands``: ``soulframe memory flush``, ``soulframe agents summon``,
  ``soulframe heartbeat`` and ``soulframe boot`` (the BOOT.md startup ritual; hosts call
  :func:`soulframe_chat.boot.run_boot` at startup).

Nothing heavy is imported here: every module is loaded when a command or a hook needs it.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Any

from soulframe import hookimpl
from soulframe.model import Registration, Session, SoulframeError

if TYPE_CHECKING:
    import click

log = logging.getLogger("soulframe.chat")


@hookimpl
def register_chat_models() -> list[Registration]:
    from .models import registrations

    return registrations()


@hookimpl
def before_compaction(agent: Any, session: Session, usage: Any) -> None:
    """Run the memory flush when it is due; a failure is a warning, never an exception in
    the host's compaction path."""
    from .flush import maybe_flush

    try:
        result = maybe_flush(agent, session, usage)
    except (SoulframeError, OSError) as exc:  # e.g. no model configured, state dir unwritable
        warnings.warn(f"memory flush skipped: {exc}", stacklevel=2)
        return
    if result.ran:
        log.info(
            "memory flush: %s after %d model call(s); wrote %s",
            result.status,
            result.iterations,
            ", ".join(result.written) or "nothing",
        )
        if result.error:
            warnings.warn(f"memory flush: {result.error}", stacklevel=2)


@hookimpl(trylast=True)
def register_commands(cli: click.Group) -> None:
    # trylast: groups other plugins own (memory, agents) exist by now, so we add to them
    from .commands import add_commands

    add_commands(cli)
