"""A chat-completions client: OpenAI and everything that speaks its API (OpenRouter,
LM Studio, Ollama, vLLM, llama.cpp server), told apart only by ``base_url``."""

from __future__ import annotations

import json
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


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    """A ToolSpec as a chat-completions ``tools`` entry."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters) or {"type": "object", "properties": {}},
        },
    }


def wire_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """soulframe's conversation format -> chat-completions ``messages``."""
    check_conversation(messages)
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(message.get("tool_call_id", "")),
                    "content": text_of(message.get("content")),
                }
            )
            continue
        item: dict[str, Any] = {"role": role, "content": text_of(message.get("content"))}
        calls = tool_calls_of(message) if role == "assistant" else []
        if calls:
            item["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
                }
                for call in calls
            ]
            if not item["content"]:
                item["content"] = None  # the API's convention for a tools-only turn
        out.append(item)
    return out


def parse_reply(data: Mapping[str, Any], what: str = "chat model") -> ChatReply:
    """A chat-completions response body -> :class:`ChatReply`. A body that is not one (a proxy's,
    a half-compatible server's) is a :class:`ChatModelError` saying what is wrong with it: the
    routines catch that class alone, so anything else would crash a cron job or a host."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise ChatModelError(f"{what}: the reply has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise ChatModelError(
            f"{what}: the reply's message is {_kind(message)}, not an object with content"
        )
    items = message.get("tool_calls") or []
    if not isinstance(items, list):
        raise ChatModelError(f"{what}: the reply's tool_calls is {_kind(items)}, not a list")
    calls = []
    for n, item in enumerate(items):
        fn = item.get("function") if isinstance(item, Mapping) else None
        if not isinstance(fn, Mapping):
            raise ChatModelError(
                f"{what}: tool call {n + 1} of the reply is not an object with a function"
            )
        calls.append(
            ToolCall(
                id=str(item.get("id") or f"call_{n}"),
                name=str(fn.get("name", "")),
                arguments=parse_arguments(fn.get("arguments")),
            )
        )
    return ChatReply(
        text=text_of(message.get("content")),
        tool_calls=tuple(calls),
        finish_reason=choice.get("finish_reason"),
        usage=usage_counts(data.get("usage")),
    )


def _kind(value: object) -> str:
    return "missing" if value is None else f"a {type(value).__name__}"


class OpenAIChatModel:
    """:class:`~soulframe.ChatModel` over ``POST {base_url}/chat/completions``."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self.name = settings.provider
        self.model_id = settings.name

    def __repr__(self) -> str:
        return f"OpenAIChatModel(provider={self.name!r}, model={self.model_id!r}, base_url={redact_endpoint(self.settings.base_url)!r})"

    @property
    def url(self) -> str:
        return f"{self.settings.base_url}/chat/completions"

    def request_body(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[ToolSpec] = ()
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model_id, "messages": wire_messages(messages)}
        if tools:
            body["tools"] = [tool_schema(t) for t in tools]
        if self.settings.max_tokens is not None:
            body["max_tokens"] = self.settings.max_tokens
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
        headers = {}
        key = self.settings.api_key.reveal() if self.settings.api_key else None
        if key:
            headers["authorization"] = f"Bearer {key}"
        data = post(
            self.settings,
            self.url,
            self.request_body(messages, tools),
            headers,
            what=f"{self.name} model {self.model_id}",
            timeout=timeout,
        )
        return parse_reply(data, what=f"{self.name} model {self.model_id}")
