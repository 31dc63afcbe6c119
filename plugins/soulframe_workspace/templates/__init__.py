"""The embedded templates (seed 000 §3): package data, read when a workspace is seeded."""

from __future__ import annotations

from importlib import resources

from soulframe import WorkspaceTemplate

ALL = frozenset({"open", "predefined"})
OPEN = frozenset({"open"})

#: (file, agent types whose own workspace gets it, agent types that get a per-user copy).
#: seed 000 §3–4: an open agent's users each get all seven files; a predefined agent shares
#: six at agent level and gives each user USER.md and BOOTSTRAP.md (so its agent-level
#: workspace has no BOOTSTRAP.md: the first-run ritual belongs to each user).
FILES: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    ("AGENTS.md", ALL, OPEN),
    ("SOUL.md", ALL, OPEN),
    ("TOOLS.md", ALL, OPEN),
    ("IDENTITY.md", ALL, OPEN),
    ("USER.md", ALL, ALL),
    ("HEARTBEAT.md", ALL, OPEN),
    ("BOOTSTRAP.md", OPEN, ALL),
    ("MEMORY.md", ALL, frozenset()),
)


def read(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def default_templates() -> list[WorkspaceTemplate]:
    out = [
        WorkspaceTemplate(name=name, content=read(name), agent_types=types, per_user=per_user)
        for name, types, per_user in FILES
    ]
    out.append(WorkspaceTemplate(name="memory/", agent_types=ALL))
    return out
