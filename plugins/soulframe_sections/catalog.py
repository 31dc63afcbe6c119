"""Every standard section in one table: its place (the seeds' numbering), the prompt modes
it appears in, its zone relative to the cache boundary and how early it is cut when the
prompt is over budget.

Modes follow seed 002's matrix (full / task / minimal / none); `none` is "identity line
only", so the identity line is the one section it keeps. Where the seeds leave a
section out of the matrix, seed 000's full/minimal table decides; the two deliberate
deviations are documented in docs/prompt.md: the sandbox note stays in task and minimal
mode (the workspace section already points at the container path, which would otherwise be
unexplained), and the heartbeat note is also given to heartbeat sessions, which run in
minimal mode. The credentialed CLI note (2.5) is in neither table: it is given in full and
task mode (automation agents are the ones that drive CLIs) and, like the tool call style,
skipped while bootstrapping.

Truncation priorities (lower is cut first; ``None`` never): extra context first, then the
skills list, then context files (seed 002's order); safety, tooling, workspace and the
identity line are never cut.
"""

from __future__ import annotations

from collections.abc import Callable

from soulframe import PromptContext, Section

from . import context, identity, memory, safety, session, tooling, workspace

ALL = frozenset({"full", "task", "minimal", "none"})
FULL = frozenset({"full"})
FULL_TASK = frozenset({"full", "task"})
NOT_NONE = frozenset({"full", "task", "minimal"})
#: seed 002: `none` is "identity line only" — every other section leaves it out
IDENTITY_ONLY = ALL
#: seed 000 §5: sub-agent spawning is "Conditional" in both PromptFull and PromptMinimal
FULL_MINIMAL = frozenset({"full", "minimal"})

Render = Callable[[PromptContext], "str | None"]


def _s(name: str, order: float, render: Render, modes: frozenset[str], zone: str,
       priority: int | None, title: str) -> Section:
    return Section(name=name, order=order, render=render, modes=modes, zone=zone,  # type: ignore[arg-type]
                   truncate_priority=priority, title=title)


SECTIONS: tuple[Section, ...] = (
    _s("identity", 1, identity.identity, IDENTITY_ONLY, "stable", None, "Identity"),
    _s("first_run_bootstrap", 1.5, identity.first_run, NOT_NONE, "stable", None, "First-run bootstrap"),
    _s("persona", 1.7, identity.persona, FULL_TASK, "stable", 60, "Persona (SOUL.md, IDENTITY.md)"),
    _s("tooling", 2, tooling.tooling, NOT_NONE, "stable", None, "Tooling"),
    _s("execution_bias", 2.2, tooling.execution_bias, FULL_TASK, "stable", 75, "Execution bias"),
    _s("tool_call_style", 2.3, tooling.tool_call_style, FULL, "stable", 75, "Tool call style"),
    _s("credentialed_cli", 2.5, tooling.credentialed_cli, FULL_TASK, "stable", 75, "Credentialed CLI (options.credentialed_cli)"),
    _s("safety", 3, safety.safety, NOT_NONE, "stable", None, "Safety (full / slim)"),
    _s("identity_anchoring", 3.2, identity.identity_anchoring, FULL_TASK, "stable", 85, "Identity anchoring (predefined agents)"),
    _s("self_evolution", 3.5, identity.self_evolution, FULL, "stable", 70, "Self-evolution (predefined, self_evolve)"),
    _s("skills", 4, tooling.skills, NOT_NONE, "stable", 20, "Skills"),
    _s("mcp_tools", 4.5, tooling.mcp_tools, FULL_TASK, "stable", 25, "MCP tools"),
    _s("workspace", 6, workspace.workspace, NOT_NONE, "stable", None, "Workspace"),
    _s("team_workspace", 6.3, workspace.team_workspace, NOT_NONE, "stable", 50, "Team workspace (TEAM.md)"),
    _s("team_members", 6.4, workspace.team_members, NOT_NONE, "stable", 45, "Team members (TEAM.md)"),
    _s("delegation_targets", 6.45, workspace.delegation, NOT_NONE, "stable", 45, "Delegation targets (DELEGATION.md)"),
    _s("sandbox", 6.5, workspace.sandbox_section, NOT_NONE, "stable", 80, "Sandbox"),
    _s("user_identity", 7, session.user_identity, FULL, "stable", 80, "User identity (owner ids)"),
    _s("time", 8, session.time, NOT_NONE, "dynamic", 90, "Current date & time"),
    _s("channel_formatting", 9.5, session.channel_formatting, FULL, "dynamic", 65, "Channel formatting"),
    _s("group_chat_hint", 9.6, session.group_chat, NOT_NONE, "dynamic", 85, "Group chat reply hint"),
    _s("extra_context", 10, context.extra_context, NOT_NONE, "dynamic", 10, "Additional context"),
    _s("project_context", 11, context.project_context, NOT_NONE, "stable", 40, "Project context (stable files)"),
    _s("project_context_dynamic", 11, context.project_context_dynamic, NOT_NONE, "dynamic", 30, "Project context (per-user and memory files)"),
    _s("memory_recall", 12.5, memory.memory_recall, NOT_NONE, "stable", 55, "Memory recall (full / slim / minimal)"),
    _s("silent_replies", 12.6, memory.silent_replies, FULL, "stable", 65, "Silent replies (NO_REPLY)"),
    _s("heartbeat", 12.7, memory.heartbeat, frozenset({"full", "minimal"}), "stable", 65, "Heartbeats (HEARTBEAT_OK)"),
    _s("subagent_spawning", 13, tooling.subagent_spawning, FULL_MINIMAL, "dynamic", 50, "Sub-agent spawning"),
    _s("runtime", 15, session.runtime, NOT_NONE, "dynamic", 70, "Runtime"),
    _s("recency_reinforcements", 16, identity.recency, FULL, "dynamic", 60, "Recency reinforcements"),
)
