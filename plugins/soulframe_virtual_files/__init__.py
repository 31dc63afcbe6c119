"""Virtual context files, generated from the agent's config rather than stored anywhere
(seed 000 §5): DELEGATION.md (the agents this one can delegate to) and TEAM.md (its team,
role and teammates). They are ``kind="virtual"`` so they are shown in ``<system_context>``
tags. While the first-run ritual (BOOTSTRAP.md) is under way the core leaves every virtual
file out (``soulframe._engine.prompt.context.collect_context``), so onboarding is not diluted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from soulframe import ContextFile, K, Key, Registration, Session, hookimpl

from .render import delegation_md, team_md

if TYPE_CHECKING:
    from soulframe import AgentLike, ContextSource

SOURCE_NAME = "virtual"
VIRTUAL_NAMES = ("DELEGATION.md", "TEAM.md")


@attrs.frozen
class VirtualFiles:
    """A context source whose files depend only on the agent's config, so they are built
    once per agent."""

    files: tuple[ContextFile, ...]
    name: str = SOURCE_NAME

    def load(self, agent: AgentLike, session: Session) -> Sequence[ContextFile]:
        return self.files


def build(agent: AgentLike) -> VirtualFiles:
    spec = agent.spec
    inline_max = int(agent.config.get("delegation.inline_max_targets") or 15)
    files = []
    delegation = delegation_md(spec.id, spec.options.get("delegation_targets") or [], inline_max)
    if delegation:
        files.append(ContextFile(name="DELEGATION.md", content=delegation, source=SOURCE_NAME,
                                 kind="virtual"))
    team = team_md(spec.id, spec.options.get("team"))
    if team:
        files.append(ContextFile(name="TEAM.md", content=team, source=SOURCE_NAME, kind="virtual"))
    return VirtualFiles(files=tuple(files))


@hookimpl
def register_context_sources() -> list[Registration[ContextSource]]:
    return [Registration(
        name=SOURCE_NAME,
        factory=build,
        description="DELEGATION.md and TEAM.md generated from the agent's options",
    )]


@hookimpl
def register_config_keys() -> dict[str, Key]:
    return {
        # ----------------------------------------------------------------- delegation, teams
        "delegation.inline_max_targets": K(15, "more targets than this: tell the agent to use delegate_search", seed="000 §5"),
    }
