"""``soulframe serve --http``: stateless streamable HTTP behind the token guard.

Stateless: no session id, nothing kept between requests, so several server processes can
sit behind one address. A 2026-07-28 client needs nothing more (the revision has no
handshake); a 2025-11-25 client's ``initialize`` is answered and every later request stands
on its own. What a client asks may only narrow the session the server was started for
(:mod:`.scope`), request by request.
"""

from __future__ import annotations

import errno
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from soulframe import SoulframeError

from .guard import Guard, TokenError, allowed_hosts, make_token, write_token

if TYPE_CHECKING:
    from soulframe import AgentLike


def check_port(host: str, port: int) -> None:
    """Fail with a clear message before announcing anything when the port cannot be bound
    (uvicorn would log a bare errno and exit 3 after we said "serving")."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise SoulframeError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}"
                + ("; another server is using that port, pick another with --http PORT"
                   if exc.errno == errno.EADDRINUSE else "")
            ) from None


def app_for(server: Any, *, token: str, host: str, allow_hosts: tuple[str, ...] = ()) -> Any:
    """The ASGI app: the guard in front of the SDK's stateless streamable HTTP app."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_hosts(host, allow_hosts)
    # the SDK's own Host/Origin check, on for every bind address (it turns itself on for
    # loopback only); the guard in front says why a request was refused
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"[{h}]:*" if ":" in h else f"{h}:*" for h in hosts] + sorted(hosts),
        # an origin on the scheme's default port comes without one, as the guard accepts it
        allowed_origins=[f"{scheme}://{f'[{h}]' if ':' in h else h}{port}" for h in hosts
                         for scheme in ("http", "https") for port in (":*", "")],
    )
    # JSON answers: no stream per request (a subscriptions/listen answer is a stream anyway)
    app = server.streamable_http_app(stateless_http=True, json_response=True, transport_security=security, host=host)
    return Guard(app, token=token, hosts=hosts)


def serve_http(agent: AgentLike, server: Any, *, host: str, port: int, allow_hosts: tuple[str, ...],
               say: Callable[[str], None], stopping: Callable[[], None] | None = None) -> None:
    """Serve until stopped. ``stopping``: called on the event loop as the server starts to
    stop, before uvicorn waits for the connections to close."""
    import uvicorn

    try:
        token = make_token()
    except TokenError as exc:
        raise SoulframeError(str(exc)) from None
    path = write_token(agent.state_dir, port, token)
    app = app_for(server, token=token, host=host, allow_hosts=allow_hosts)
    shown = f"[{host}]" if ":" in host else host
    say(f"serving MCP on http://{shown}:{port}/mcp (Ctrl-C to stop)")
    say(f"token: {token}  (send it as 'Authorization: Bearer <token>'; also in {path}, readable by you only)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        say(f"warning: --host {host} is not a loopback address: anyone who can reach it and holds the token "
            "can read this agent's memory; the token travels in clear over plain HTTP")
    # uvicorn stops on SIGTERM, then raises it again under the handler it found: make that
    # an exit, so the token file is removed (a default SIGTERM would skip the cleanup)
    previous = signal.signal(signal.SIGTERM, _exit_on_term)

    class Stopping(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # uvicorn waits for every connection to close before the lifespan ends, where
            # the listen streams were closed; a listen stream closes only when the server
            # closes it, so a listening client kept the server from ever stopping: `serve`
            # closes them here
            say("stopping: closing the clients' listen streams, finishing the calls under way "
                "(Ctrl-C again to quit at once)")
            if stopping is not None:
                stopping()
            await super().shutdown(sockets)

    runner = Stopping(uvicorn.Config(app, host=host, port=port, log_level="warning", **fast_parts()))
    try:
        try:
            runner.run()
        except KeyboardInterrupt:  # Ctrl-C, raised again once uvicorn has stopped (as uvicorn.run)
            pass
        if not runner.started:
            raise SystemExit(3)  # as uvicorn.run: it said why on stderr
    finally:
        signal.signal(signal.SIGTERM, previous)
        path.unlink(missing_ok=True)


def fast_parts() -> dict[str, Any]:
    """uvicorn's C HTTP parser and event loop where they are installed (the ``mcp`` extra
    brings both; uvloop does not exist on Windows): with them the front process spends about
    1.4 ms of CPU per request instead of 2 (measured with 8 clients, docs/serving.md)."""
    parts: dict[str, Any] = {}
    try:
        import httptools  # noqa: F401

        parts["http"] = "httptools"
    except ImportError:
        pass
    try:
        import uvloop  # noqa: F401

        parts["loop"] = "uvloop"
    except ImportError:
        pass
    return parts


def _exit_on_term(signum: int, frame: Any) -> None:
    raise SystemExit(0)
