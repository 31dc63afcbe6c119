"""``soulframe tools``: list, export and call the tools plugins register."""

from __future__ import annotations

import json
import sys

import click

from ..model import SESSION_KINDS, Session
from .state import State, echo_json, pass_state, user_option

session_option = click.option(
    "--session", "session_kind", type=click.Choice(SESSION_KINDS), default="main", show_default=True,
    help="Session kind the tools are offered in (group and subagent sessions get no private memory).",
)


@click.group("tools")
def tools_group() -> None:
    """The tools an agent can call (memory_search, memory_get, skill_search, ...).

    \b
    Use them from your own tool-calling loop:
      soulframe tools export --format openai > tools.json
      soulframe tools call memory_search '{"query": "dark mode"}'
    """


@tools_group.command("list")
@session_option
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: a list of {name, description, parameters}.")
@pass_state
def tools_list(state: State, session_kind: str, as_json: bool) -> None:
    """List the tools offered in a session, with their descriptions.

    \b
      soulframe -w ~/agent tools list
      soulframe -w ~/agent tools list --session subagent --json
    """
    tools = state.agent().tools(Session(kind=session_kind))  # type: ignore[arg-type]
    if as_json:
        echo_json([{"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
                   for t in tools])
        return
    for t in tools:
        click.echo(f"{t.name:18} {t.summary or t.description.splitlines()[0]}")


@tools_group.command("export")
@click.option("--format", "fmt", type=click.Choice(["openai", "anthropic", "mcp"]), required=True,
              help="The tool-schema shape your chat API expects.")
@session_option
@pass_state
def tools_export(state: State, fmt: str, session_kind: str) -> None:
    """Print the tool schemas as JSON for a chat API's `tools` parameter.

    \b
      soulframe -w ~/agent tools export --format openai > tools.json
      soulframe -w ~/agent tools export --format anthropic --session group
    """
    from ..tools import export_tools

    tools = state.agent().tools(Session(kind=session_kind))  # type: ignore[arg-type]
    echo_json(export_tools(tools, fmt))  # type: ignore[arg-type]


#: the most ``tools call NAME -`` reads: far above any tool's arguments (a note is 4,000
#: characters), far below what would fill memory
MAX_STDIN_ARGUMENTS = 1024 * 1024


@tools_group.command("call")
@click.argument("name")
@click.argument("arguments", required=False, default="{}")
@session_option
@user_option("Call it in a session with this user (their own memory and files).")
@pass_state
def tools_call(state: State, name: str, arguments: str, session_kind: str, user_id: str | None) -> None:
    """Call tool NAME with ARGUMENTS (a JSON object) and print the JSON result.
    ARGUMENTS "-" reads the JSON from standard input (no shell quoting to get right).

    Exits 1 with the tool's error message when the call fails, as a model would see it
    ({"error": {"message": ..., "code": 1}} on stderr).

    \b
      soulframe tools call memory_search '{"query": "the lease"}'
      soulframe tools call memory_get '{"path": "MEMORY.md"}' --session group
      jq -n --arg t "$NOTE" '{text: $t}' | soulframe tools call memory_remember -
    """
    from ..tools import ToolError, dispatch

    if arguments == "-":
        raw = sys.stdin.buffer.read(MAX_STDIN_ARGUMENTS + 1)  # bounded: `- < /dev/zero` stops
        if len(raw) > MAX_STDIN_ARGUMENTS:
            raise click.UsageError(f"ARGUMENTS from standard input: over {MAX_STDIN_ARGUMENTS:,} bytes")
        arguments = raw.decode("utf-8", "replace")
    try:
        session = Session(kind=session_kind, user_id=user_id)  # type: ignore[arg-type]
        result = dispatch(state.agent(), name, arguments, session=session)
    except ToolError as exc:
        # the error object of every --json command; on stderr, so standard output holds
        # only what a tool returns (a result may itself hold an "error" key)
        click.echo(json.dumps({"error": {"message": str(exc), "code": 1}}, ensure_ascii=False), err=True)
        raise SystemExit(1) from exc
    echo_json(result)
