"""Per-user context files (seed 000 §3–4, §6): the ``store`` context source.

Yields the session user's own copies of the context files (``scope="user"``, so they
override the agent's in the merge) from whichever store is selected: SQLite in standalone
mode (``<state_dir>/agents.sqlite``), PostgreSQL in managed mode, where it also yields the
agent-level files from the database. A user's files are seeded from the templates on the
user's first session. The rules live in :mod:`soulframe.agentstore`; this plugin only
registers the source, so a third party can replace it by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from soulframe import hookimpl
from soulframe.model import Registration


def _source(agent: Any) -> Any:
    from soulframe.agentstore import StoreContextSource

    return StoreContextSource(agent)


# tryfirst: pluggy lists it last, so among agent-level files of the same name the store's
# (managed mode) win over the workspace's
@hookimpl(tryfirst=True)
def register_context_sources() -> Iterable[Registration]:
    return [Registration(
        "store", _source,
        "per-user context files (and, in managed mode, agent-level ones) from the store",
    )]
