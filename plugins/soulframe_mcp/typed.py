"""Tools as MCP clients expect them now: an ``outputSchema`` beside the input schema, the
result as ``structuredContent`` beside the text a person reads, and hints saying what a
call does (reads only, replaces what was there, safe to repeat).

A tool declares its result's schema in its :class:`~soulframe.ToolSpec`. A plugin's
tool that declares none still gets one: its result is wrapped as ``{"result": ...}``, so a
client can rely on every tool having structured output. A result that does not fit the
schema its tool declared is a tool error (:func:`misfit`), never a success that breaks it.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from soulframe import ToolSpec

from .workers import as_json

#: the schema of a tool that declared none: whatever it returns, under "result"
WRAPPED: dict[str, Any] = {
    "type": "object",
    "properties": {"result": {"description": "The tool's JSON result."}},
    "required": ["result"],
}


def output_schema(spec: ToolSpec) -> dict[str, Any]:
    return dict(spec.output_schema) if spec.output_schema is not None else WRAPPED


def as_mcp_tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=dict(spec.parameters),
        output_schema=output_schema(spec),
        annotations=types.ToolAnnotations(
            title=spec.summary or None,
            read_only_hint=not spec.writes,
            # the hints below only mean something for a tool that writes (MCP spec)
            destructive_hint=spec.destructive if spec.writes else None,
            idempotent_hint=spec.idempotent if spec.writes else None,
            # the agent's own workspace and index: nothing outside this machine
            open_world_hint=False,
        ),
    )


def as_result(spec: ToolSpec | None, result: Any, text: str | None = None) -> types.CallToolResult:
    """The text (the JSON a host shows) and the structured content of one call's result.
    ``text``: ``result`` already as plain JSON and this its encoding (a tool call's
    :class:`~.workers.Outcome`), so neither is made again."""
    if text is None:
        plain, text = as_json(result)
    else:
        plain = result
    wrapped = spec is None or spec.output_schema is None or not isinstance(plain, dict)
    structured = {"result": plain} if wrapped else plain
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured)


def misfit(spec: ToolSpec, plain: Any, validators: dict[str, Any]) -> str | None:
    """Why ``plain`` (a call's JSON result) does not fit the ``output_schema`` ``spec``
    declares; None when it fits or none is declared. A client that validates (the MCP spec
    says the result MUST fit) would refuse it, so it is never sent as a success.
    ``validators``: each tool's compiled schema, kept by the caller."""
    if spec.output_schema is None:
        return None
    from jsonschema import SchemaError
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for

    validator = validators.get(spec.name)
    try:
        if validator is None:
            schema = dict(spec.output_schema)
            cls = validator_for(schema)
            cls.check_schema(schema)
            validator = validators[spec.name] = cls(schema)
        error = best_match(validator.iter_errors(plain))
    except SchemaError as exc:
        return f"its outputSchema is not a valid JSON Schema ({_short(exc.message)})"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return _short(error.message) + (f" (at {where})" if where else "")


def _short(message: str, limit: int = 300) -> str:
    # a message quotes the value, which may be the whole result
    return message if len(message) <= limit else message[:limit] + "…"


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)
