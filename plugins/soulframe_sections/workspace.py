"""Where the agent works: workspace (6), team workspace and members (6.3, 6.4, from the
virtual TEAM.md), delegation targets (6.45, from DELEGATION.md) and the sandbox (6.5)."""

from __future__ import annotations

from soulframe import PromptContext

from ._common import safe_text, sandbox, wrap

#: TEAM.md's roster starts at this heading; Team Members (6.4) shows it, Team Workspace the rest
MEMBERS_HEADING = "## Members"


def workspace(ctx: PromptContext) -> str:
    box = sandbox(ctx)
    where = box["container_dir"] if box is not None else str(ctx.agent.root)
    lines = [f"## Workspace\nYour working directory is: {where}"]
    if ctx.session.kind in ("subagent", "cron"):
        lines.append(
            "Keep files you create inside it and use paths relative to it; do not read or "
            "write outside it."
        )
    else:
        lines.append(
            "It is your home: the files that make you (SOUL.md, IDENTITY.md, AGENTS.md, "
            "USER.md, TOOLS.md) live at its root, your memory in MEMORY.md and "
            "memory/YYYY-MM-DD.md. Use paths relative to it; do not read or write outside it."
        )
    return "\n".join(lines)


def _team_parts(ctx: PromptContext) -> tuple[str, str] | None:
    team = ctx.file("TEAM.md")
    if team is None:
        return None
    head, sep, members = team.content.partition(MEMBERS_HEADING)
    return head.strip(), (members.strip() if sep else "")


def team_workspace(ctx: PromptContext) -> str | None:
    parts = _team_parts(ctx)
    if parts is None or not parts[0]:
        return None
    tag = "system_context"
    return f'## Team Workspace\n<{tag} name="TEAM.md">\n{safe_text(ctx, parts[0])}\n</{tag}>'


def team_members(ctx: PromptContext) -> str | None:
    parts = _team_parts(ctx)
    if parts is None or not parts[1]:
        return None
    return f"## Team Members\n{safe_text(ctx, parts[1])}"


def delegation(ctx: PromptContext) -> str | None:
    f = ctx.file("DELEGATION.md")
    if f is None:
        return None
    return wrap(ctx, f).replace("## DELEGATION.md", "## Delegation Targets", 1)


_ACCESS = {
    "rw": "read-write — you can change files in it",
    "ro": "read-only — you can read files but not change them; say so if a task needs a write",
    "none": "not mounted — you cannot see the workspace files from the sandbox",
}


def sandbox_section(ctx: PromptContext) -> str | None:
    box = sandbox(ctx)
    if box is None:
        return None
    access = str(box["access"])
    return (
        "## Sandbox\n"
        "You run inside a sandbox container.\n"
        f"- Container workdir: {box['container_dir']}\n"
        f"- Host workspace: {ctx.agent.root}\n"
        f"- Workspace access: {_ACCESS.get(access, access)}"
    )
