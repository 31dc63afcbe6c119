"""The conversation format every soulframe chat client accepts.

A conversation is a list of plain dicts, close to OpenAI's so a saved transcript can be
passed straight in::

    {"role": "system", "content": "..."}
    {"role": "user", "content": "..."}
    {"role": "assistant", "content": "...", "tool_calls": [{"id": ..., "type": "function", "function": {...}}]}
    {"role": "tool", "tool_call_id": "...", "name": "read_file", "content": "...", "is_error": False}

Each client translates it to its API (Anthropic: system prompt apart, ``tool_use`` and
``tool_result`` content blocks). ``tool_calls`` items may be :class:`ToolCall` objects or
OpenAI-style dicts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .model import ChatReply, ToolCall

#: the whole reply of a model that has nothing to say (seed 000 §5): a silent turn
NO_REPLY = "NO_REPLY"


def is_no_reply(text: str) -> bool:
    """Whether a model's reply is :data:`NO_REPLY` alone (markdown emphasis, quotes and a
    trailing period allowed) or empty: a silent turn, not text to keep or show."""
    return text.strip().strip("*_`\"'.").strip() == NO_REPLY or not text.strip()


#: the key a client puts into ToolCall.arguments when the model sent arguments that are not
#: a JSON object; the tool runner reports it back to the model as a tool error
INVALID_ARGUMENTS = "__invalid_arguments__"


def system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(reply: ChatReply) -> dict[str, Any]:
    """The assistant turn to append after ``reply``, its tool calls kept in OpenAI's wire
    shape: a host saves the conversation with ``json.dumps`` (a ToolCall object is no JSON)
    and every client reads it back."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments), ensure_ascii=False)}}
            for call in reply.tool_calls
        ]
    return message


def tool_result(call: ToolCall, content: str, *, is_error: bool = False) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": call.id,
        "name": call.name,
        "content": content,
        "is_error": is_error,
    }


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict, whether the API sent a JSON string or an object."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {INVALID_ARGUMENTS: raw[:500]}
        if isinstance(value, dict):
            return value
    return {INVALID_ARGUMENTS: str(raw)[:500]}


def tool_calls_of(message: Mapping[str, Any]) -> list[ToolCall]:
    """The tool calls of an assistant message, as :class:`ToolCall` objects."""
    calls: list[ToolCall] = []
    for item in message.get("tool_calls") or ():
        if isinstance(item, ToolCall):
            calls.append(item)
        elif isinstance(item, Mapping):
            fn = item.get("function")
            if isinstance(fn, Mapping):  # OpenAI wire shape
                calls.append(
                    ToolCall(
                        str(item.get("id", "")),
                        str(fn.get("name", "")),
                        parse_arguments(fn.get("arguments")),
                    )
                )
            else:
                calls.append(
                    ToolCall(
                        str(item.get("id", "")),
                        str(item.get("name", "")),
                        parse_arguments(item.get("arguments", item.get("input"))),
                    )
                )
    return calls


def text_of(content: Any) -> str:
    """The text of a message's ``content``: a string, or a list of content blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type", "text") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


def check_conversation(messages: Sequence[Mapping[str, Any]]) -> None:
    """Reject a malformed conversation with a message that says which item is wrong."""
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {i} is not an object: {message!r:.80}")
        role = message.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            raise ValueError(
                f"message {i} has role {role!r}; expected system, user, assistant or tool"
            )
