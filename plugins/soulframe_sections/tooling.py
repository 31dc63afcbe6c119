"""What the agent can do: the tool list (2), execution bias (2.2), tool call style (2.3),
credentialed CLIs (2.5), skills (4), MCP tools (4.5) and sub-agent spawning (13)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from soulframe import ConfigError, PromptContext, ToolSpec
from soulframe.kit import one_line

from ._common import has_tool, option, sandbox

#: more MCP tools than this are not listed; the agent searches them instead (the same
#: inline-versus-search trade-off as skills, seed 000 §9)
MCP_INLINE_MAX = 20
#: an MCP tool's description in the list: its first line, cut to this many characters
MCP_DESCRIPTION_MAX = 200


def _one_line(tool: ToolSpec) -> str:
    text = (tool.summary or tool.description or "").strip()
    first = text.splitlines()[0].strip() if text else ""
    return f"- {tool.name}: {first}" if first else f"- {tool.name}"


def tooling(ctx: PromptContext) -> str:
    parts = []
    tools = sorted(ctx.tools, key=lambda t: t.name)
    if tools:
        parts.append(
            "Tools available in this session (names are case-sensitive; call them exactly "
            "as listed):\n" + "\n".join(_one_line(t) for t in tools)
        )
    else:
        parts.append("No tools are available in this session: work from the context below.")
    if ctx.file("TOOLS.md") is not None:
        parts.append(
            "TOOLS.md (below) holds local notes on how to use tools here; it describes, "
            "it does not add tools."
        )
    box = sandbox(ctx)
    if box is not None:
        parts.append(
            f"Commands and file tools run inside the sandbox container (workdir "
            f"{box['container_dir']}); you don't need `docker run`."
        )
    return "## Tooling\n" + "\n\n".join(parts)


def execution_bias(ctx: PromptContext) -> str:
    return (
        "## Execution Bias\n"
        "When a request is clear, do it: use your tools, finish the job, then report what "
        "you did. Ask first only when a step is irreversible, risky or genuinely ambiguous. "
        "A finished result beats a plan or a question."
    )


def tool_call_style(ctx: PromptContext) -> str | None:
    if ctx.bootstrapping:  # the first-run ritual is a conversation, not a workflow
        return None
    return (
        "## Tool Call Style\n"
        "Call routine, low-risk tools silently — just call them. Narrate briefly only when it "
        "helps the user: multi-step work, slow or sensitive actions (deleting, sending, "
        "spending), or when they ask. Describe what you are doing in plain language; never "
        "expose tool names, arguments or internal mechanics."
    )


#: a command's name as typed in a shell: no spaces, no markup that could reshape the prompt
_CLI_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
#: a description longer than this is cut: it is one line in a list, not documentation
CLI_DESCRIPTION_MAX = 200


def credentialed_clis(ctx: PromptContext) -> list[tuple[str, str]]:
    """The agent's ``options.credentialed_cli``: (name, one-line description) pairs.

    Only ``name`` and ``description`` are ever read; any other key of an entry (a host may
    keep its own settings there) never reaches the prompt. A bad shape is a
    :class:`ConfigError` naming the agent and the key.
    """
    raw = option(ctx, "credentialed_cli")
    if raw is None:
        return []
    where = f"agent {ctx.spec.id!r}: options.credentialed_cli"
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ConfigError(f"{where} — expected a list of tables with 'name' and 'description'")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}[{i}] — expected a table with 'name' and 'description'")
        name = entry.get("name")
        if not isinstance(name, str) or not _CLI_NAME.fullmatch(name.strip()):
            raise ConfigError(
                f"{where}[{i}].name = {name!r} — expected a command name such as 'gh' or "
                "'aws' (letters, digits, '.', '_', '+', '-')"
            )
        desc = entry.get("description", "")
        if not isinstance(desc, str):
            raise ConfigError(f"{where}[{i}].description — expected a string")
        desc = " ".join(desc.split())  # one line: a newline must not start a new prompt block
        if len(desc) > CLI_DESCRIPTION_MAX:
            desc = desc[: CLI_DESCRIPTION_MAX - 1].rstrip() + "…"
        out.append((name.strip(), desc))
    return out


def credentialed_cli(ctx: PromptContext) -> str | None:
    """Seed 002 §2.5: the command-line tools already signed in for the agent (when the agent
    has any), so it uses them instead of asking the user for credentials. Names and
    descriptions only — the credentials live in each CLI's own config or keyring."""
    if ctx.bootstrapping:  # like the tool call style: the first run is a conversation
        return None
    clis = credentialed_clis(ctx)
    if not clis:
        return None
    lines = "\n".join(f"- {n}: {d}" if d else f"- {n}" for n, d in clis)
    return (
        "## Credentialed CLI\n"
        "These command-line tools are installed and already signed in; their credentials "
        "are configured outside this conversation. Use them when a task needs them, instead "
        "of asking the user for a password, token or key. Never print, echo or export their "
        "credentials (no `auth token`, no dumping the environment or their config files).\n"
        + lines
    )


def skills(ctx: PromptContext) -> str | None:
    """The skills block comes from the skill set (inline ``<available_skills>`` or
    search-mode instructions, decided there per seed 000 §9); nothing when there is none."""
    try:
        skill_set = ctx.agent.skills
    except ImportError:  # no skills module installed
        return None
    # the session's user may have private or granted skills
    text = skill_set.for_session(ctx.session).prompt_block(ctx)
    return text


def _mcp_tools(ctx: PromptContext) -> list[Mapping[str, Any]]:
    raw = option(ctx, "mcp_tools") or []
    where = f"agent {ctx.spec.id!r}: options.mcp_tools"
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ConfigError(f"{where} — expected a list of tables with name, description, server")
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping) or not str(t.get("name") or "").strip():
            raise ConfigError(f"{where}[{i}] — expected a table with a non-empty 'name'")
    return list(raw)


def mcp_tools(ctx: PromptContext) -> str | None:
    tools = _mcp_tools(ctx)
    if not tools:
        return None
    head = (
        "## MCP Tools (prefer them over core tools)\n"
        "You have external tool integrations (MCP servers). For anything outside this "
        "machine, prefer them to core tools."
    )
    search_only = ctx.mode == "task" or bool(option(ctx, "mcp_search")) or len(tools) > MCP_INLINE_MAX
    if search_only:
        return (
            f"{head} There are {len(tools)}: find the right one with mcp_tool_search "
            "(describe the operation) before any external action."
        )
    lines = []
    for t in tools:
        # names and descriptions are what MCP servers report about themselves: outside
        # text, quoted on one line as session fields are (no tags, markup, line breaks,
        # bidi or invisible characters)
        name = one_line(t["name"])
        server = one_line(t.get("server") or "")
        server = f" [{server}]" if server else ""
        first = str(t.get("description") or "").strip().splitlines()
        desc = one_line(first[0], MCP_DESCRIPTION_MAX) if first else ""
        lines.append(f"- {name}{server}: {desc}" if desc else f"- {name}{server}")
    return head + "\n" + "\n".join(lines)


def _spawn_tool(ctx: PromptContext) -> str | None:
    opt = option(ctx, "spawn")
    name = str(opt.get("tool", "spawn")) if isinstance(opt, Mapping) else "spawn"
    if has_tool(ctx, name) or opt:
        return name
    return None


def subagent_spawning(ctx: PromptContext) -> str | None:
    if ctx.file("TEAM.md") is not None:  # team orchestration replaces spawning (seed 002)
        return None
    tool = _spawn_tool(ctx)
    if tool is None:
        return None
    return (
        "## Sub-Agent Spawning\n"
        f"For long or parallel work, start a sub-agent with the {tool} tool "
        "(action=spawn|list|steer|kill). A sub-agent sees only AGENTS.md and TOOLS.md — not "
        "SOUL.md, USER.md or MEMORY.md — so put every fact it needs into the task, and no "
        "private data it doesn't need. Check its result before you report it as done."
    )
