"""Who may talk to ``soulframe serve --http``: the holder of this run's token, through an
address that names this server.

A port on 127.0.0.1 is open to every user of the machine and to every web page a browser
there visits, so three checks run on every request, whatever the bind address:

* **Host** must name this server (a loopback name, the ``--host`` address, or a name given
  with ``--allow-host``): a DNS-rebinding page reaches 127.0.0.1 under its own name and is
  refused (421);
* **Origin**, when a browser sends one, must be one of those names too (403);
* **Authorization: Bearer <token>** must carry this run's token (401): another local user,
  or a page that guessed the port, has no way to learn it.

The token is made for each run (or taken from ``SOULFRAME_SERVE_TOKEN``, for a host whose
configuration holds a fixed one), printed once on standard error and written to a file only
the owner can read (``<state_dir>/serve/http-<port>.token``, 0600), which is removed when the
server stops.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("soulframe.serve")

TOKEN_ENV = "SOULFRAME_SERVE_TOKEN"
MIN_TOKEN_CHARS = 32
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})


class TokenError(ValueError):
    pass


def make_token(environ: dict[str, str] | None = None) -> str:
    given = (environ if environ is not None else os.environ).get(TOKEN_ENV)
    if given is None:
        return secrets.token_urlsafe(32)
    given = given.strip()
    if len(given) < MIN_TOKEN_CHARS:
        raise TokenError(f"{TOKEN_ENV} holds {len(given)} characters; use at least {MIN_TOKEN_CHARS} "
                         "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    return given


def write_token(state_dir: Path, port: int, token: str) -> Path:
    """The token in a 0600 file in a 0700 directory; the path."""
    from soulframe.kit import ensure_private_dir

    folder = ensure_private_dir(state_dir / "serve")
    path = folder / f"http-{port}.token"
    tmp = folder / f".http-{port}.token.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    names = set(LOOPBACK)
    if bind not in WILDCARD:
        names.add(bind.strip("[]").lower())
    names.update(n.strip().strip("[]").lower() for n in extra if n.strip())
    return frozenset(names)


def _host_name(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):  # [::1]:8765
        return value[1:].split("]", 1)[0]
    if value.count(":") == 1:
        return value.rsplit(":", 1)[0]
    return value


class Guard:
    """ASGI middleware: the three checks, before anything of the MCP app runs."""

    def __init__(self, app: Any, *, token: str, hosts: frozenset[str]) -> None:
        self.app = app
        self.token = token.encode()
        self.hosts = hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        host = _host_name(headers.get("host", ""))
        if host not in self.hosts:
            # the names served stay in the server's log: this answer may be read by the very
            # page that rebinds a name to this port, and --allow-host names are the network's
            log.warning("refused a request for Host %r: this server answers %s (add a name with "
                        "--allow-host)", host, ", ".join(sorted(self.hosts)))
            await _refuse(send, 421, f"refused: Host {host!r} does not name this server (its owner can add "
                                     "a name with soulframe serve --allow-host)")
            return
        origin = headers.get("origin")
        if origin is not None:
            name = (urlsplit(origin).hostname or origin).lower()
            if name not in self.hosts:
                await _refuse(send, 403, f"refused: Origin {origin!r} is not this server")
                return
        given = headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token):
            await _refuse(send, 401, "refused: this server needs this run's token as "
                                     "'Authorization: Bearer <token>' (soulframe serve --http prints it "
                                     "and writes it to <state_dir>/serve/http-<port>.token)",
                          extra=[(b"www-authenticate", b'Bearer realm="soulframe"')])
            return
        if scope.get("method") != "POST":
            # stateless: no server-initiated stream to open (GET: the SDK's would stay open
            # and silent) and no session to end (DELETE: the SDK answers 405 too, yet its
            # Allow named both); the transport lets a server answer 405 for each, and Allow
            # names the one method that is served
            await _refuse(send, 405, "this server answers POST requests to /mcp only: it offers no event "
                                     "stream (GET) and keeps no session to end (DELETE)",
                          extra=[(b"allow", b"POST")])
            return
        # names are case-insensitive (RFC 9110 §4.2.3) and were judged lowercased above; the
        # SDK's own check behind the guard compares the headers as sent, so it refused
        # `Host: MyBox` for `--allow-host MyBox`: it gets them lowercased
        scope = {**scope, "headers": [(k, v.lower()) if k.lower() in (b"host", b"origin") else (k, v)
                                      for k, v in scope.get("headers", ())]}
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (message + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})
