"""The embedded default store: SQLite (via sqlean-py where installed) with FTS5 keyword
search and vectors kept in the same file.

Select it with ``store.backend = "sqlite"`` (the default). Its file is ``store.path``, by
default ``<state_dir>/memory/<agent id>.sqlite``. Own settings, under
``[plugins.config.soulframe_sqlite]``:

``vector_scan``
    ``"numpy"`` (default: the vectors are loaded once into a matrix and scanned with numpy,
    5-10x faster than sqlite-vec here) or ``"sqlite-vec"`` (KNN on the ``vec0`` mirror;
    needs the extension to load).
``sqlite_vec``
    whether to load sqlite-vec and keep the ``vec0`` mirror; by default only with
    ``vector_scan = "sqlite-vec"`` (the mirror triples indexing time, and the numpy scan
    is faster: docs/install.md). Needs the ``soulframe[sqlite-vec]`` extra.

Nothing heavy is imported here: the driver, sqlite-vec and numpy load inside the factory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from soulframe import StoreRegistration, hookimpl

if TYPE_CHECKING:
    from soulframe import AgentLike, ContextFileStore, Store


def default_path(agent: AgentLike) -> Path:
    """``store.path`` if set, else ``<state_dir>/memory/<agent id>.sqlite``."""
    configured = agent.config.get("store.path")
    if configured:
        return Path(str(configured)).expanduser()
    return Path(str(agent.config.get("state_dir"))).expanduser() / "memory" / f"{agent.state_key}.sqlite"


def open_store(agent: AgentLike) -> Store:
    from .store import SqliteStore

    options = agent.config.plugin_config("soulframe_sqlite")
    return SqliteStore(
        default_path(agent),
        vector_scan=str(options.get("vector_scan", "numpy")),
        sqlite_vec=None if options.get("sqlite_vec") is None else bool(options.get("sqlite_vec")),
        workspace=str(agent.root),
    )


def open_context_files(agent: AgentLike) -> ContextFileStore:
    """Per-user context files of a standalone agent (``userfiles.py``), without opening
    the memory index (which loads sqlite-vec and numpy): ``soulframe prompt`` stays light."""
    from .userfiles import open_context_files as _open

    return _open(agent)


@hookimpl
def register_stores() -> list[StoreRegistration]:
    return [
        StoreRegistration(
            name="sqlite",
            factory=open_store,
            description="embedded SQLite: FTS5 keyword search, vectors in the same file (default)",
            context_files=open_context_files,
            location=default_path,
        )
    ]
