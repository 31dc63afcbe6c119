"""The filesystem workspace: the bootstrap files as a context source, and the templates a
new workspace is seeded with (``soulframe init``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from soulframe import Registration, WorkspaceTemplate, hookimpl

from .templates import default_templates

if TYPE_CHECKING:
    from soulframe import AgentLike, ContextSource


def _source(agent: AgentLike) -> Any:
    from .source import WorkspaceSource

    return WorkspaceSource(agent)


@hookimpl
def register_context_sources() -> Iterable[Registration[ContextSource]]:
    return [Registration("workspace", _source, "the bootstrap files, MEMORY.md and daily logs on disk")]


@hookimpl
def register_workspace_templates() -> Iterable[WorkspaceTemplate]:
    return default_templates()
