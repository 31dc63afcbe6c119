"""Connecting to PostgreSQL: DSN handling without leaking the password, a connection pool,
one transaction per unit of work, and one retry when the connection is lost.

Every error that reaches a user is a :class:`StoreUnavailableError` (a
:class:`~soulframe.SoulframeError`, so the CLI prints one line, no traceback) naming
the server (``host:port/db``), where the DSN came from, and what went wrong - never the
password.
"""

from __future__ import annotations

import logging
import re
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from soulframe import SoulframeError

log = logging.getLogger("soulframe.postgres")
# psycopg and its pool log every failed reconnection and discarded connection as warnings;
# with no handler configured Python printed each to stderr (a dozen lines when the server
# went away mid-run) before the one error that says it all. An application that configures
# logging still gets them, through the root logger.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

T = TypeVar("T")

#: seconds to wait for a TCP/socket connection before giving up
CONNECT_TIMEOUT = 10
#: seconds to wait for a pooled connection before asking the server directly what is wrong
QUICK_TIMEOUT = 2
#: seconds to wait for a free pooled connection when the server is up but the pool busy
POOL_TIMEOUT = 15


class StoreUnavailableError(SoulframeError):
    """PostgreSQL cannot be reached, refused us, or lacks pgvector. The message names the
    server and the config key, never the password."""


# the password of a URI runs to the LAST "@" of the word: one typed without percent-encoding
# may hold "@", "/" or ":" (libpq then reads part of it as the host, port or database)
_URI_PASSWORD = re.compile(r"(?P<pre>[a-z0-9+.-]+://[^:/@?#\s]*:)(?P<pw>\S*)(?=@)", re.I)
# a key=value password is quoted or unquoted, either with backslash escapes ("a\ b")
_KV_PASSWORD = re.compile(r"(?P<pre>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|(?:\\.|[^\s\\])+)", re.I)
#: where libpq may cut a mistyped password, showing a piece as a host, port or database
_PIECES = re.compile(r"[@/:\s\\']+")


def redact(text: str, dsn: str | None = None) -> str:
    """``text`` with any password (from ``dsn``, or anything that looks like one) masked."""
    out = _URI_PASSWORD.sub(lambda m: m.group("pre") + "***", text)
    out = _KV_PASSWORD.sub(lambda m: m.group("pre") + "***", out)
    if dsn:
        for secret in sorted(_secrets_of(dsn), key=len, reverse=True):
            if len(secret) >= 3:
                out = out.replace(secret, "***")
    return out


def _secrets_of(dsn: str) -> list[str]:
    """The password of ``dsn``, as written and decoded, and the pieces libpq may show of a
    mistyped one ("p@ssword" read as password "p" and a host starting "ssword@")."""
    found = [m.group("pw") for m in _URI_PASSWORD.finditer(dsn)]
    found += [m.group("pw").strip("'") for m in _KV_PASSWORD.finditer(dsn)]
    try:
        from urllib.parse import unquote

        found += [unquote(s) for s in found]
    except Exception:  # pragma: no cover - defensive
        pass
    found += [p for s in found for p in _PIECES.split(s)]
    return [s for s in dict.fromkeys(found) if s and s != "***"]


def describe(dsn: str) -> str:
    """``user@host:port/db`` for messages and ``memory status`` (no password)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:
        return redact(dsn, dsn)
    host = str(parts.get("host") or parts.get("hostaddr") or "localhost")
    port = str(parts.get("port") or "5432")
    db = str(parts.get("dbname") or parts.get("user") or "")
    user = str(parts.get("user") or "")
    # a mistyped password may have been read as part of the host, port or database
    return redact(f"{user + '@' if user else ''}{host}:{port}/{db}", dsn)


def _reason(exc: BaseException, dsn: str) -> str:
    msg = str(exc).strip() or type(exc).__name__
    # libpq repeats "connection failed: connection to server at ... failed:" - keep the cause
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    return redact(" — ".join(lines), dsn)


def _local_server_hint(dsn: str) -> str:
    """When the DSN's socket directory is a PostgreSQL data directory that is not running
    (a `soulframe db start` server after `db stop` or a reboot), say how to start it."""
    import os

    try:
        from psycopg.conninfo import conninfo_to_dict

        host = str(conninfo_to_dict(dsn).get("host") or "")
    except Exception:
        return ""
    if not host.startswith("/") or not os.path.isfile(os.path.join(host, "PG_VERSION")):
        return ""
    if os.path.exists(os.path.join(host, "postmaster.pid")):
        return ""  # it runs (or crashed): the reason above says more than a hint could
    return f" (the local server is not running: start it with `soulframe db start --data-dir {host}`)"


def is_connection_loss(exc: BaseException, conn: Any = None) -> bool:
    """Whether ``exc`` means the connection died (server killed, restarted, network)."""
    import psycopg

    if conn is not None and (getattr(conn, "broken", False) or conn.closed):
        return True
    if isinstance(exc, psycopg.errors.AdminShutdown | psycopg.errors.CrashShutdown
                  | psycopg.errors.CannotConnectNow):
        return True
    return isinstance(exc, psycopg.OperationalError) and not isinstance(
        exc, psycopg.errors.QueryCanceled
    )


def _close_forgotten_pool(pool: Any, location: str) -> None:
    """Close a pool whose :class:`Database` was never closed: when it is garbage collected
    or, at the latest, when the interpreter exits (its worker threads and server connections
    would otherwise outlive every use). Warns as Python does for an unclosed file."""
    try:
        warnings.warn(f"PostgreSQL {location}: a connection pool was never closed (call "
                      "Agent.close() or use `with Agent.open(...)`)", ResourceWarning, stacklevel=2)
    finally:
        pool.close()


class Database:
    """A pool of connections to one PostgreSQL database, opened lazily.

    ``run(fn)`` calls ``fn(conn)`` inside one transaction and commits it; if the
    connection is lost before the commit is acknowledged, the transaction is rolled back by
    the server and ``fn`` is run once more on a fresh connection (every write soulframe
    makes is an idempotent replace, so a retry cannot duplicate anything).
    """

    def __init__(self, dsn: str, *, origin: str = "store.dsn", max_size: int = 4,
                 configure: Callable[[Any], None] | None = None) -> None:
        self.dsn = dsn
        self.origin = origin
        self.max_size = max_size
        self._configure = configure
        self._pool: Any = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        return describe(self.dsn)

    def error(self, what: str, exc: BaseException) -> StoreUnavailableError:
        where = f" ({self.origin})" if self.origin else ""
        return StoreUnavailableError(
            f"PostgreSQL {self.location}{where}: {what}: {_reason(exc, self.dsn)}"
            + _local_server_hint(self.dsn)
        )

    def connect(self, **kw: Any) -> Any:
        """One plain connection (no pool), with a clear error if it fails."""
        import psycopg

        try:
            return psycopg.connect(self.dsn, connect_timeout=CONNECT_TIMEOUT, **kw)
        except psycopg.Error as exc:
            raise self.error("cannot connect", exc) from None
        except Exception as exc:  # bad DSN syntax surfaces as other types in some versions
            raise self.error("invalid DSN", exc) from None

    def open(self) -> None:
        """Create the pool (connections are checked before each use)."""
        with self._lock:
            if self._pool is not None:
                return
            from psycopg_pool import ConnectionPool

            self._pool = ConnectionPool(
                self.dsn,
                min_size=1,
                max_size=self.max_size,
                kwargs={"connect_timeout": CONNECT_TIMEOUT, "autocommit": False},
                configure=self._configure,
                check=ConnectionPool.check_connection,
                timeout=POOL_TIMEOUT,
                reconnect_timeout=60,
                name="soulframe",
                open=False,
            )
            self._pool.open(wait=False)
            # the pool must not refer back to self, or self could never be collected
            self._finalizer = weakref.finalize(self, _close_forgotten_pool, self._pool, self.location)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection. When none comes quickly, the server is asked directly, so
        a dead server is reported at once (with libpq's reason) instead of after the pool
        has waited for a reconnection that cannot happen; a busy pool is waited for."""
        from psycopg_pool import PoolTimeout

        self.open()
        with ExitStack() as stack:
            try:
                conn = stack.enter_context(self._pool.connection(timeout=QUICK_TIMEOUT))
            except PoolTimeout:
                self.connect().close()  # raises StoreUnavailableError with the real reason
                try:
                    conn = stack.enter_context(self._pool.connection(timeout=POOL_TIMEOUT))
                except PoolTimeout as exc:
                    raise self.error(f"no free connection within {POOL_TIMEOUT} s (raise "
                                     "max_connections?)", exc) from None
            yield conn

    def run(self, fn: Callable[[Any], T], *, what: str = "query") -> T:
        """``fn(conn)`` in one transaction, retried once on a lost connection."""
        import psycopg

        for attempt in (1, 2):
            conn = None
            try:
                with self.connection() as conn, conn.transaction():
                    return fn(conn)
            except StoreUnavailableError:
                if attempt == 2:
                    raise
                log.warning("PostgreSQL %s: no connection for %s; retrying once",
                            self.location, what)
                self._pool.check()
            except psycopg.Error as exc:
                if not is_connection_loss(exc, conn):
                    # a refusal by the server (a constraint, a permission, a full disk):
                    # one line naming the server and the work, as for a lost connection
                    raise self.error(f"{what} failed", exc) from exc
                if attempt == 2:
                    raise self.error(f"connection lost during {what} (retried once)", exc) from None
                log.warning("PostgreSQL %s: connection lost during %s; retrying once",
                            self.location, what)
                self._pool.check()
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        with self._lock:
            if self._finalizer is not None:
                self._finalizer.detach()
                self._finalizer = None
            if self._pool is not None:
                self._pool.close()
                self._pool = None
