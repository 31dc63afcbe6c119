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
from soulframe.config import K, Key
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


@hookimpl
def register_config_keys() -> dict[str, Key]:
    NONE = type(None)
    return {
        # ----------------------------------------------------------------- chat model
        "model.provider": K(None, "openai, openai-compatible, anthropic (presets: openrouter, ollama, lmstudio, vllm)", types=(str, NONE)),
        "model.name": K(None, "model id", types=(str, NONE)),
        "model.base_url": K(None, "endpoint (OpenRouter, LM Studio, Ollama, vLLM ...)", types=(str, NONE)),
        "model.api_key": K(None, "API key (prefer api_key_env)", types=(str, NONE)),
        "model.api_key_env": K(None, "name of the environment variable holding the key", types=(str, NONE)),
        "model.timeout_s": K(60.0, "request timeout"),
        "model.max_retries": K(3, "retries on 429 and 5xx"),
        "model.max_tokens": K(None, "reply token limit (Anthropic requires one: 4,096 when unset)", types=(int, NONE)),
        "model.temperature": K(None, "sampling temperature; unset = the API's default", types=(float, int, NONE)),
        "model.anthropic_version": K("2023-06-01", "anthropic-version header of the Messages API"),
        # ----------------------------------------------------------------- memory flush
        "flush.enabled": K(True, "write durable memories before compaction", seed="003 §7.5"),
        "flush.soft_threshold_tokens": K(4_000, "flush this many tokens before the threshold", seed="000 §16"),
        "flush.reserve_tokens_floor": K(20_000, "tokens kept free for the reply", seed="000 §16"),
        "flush.max_iterations": K(5, "model calls per flush", seed="000 §16"),
        "flush.timeout_s": K(90.0, "deadline for one flush", seed="000 §16"),
        "flush.prompt": K("Store durable memories now.", "the flush instruction", seed="000 §16"),
        "flush.allow_exec": K(False, "offer an exec tool (confined to the workspace) during a flush"),
    }
