"""The one bounded tool-calling loop of soulframe's agent routines: call the model, run the
tools it asks for, send the results back, until it answers with text, the call budget is
spent or the deadline passes.

Used by the memory flush and by ``boot``; small and free of policy so any agent-side loop
(a third party's too) can reuse it. :func:`chat_model_for` is how a routine gets the chat
model its agent's config selects, through the ``register_chat_models`` registry, without
knowing which plugin provides it. :class:`ChatModelError` is what every chat client raises,
so a routine catches one class whatever the provider.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from . import conversation as m
from .http import RequestError
from .model import (
    CHAT_MODELS,
    ChatModel,
    ChatReply,
    SoulframeError,
    ToolCall,
    ToolContext,
    ToolSpec,
)

if TYPE_CHECKING:
    from .model import AgentLike

class ChatModelError(RequestError):
    """A chat-model call failed (bad configuration, HTTP error, timeout, malformed reply).
    Every chat client raises it, so a routine catches one class whatever the provider;
    messages pass through :func:`redact`, so they never contain an API key."""


class ChatConfigError(ChatModelError):
    """The ``[model]`` configuration is incomplete (no provider, no key, no base URL)."""


# the logger name is kept from when the loop lived with the chat clients: hosts filter on it
log = logging.getLogger("soulframe.chat")

#: how much of a tool's output goes back to the model
MAX_TOOL_RESULT_CHARS = 20_000


@attrs.frozen
class ToolEvent:
    """One tool call and its outcome, for reports (``soulframe memory flush --json``)."""

    name: str
    arguments: Mapping[str, Any]
    ok: bool
    result: str

    def to_dict(self) -> dict[str, Any]:
        args = {
            k: (v if not isinstance(v, str) or len(v) <= 200 else v[:200] + "…")
            for k, v in self.arguments.items()
        }
        return {"tool": self.name, "arguments": args, "ok": self.ok, "result": self.result[:500]}


@attrs.frozen
class LoopResult:
    #: "done" (the model answered without tools), "max_iterations", "timeout" or "error"
    stopped: str
    text: str
    iterations: int
    events: tuple[ToolEvent, ...] = ()
    error: str | None = None
    last_reply: ChatReply | None = None


def _render(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_TOOL_RESULT_CHARS:
        text = text[:MAX_TOOL_RESULT_CHARS] + f"\n[… cut at {MAX_TOOL_RESULT_CHARS} characters]"
    return text


def run_tool(call: ToolCall, tools: Mapping[str, ToolSpec], ctx: ToolContext) -> tuple[bool, str]:
    """Run one tool call; any failure becomes an error message for the model, never a crash."""
    tool = tools.get(call.name)
    if tool is None:
        return False, f"error: unknown tool {call.name!r}; available: {', '.join(sorted(tools))}"
    if m.INVALID_ARGUMENTS in call.arguments:
        return False, "error: the arguments are not a JSON object; send them as JSON"
    try:
        return True, _render(tool.handler(ctx, dict(call.arguments)))
    except (SoulframeError, ValueError, TypeError, OSError) as exc:
        # the model (and its provider) learn nothing of the host's files, as an MCP client
        from .hostpaths import hide_host_paths
        from .memory.safety import UnsafeWriteError

        said = exc.for_caller if isinstance(exc, UnsafeWriteError) else str(exc)
        return False, f"error: {hide_host_paths(ctx.agent, said)}"
    except Exception as exc:  # a broken tool must not end the agent's turn
        log.warning("tool %s failed: %s: %s", call.name, type(exc).__name__, exc)
        return False, f"error: the tool failed ({type(exc).__name__})"


def run_tool_loop(
    model: ChatModel,
    conversation: Sequence[Mapping[str, Any]],
    tools: Sequence[ToolSpec],
    ctx: ToolContext,
    *,
    max_iterations: int,
    deadline: float,
) -> LoopResult:
    """Run the loop. ``deadline`` is a :func:`time.monotonic` instant; ``max_iterations``
    counts model calls. Tool calls in the last allowed reply are still executed (they are
    the work the model asked for), but the model is not called again."""
    convo = [dict(x) for x in conversation]
    by_name = {t.name: t for t in tools}
    events: list[ToolEvent] = []
    reply: ChatReply | None = None
    iterations = 0
    while iterations < max_iterations:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return LoopResult(
                "timeout", reply.text if reply else "", iterations, tuple(events), None, reply
            )
        try:
            answer: object = model.chat(convo, tools=tools, timeout=remaining)
        except ChatModelError as exc:
            stopped = "timeout" if exc.timeout else "error"
            return LoopResult(stopped, "", iterations + 1, tuple(events), str(exc), reply)
        except Exception as exc:
            # a host's own model (run_boot(agent, model)) is held to no client's contract: its
            # failure ends the run as an error the caller reads, not as a crash in the host
            return LoopResult("error", "", iterations + 1, tuple(events),
                              _broken(model, f"failed: {type(exc).__name__}: {exc}"), reply)
        if not isinstance(answer, ChatReply):
            return LoopResult("error", "", iterations + 1, tuple(events),
                              _broken(model, f"returned a {type(answer).__name__}, not a ChatReply"), reply)
        reply = answer
        iterations += 1
        if not reply.tool_calls:
            return LoopResult("done", reply.text, iterations, tuple(events), None, reply)
        convo.append(m.assistant(reply))
        for call in reply.tool_calls:
            if time.monotonic() >= deadline:
                return LoopResult("timeout", reply.text, iterations, tuple(events), None, reply)
            ok, result = run_tool(call, by_name, ctx)
            events.append(ToolEvent(call.name, dict(call.arguments), ok, result))
            convo.append(m.tool_result(call, result, is_error=not ok))
    return LoopResult(
        "max_iterations", reply.text if reply else "", iterations, tuple(events), None, reply
    )


def _broken(model: ChatModel, what: str) -> str:
    from .logs import mask_secrets

    return mask_secrets(f"chat model {getattr(model, 'name', '?')!r} {what}")


def chat_model_for(agent: AgentLike, purpose: str = "") -> ChatModel:
    """The chat model an agent's config selects (``[model] provider``), through the
    ``register_chat_models`` registry so a third-party provider can be chosen by name.
    Its calls are logged for ``soulframe logs`` under ``purpose`` (``heartbeat``, ...)."""
    provider = agent.config.get("model.provider")
    if not provider:
        raise ChatConfigError(
            "no chat model configured: set [model] provider (openai, openai-compatible, "
            "anthropic, ...) and [model] name in soulframe.toml"
        )
    chosen = agent.select(CHAT_MODELS)
    from .calllog import LoggedChatModel
    from .model import ChatModel
    from .plugins import build

    return LoggedChatModel(
        build(agent, CHAT_MODELS, chosen, ChatModel, error=ChatConfigError), agent, purpose or "other",
        chosen.plugin, ChatModelError,
    )
