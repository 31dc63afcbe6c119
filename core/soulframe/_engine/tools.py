"""Tools for tool-calling loops: export the schemas every plugin registered, and dispatch a
call (name + JSON arguments) to its handler.

The same functions back ``soulframe tools export``, ``soulframe serve`` (MCP) and a host's
own agent loop::

    from soulframe import Agent
    from soulframe._engine.tools import dispatch, export_tools

    agent = Agent.open("~/agent")
    schemas = export_tools(agent.tools(), "openai")      # pass to the chat API
    result = dispatch(agent, "memory_search", '{"query": "dark mode"}')
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .hostpaths import hide_host_paths
from .model import PathEscapeError, Session, SoulframeError, ToolContext, ToolSpec

if TYPE_CHECKING:
    from .model import AgentLike

Format = Literal["openai", "anthropic", "mcp"]
FORMATS: tuple[str, ...] = ("openai", "anthropic", "mcp")


class ToolError(SoulframeError):
    """A tool call that could not be carried out; the message is meant for the model."""


def export_tools(tools: Sequence[ToolSpec], format: Format) -> list[dict[str, Any]]:
    """Tool schemas in the shape a chat API expects.

    * ``openai``: ``{"type": "function", "function": {name, description, parameters}}``
    * ``anthropic``: ``{name, description, input_schema}``
    * ``mcp``: ``{name, description, inputSchema}``
    """
    out: list[dict[str, Any]] = []
    for t in tools:
        schema = dict(t.parameters)
        if format == "openai":
            out.append({"type": "function",
                        "function": {"name": t.name, "description": t.description, "parameters": schema}})
        elif format == "anthropic":
            out.append({"name": t.name, "description": t.description, "input_schema": schema})
        elif format == "mcp":
            out.append({"name": t.name, "description": t.description, "inputSchema": schema})
        else:
            raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    return out


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _whole_numbers(schema: Mapping[str, Any], args: Any) -> Any:
    """``args`` with an integer property sent as ``5.0`` (valid JSON Schema) made ``5``, so a
    handler gets the int its schema promises."""
    props = schema.get("properties") or {}
    if not isinstance(args, dict) or not isinstance(props, Mapping):
        return args
    return {k: int(v) if isinstance(v, float) and v.is_integer()
            and isinstance(props.get(k), Mapping) and props[k].get("type") == "integer" else v
            for k, v in args.items()}


def validate_arguments(schema: Mapping[str, Any], arguments: Any, *, where: str = "arguments") -> None:
    """Check ``arguments`` against the subset of JSON Schema tool schemas use (type,
    required, properties, additionalProperties, enum, minimum/maximum, minLength/maxLength,
    items, maxItems).
    Raises :class:`ToolError` naming the offending argument."""
    expected = schema.get("type")
    if expected is not None:
        types = expected if isinstance(expected, list) else [expected]
        ok = False
        for name in types:
            py = _JSON_TYPES.get(name, (object,))
            if isinstance(arguments, bool) and name in ("integer", "number"):
                continue
            if name == "integer" and isinstance(arguments, float) and arguments.is_integer():
                ok = True  # JSON Schema: 5.0 is an integer (dispatch hands the handler 5)
                break
            if isinstance(arguments, py):
                ok = True
                break
        if not ok:
            raise ToolError(f"{where}: expected {' or '.join(types)}, got {type(arguments).__name__}")
    if "enum" in schema and arguments not in schema["enum"]:
        raise ToolError(f"{where}: {arguments!r} is not one of {schema['enum']}")
    if isinstance(arguments, (int, float)) and not isinstance(arguments, bool):
        if "minimum" in schema and arguments < schema["minimum"]:
            raise ToolError(f"{where}: {arguments} is below the minimum {schema['minimum']}")
        if "maximum" in schema and arguments > schema["maximum"]:
            raise ToolError(f"{where}: {arguments} is above the maximum {schema['maximum']}")
    if isinstance(arguments, str) and "minLength" in schema and len(arguments) < schema["minLength"]:
        raise ToolError(f"{where}: must be at least {schema['minLength']} characters")
    if isinstance(arguments, str) and "maxLength" in schema and len(arguments) > schema["maxLength"]:
        raise ToolError(f"{where}: {len(arguments)} characters is over the limit of {schema['maxLength']}; "
                        "send something shorter")
    if isinstance(arguments, list) and "maxItems" in schema and len(arguments) > schema["maxItems"]:
        raise ToolError(f"{where}: {len(arguments)} items is over the limit of {schema['maxItems']}")
    if isinstance(arguments, dict):
        props = schema.get("properties", {})
        for req in schema.get("required", []):
            if req not in arguments:
                raise ToolError(f"{where}: missing required argument {req!r}")
        for key, value in arguments.items():
            if key in props:
                validate_arguments(props[key], value, where=key)
            elif schema.get("additionalProperties") is False:
                allowed = ", ".join(sorted(props)) or "none"
                raise ToolError(f"{where}: unexpected argument {key!r} (allowed: {allowed})")
    if isinstance(arguments, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(arguments):
            validate_arguments(schema["items"], item, where=f"{where}[{i}]")


def find_tool(tools: Sequence[ToolSpec], name: str) -> ToolSpec:
    for t in tools:
        if t.name == name:
            return t
    available = ", ".join(sorted(t.name for t in tools)) or "none"
    raise ToolError(f"unknown tool {name!r}; available: {available}")


def _offered(agent: AgentLike, available: Sequence[ToolSpec], name: str, session: Session,
             *, narrowed: bool) -> ToolSpec:
    """``name`` among the tools offered; a registered tool this session is not offered is
    said to be so, not merely "unknown" (its author would go looking for a missing plugin)."""
    try:
        return find_tool(available, name)
    except ToolError:
        from . import plugins as _plugins

        if name not in _plugins.collect_named(agent.pm, "register_tools"):
            raise
        why = "among the tools passed to dispatch" if narrowed else f"offered in a {session.kind} session"
        offered = ", ".join(sorted(t.name for t in available)) or "none"
        raise ToolError(f"unknown tool {name!r} in this session: it is not {why}; "
                        f"available: {offered}") from None


def _refuse_writes_in_a_read_only_sandbox(agent: AgentLike, name: str, available: Sequence[ToolSpec]) -> None:
    """A write tool called anyway (the model remembered it, a client cached the list, a
    caller passed its own tools) is refused by name, with the reason."""
    from .sandbox import read_only_reason, workspace_access

    access = workspace_access(agent)
    if access == "rw":
        return
    from . import plugins as _plugins

    registered = _plugins.collect_named(agent.pm, "register_tools")
    spec = next((t for t in available if t.name == name), None) or registered.get(name)
    if spec is not None and spec.writes:
        raise ToolError(f"{name}: {read_only_reason(access)}")


def dispatch(
    agent: AgentLike,
    name: str,
    arguments: str | Mapping[str, Any] | None,
    *,
    session: Session | None = None,
    tools: Sequence[ToolSpec] | None = None,
) -> Any:
    """Run one tool call and return its JSON-able result.

    :param name: the tool's name, as the model sent it.
    :param arguments: the arguments, as a JSON string (what chat APIs send) or a mapping.
    :param session: the session the call belongs to; tools that touch private memory refuse
        group and sub-agent sessions. Default: a main session.
    :raises ToolError: unknown tool, arguments that are not JSON or do not fit the schema, or
        a handler that refused (bad path, path outside the workspace, ...). The message is
        written for the model to read and correct its call.
    """
    session = session or Session.main()
    available = list(tools) if tools is not None else agent.tools(session)
    _refuse_writes_in_a_read_only_sandbox(agent, name, available)
    tool = _offered(agent, available, name, session, narrowed=tools is not None)
    if arguments is None or arguments == "":
        args: Any = {}
    elif isinstance(arguments, str):
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolError(f"{name}: arguments are not valid JSON ({exc.msg} at column {exc.colno})") from exc
    else:
        args = dict(arguments)
    validate_arguments(tool.parameters, args)
    args = _whole_numbers(tool.parameters, args)
    try:
        return tool.handler(ToolContext(agent=agent, session=session), args)
    except ToolError as exc:
        # a plugin's own refusal may name a file of the host: the caller sees none
        hidden = hide_host_paths(agent, str(exc))
        if hidden == str(exc):
            raise
        raise ToolError(hidden) from exc
    except (SoulframeError, PathEscapeError, ValueError, FileNotFoundError) as exc:
        # a refusal the model can act on, named once (the write guard names the tool itself)
        from .memory.safety import UnsafeWriteError

        said = hide_host_paths(agent, exc.for_caller if isinstance(exc, UnsafeWriteError) else str(exc))
        raise ToolError(said if said.startswith(f"{name}: ") else f"{name}: {said}") from exc
    except Exception as exc:
        # the arguments fit the schema, so this is the handler's own failure: the model
        # (and an MCP client) gets a tool error, the traceback goes to the log (-v)
        logging.getLogger("soulframe.tools").info("tool %s failed", name, exc_info=True)
        raise ToolError(hide_host_paths(agent, f"{name} failed: {type(exc).__name__}: {exc}")) from exc
