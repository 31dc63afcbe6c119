"""A client for Anthropic's Messages API (``POST /v1/messages``, ``x-api-key`` and
``anthropic-version`` headers, ``tool_use``/``tool_result`` content blocks)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from soulframe import ChatReply, ToolCall, ToolSpec
from soulframe.kit import (
    check_conversation,
    parse_arguments,
    redact_endpoint,
    text_of,
    tool_calls_of,
)

from .errors import ChatModelError
from .settings import ModelSettings
from .transport import post, usage_counts

#: the Messages API requires max_tokens; this is used when [model] max_tokens is not set
DEFAULT_MAX_TOKENS = 4096


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.parameters) or {"type": "object", "properties": {}},
    }


def wire_messages(messages: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """soulframe's conversation -> (system prompt, Messages API ``messages``).

    System messages are joined into the top-level ``system``; tool results become
    ``tool_result`` blocks of a user turn; consecutive turns of one role are merged, since
    the API expects user and assistant to alternate.
    """
    check_conversation(messages)
    system_parts: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message["role"]
        text = text_of(message.get("content"))
        if role == "system":
            if text:
                system_parts.append(text)
        elif role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id", "")),
                "content": text,
            }
            if message.get("is_error"):
                block["is_error"] = True
            add("user", [block])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            for call in tool_calls_of(message):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": dict(call.arguments),
                    }
                )
            add("assistant", blocks)
        else:
            add("user", [{"type": "text", "text": text or " "}])
    return "\n\n".join(system_parts), out


def parse_reply(data: Mapping[str, Any], what: str = "anthropic model") -> ChatReply:
    """A Messages API response body -> :class:`ChatReply`; a body that is not one is a
    :class:`ChatModelError` (see :func:`.openai_client.parse_reply`)."""
    content = data.get("content")
    if not isinstance(content, list):
        raise ChatModelError(f"{what}: the reply has no content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for n, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(
                ToolCall(
                    id=str(block.get("id") or f"toolu_{n}"),
                    name=str(block.get("name", "")),
                    arguments=parse_arguments(block.get("input")),
                )
            )
    counts = usage_counts(data.get("usage"))
    if "input_tokens" in counts and "output_tokens" in counts:
        counts["total_tokens"] = counts["input_tokens"] + counts["output_tokens"]
    return ChatReply(
        text="".join(texts),
        tool_calls=tuple(calls),
        finish_reason=data.get("stop_reason"),
        usage=counts,
    )


class AnthropicChatModel:
    """:class:`~soulframe.ChatModel` over Anthropic's Messages API."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self.name = settings.provider
        self.model_id = settings.name

    def __repr__(self) -> str:
        return f"AnthropicChatModel(model={self.model_id!r}, base_url={redact_endpoint(self.settings.base_url)!r})"

    @property
    def url(self) -> str:
        base = self.settings.base_url
        # accept both "https://api.anthropic.com" (the SDKs' convention) and ".../v1"
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def request_body(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec] = ()
    ) -> dict[str, Any]:
        system_text, wire = wire_messages(messages)
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": self.settings.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": wire,
        }
        if system_text:
            body["system"] = system_text
        if tools:
            body["tools"] = [tool_schema(t) for t in tools]
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        return body

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] = (),
        timeout: float | None = None,
    ) -> ChatReply:
        key = self.settings.api_key.reveal() if self.settings.api_key else None
        headers = {"anthropic-version": self.settings.anthropic_version}
        if key:
            headers["x-api-key"] = key
        data = post(
            self.settings,
            self.url,
            self.request_body(messages, tools),
            headers,
            what=f"anthropic model {self.model_id}",
            timeout=timeout,
        )
        if data.get("type") == "error":
            raise ChatModelError(f"anthropic model {self.model_id}: {data.get('error')}")
        return parse_reply(data, what=f"anthropic model {self.model_id}")
