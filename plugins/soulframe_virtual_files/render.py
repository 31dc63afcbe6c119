"""The text of the two generated context files (seed 000 §5): DELEGATION.md from the
agent's ``options.delegation_targets`` and TEAM.md from ``options.team``. Bad options raise a
:class:`ConfigError` naming the agent and the key."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from soulframe import ConfigError

#: TEAM.md's roster starts with this heading (the Team Members section shows it separately)
MEMBERS_HEADING = "## Members"


def _entries(agent_id: str, key: str, raw: Any) -> list[tuple[str, str]]:
    where = f"agent {agent_id!r}: options.{key}"
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ConfigError(f"{where} — expected a list of tables with 'id' and 'description'")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or not str(entry.get("id") or "").strip():
            raise ConfigError(f"{where}[{i}] — expected a table with a non-empty 'id'")
        desc = " ".join(str(entry.get("description") or "").split())
        out.append((str(entry["id"]).strip(), desc))
    return out


def _roster(entries: list[tuple[str, str]]) -> str:
    return "\n".join(f"- {i}: {d}" if d else f"- {i}" for i, d in entries)


def delegation_md(agent_id: str, raw: Any, inline_max: int) -> str | None:
    """≤ ``inline_max`` targets: the list; more: an instruction to use ``delegate_search``."""
    targets = _entries(agent_id, "delegation_targets", raw)
    if not targets:
        return None
    if len(targets) <= inline_max:
        return (
            "You can hand work to these agents with the delegate tool: pass the agent id and "
            "a self-contained task (they do not see this conversation).\n"
            + _roster(targets)
        )
    return (
        f"You can hand work to {len(targets)} other agents with the delegate tool — too many "
        "to list here. Call delegate_search with a short description of the work to find "
        "the right agent id, then delegate a self-contained task to it."
    )


def team_md(agent_id: str, raw: Any) -> str | None:
    if raw is None:
        return None
    where = f"agent {agent_id!r}: options.team"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} — expected a table with name, role, members, workspace")
    name = str(raw.get("name") or "").strip()
    if not name:
        raise ConfigError(f"{where}.name — expected the team's name")
    role = str(raw.get("role") or "member")
    if role not in ("lead", "member"):
        raise ConfigError(f"{where}.role = {role!r} — expected 'lead' or 'member'")
    members = _entries(agent_id, "team.members", raw.get("members") or [])
    ws = str(raw.get("workspace") or "").strip()
    lead = str(raw.get("lead") or "").strip()

    lines = [f"# Team: {name}"]
    if role == "lead":
        lines.append(
            "You lead this team. Break the user's goals into tasks, assign each to the member "
            "best suited to it (by id), track progress and merge the results. Do the work "
            "yourself only when no member fits."
        )
        if ws:
            lines.append(
                f"Shared team workspace: {ws}. Keep one status note per task there (open, "
                "in progress, blocked, done) and update it as work moves, so everyone sees "
                "the same board."
            )
    else:
        by = f" {lead} leads it." if lead else ""
        lines.append(
            f"You are a member of this team.{by} Work on the tasks assigned to you and report "
            "results to the lead rather than straight to the user."
        )
        if ws:
            lines.append(
                f"Shared team workspace: {ws}. Update your task's status note there when you "
                "start, get blocked and finish."
            )
    text = "\n\n".join(lines)
    if members:
        text += f"\n\n{MEMBERS_HEADING}\n{_roster(members)}"
    return text
