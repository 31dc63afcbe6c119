"""What the agent can do: the tool list (2), execution bias (2.2), tool call style (2.3),
skills (4), MCP tools (4.5) and sub-agent spawning (13)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from soulframe.model import ConfigError, PromptContext, ToolSpec

from ._common import has_tool, option, sandbox

#: more MCP tools than this are not listed; the agent searches them instead (the same
#: inline-versus-search trade-off as skills, seed 000 §9)
MCP_INLINE_MAX = 20


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


def skills(ctx: PromptContext) -> str | None:
    """The skills block comes from the skill set (inline ``<available_skills>`` or
    search-mode instructions, decided there per seed 000 §9); nothing when there is none."""
    try:
        skill_set: Any = ctx.agent.skills
    except (ImportError, AttributeError):  # no skills module or plugin installed
        return None
    block = getattr(skill_set, "prompt_block", None)
    if block is None:
        return None
    text: str | None = block(ctx)
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
        server = f" [{t['server']}]" if t.get("server") else ""
        desc = str(t.get("description") or "").strip().splitlines()
        lines.append(f"- {t['name']}{server}: {desc[0]}" if desc else f"- {t['name']}{server}")
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
