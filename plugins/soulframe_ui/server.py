"""The inspector's web app: routes, the token guard, rendering, and ``run``.

Every handler runs on the server's one event-loop thread and calls the agent directly: it is
a single-user local tool, and one thread keeps the agent's store connections where they were
opened.
"""

from __future__ import annotations

import hmac
import secrets
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import jinja2
import uvicorn
from soulframe import PROMPT_MODES, SESSION_KINDS, PathEscapeError, SoulframeError
from soulframe.kit import redact_urls
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from . import memory_page, prompt_page, skills_page, upkeep_page
from .prompt_page import BadRequest

if TYPE_CHECKING:
    # the inspector's pages show the engine's own view: the whole agent, not AgentLike
    from soulframe import Agent
    from soulframe.kit import PluginManager

HERE = Path(__file__).parent
DEFAULT_PORT = 8765
LOOPBACK_NAMES = ("127.0.0.1", "localhost")
#: no script, style and images from this server only, no framing, forms post back here only
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    # the path holds the token: a Referer goes to this server only. (Not no-referrer: with it
    # a browser sends "Origin: null" on this server's own form posts, which Guard refuses.)
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def _mask(value: Any) -> Any:
    # every string a template prints passes here: nothing shaped like a secret reaches a page.
    # Markup (a macro's output) was masked piece by piece when the macro rendered.
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return redact_urls(value)
    return value


def templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             finalize=_mask, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda x: f"{max(0.0, min(float(x or 0), 1.0)) * 100:.1f}"
    return env


class Guard:
    """Refuses what did not come from this run's pages, before any route runs.

    The credential is the token in the first segment of the path (``/<token>/prompt``): every
    link and form of a page carries it, and a browser sends a URL's path only to that URL's
    server. There is no cookie, because cookies ignore ports: one set by this server would
    be sent to every other server on 127.0.0.1, which could then replay it. Also refused: a
    ``Host`` that is not this server (a DNS-rebinding page), and a request a browser marks as
    coming from another origin (``Origin``, ``Sec-Fetch-Site``: a page on another port of
    127.0.0.1 is the same *site* but another origin).
    """

    def __init__(self, app: Any, token: str, port: int = 0) -> None:
        self.app = app
        self.token = token
        self.port = port

    def _refuse(self, status: int, text: str) -> Response:
        return _plain(status, text)

    def _check(self, scope: dict[str, Any]) -> Response | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        raw = headers.get("host") or ""
        if raw.startswith("["):  # [::1]:8765
            host, _, port = raw[1:].partition("]")
            port = port.removeprefix(":")
        else:
            host, _, port = raw.partition(":")
        if host not in LOOPBACK_NAMES or (self.port and port and port != str(self.port)):
            return self._refuse(403, f"refused: Host {headers.get('host', '')!r} is not this server's "
                                     "loopback address")
        origin = headers.get("origin")
        if origin is not None and origin not in self._origins():
            return self._refuse(403, f"refused: a request from another origin ({origin})")
        if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            return self._refuse(403, "refused: a request from another site or another port of this machine")
        return None

    def _origins(self) -> set[str]:
        port = f":{self.port}" if self.port else ""
        return {f"http://{name}{port}" for name in LOOPBACK_NAMES}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._check(scope)
        path: str = scope.get("path", "")
        if refusal is None and not path.startswith("/static/"):
            first, _, rest = path.lstrip("/").partition("/")
            if not hmac.compare_digest(first.encode(), self.token.encode()):
                refusal = self._refuse(403, "refused: this page needs the URL with the token that "
                                            "`soulframe ui` printed when it started")
            else:
                scope = {**scope, "path": "/" + rest, "raw_path": ("/" + rest).encode()}
        if refusal is not None:
            await refusal(scope, receive, send)
            return

        async def secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                names = {k.decode("latin-1").lower() for k, _ in message.get("headers", [])}
                extra = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()
                         if k.lower() not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, secured)


def _secure(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _plain(status: int, text: str) -> Response:
    return _secure(Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8"))


def create_app(agent: Agent, *, token: str, write: bool = False, pm: PluginManager | None = None,
               port: int = 0) -> Starlette:
    """The inspector for ``agent``. ``token`` is the first segment of every path
    (``/<token>/prompt``, see :class:`Guard`); ``write`` allows the buttons that change files."""
    env = templates()
    # every link and form of a page starts with it (see Guard); hex, so the masking of every
    # printed string leaves it whole
    base = "/" + token
    env.globals["base"] = base
    state: dict[str, Any] = {"pending": None}
    #: what each action said, shown once by the page its redirect names (``?done=ID``): a
    #: message kept for "the next page" would land in another tab, or on an error page
    results: dict[str, str] = {}

    def page(request: Request, name: str, code: int = 200, **facts: Any) -> HTMLResponse:
        said = results.pop(request.query_params.get("done", ""), None)
        flash = [said] if said is not None else []
        html = env.get_template(name).render(
            agent=agent, write=write, token=token, here=request.scope["path"], flash=flash,
            session_kinds=SESSION_KINDS, prompt_modes=PROMPT_MODES, **facts)
        return HTMLResponse(html, status_code=code)

    def handled(fn: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                return fn(request)
            except (PathEscapeError, _memory_path_error()) as exc:
                return page(request, "error.html", 403, error=str(exc))
            except (BadRequest, SoulframeError) as exc:
                return page(request, "error.html", 400, error=str(exc))
        return endpoint

    def index(request: Request) -> Response:
        return RedirectResponse(f"{base}/prompt", status_code=303)

    def prompt(request: Request) -> Response:
        session, mode, budget = prompt_page.session_from(request.query_params)
        facts = prompt_page.prompt_facts(agent, session, mode, budget)
        return page(request, "prompt.html", **facts, form=dict(request.query_params))

    def prompt_diff(request: Request) -> Response:
        qp = request.query_params
        a, mode_a, budget = prompt_page.session_from(qp, "a_")
        b, mode_b, _ = prompt_page.session_from(qp, "b_")
        pa = agent.system_prompt(a, mode=mode_a, budget_tokens=budget)
        pb = agent.system_prompt(b, mode=mode_b, budget_tokens=budget)
        return page(request, "diff.html", **prompt_page.prompt_diff(pa, pb), form=dict(qp))

    def memory(request: Request) -> Response:
        return page(request, "memory.html", search=memory_page.search_facts(agent, request.query_params),
                    **memory_page.index_facts(agent))

    def file(request: Request) -> Response:
        try:
            facts = memory_page.file_facts(agent, request.query_params)
        except BadRequest:
            raise
        except SoulframeError as exc:  # not a memory file, private, or leading out: refused
            return page(request, "error.html", 403, error=str(exc))
        return page(request, "file.html", **facts)

    def upkeep(request: Request) -> Response:
        return page(request, "upkeep.html", pending=state["pending"], **upkeep_page.upkeep_facts(agent))

    def skills(request: Request) -> Response:
        return page(request, "skills.html", **skills_page.skills_facts(agent, request.query_params),
                    **(skills_page.plugin_facts(pm) if pm is not None else {"plugins": [], "plugin_problems": []}))

    def action(fn: Callable[[dict[str, str]], str], *, changes: bool = True,
               back: str = "/upkeep") -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            form = await _form(request)
            if not hmac.compare_digest(form.get("token", "").encode(), token.encode()):
                return _plain(403, "refused: a form from another page (no token)")
            if changes and not write:
                return page(request, "error.html", 403,
                            error="read-only: this inspector was started without --write, so it changes nothing")
            try:
                said = fn(form)
            except SoulframeError as exc:
                said = f"refused: {exc}"
            done = secrets.token_hex(8)
            results[done] = said
            while len(results) > 32:  # redirects nobody followed
                results.pop(next(iter(results)))
            return RedirectResponse(f"{base}{back}?done={done}", status_code=303)
        return endpoint

    def dry_run(form: dict[str, str]) -> str:
        from soulframe.memorykit import consolidate

        result = consolidate(agent, dry_run=True)
        state["pending"] = result if result.status == "dry-run" else None
        return "; ".join(result.messages + ([result.refused] if result.refused else [])) or result.status

    def apply(form: dict[str, str]) -> str:
        from soulframe.memorykit import apply_reviewed

        pending = state["pending"]
        if pending is None:
            raise SoulframeError("no dry run to apply: run one first")
        state["pending"] = None
        result = apply_reviewed(agent, pending)
        return "; ".join(result.messages)

    def discard(form: dict[str, str]) -> str:
        state["pending"] = None
        return "dry run discarded; nothing was written"

    def undo(form: dict[str, str]) -> str:
        from soulframe.memorykit import undo_last

        return "; ".join(undo_last(agent).messages)

    def release(form: dict[str, str]) -> str:
        from soulframe.memorykit import Quarantine
        from soulframe.memorykit import release as release_entry

        entry = Quarantine.for_agent(agent).get(form.get("id", ""))
        if upkeep_page.holds_secret(entry):
            # the page never shows such a text, and a write nobody has read is not released
            raise SoulframeError(f"{entry.id} holds a secret, which this page does not show; review it with "
                                 f"`soulframe memory quarantine show {entry.id}` and release it there")
        return f"released {entry.id} into {release_entry(agent, entry.id)}"

    def drop(form: dict[str, str]) -> str:
        from soulframe.memorykit import Quarantine

        e = Quarantine.for_agent(agent).drop(form.get("id", ""))
        return f"dropped {e.id} (was going to {e.target})"

    routes = [
        Route("/", handled(index)),
        Route("/prompt", handled(prompt)),
        Route("/prompt/diff", handled(prompt_diff)),
        Route("/memory", handled(memory)),
        Route("/file", handled(file)),
        Route("/upkeep", handled(upkeep)),
        Route("/skills", handled(skills)),
        Route("/upkeep/dry-run", action(dry_run, changes=False), methods=["POST"]),
        Route("/upkeep/apply", action(apply), methods=["POST"]),
        Route("/upkeep/discard", action(discard, changes=False), methods=["POST"]),
        Route("/upkeep/undo", action(undo), methods=["POST"]),
        Route("/quarantine/release", action(release), methods=["POST"]),
        Route("/quarantine/drop", action(drop), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard, token=token, port=port)])


async def _form(request: Request) -> dict[str, str]:
    """A posted form's fields. The pages post small url-encoded forms only, so they are
    parsed here rather than with starlette's multipart parser (one dependency fewer)."""
    if not (request.headers.get("content-type") or "").startswith("application/x-www-form-urlencoded"):
        return {}
    body = await request.body()
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


def _memory_path_error() -> type[Exception]:
    from soulframe.memorykit import MemoryPathError

    return MemoryPathError


def listen(preferred: int | None) -> socket.socket:
    """A socket listening on 127.0.0.1: on ``preferred`` (default 8765) if it is free, else on
    any free port, except when the user asked for that port by name. Bound here, before the
    URL is printed, so the printed port is the one served (no window for another process to
    take it) and a client that connects at once waits in the backlog instead of failing."""
    want = DEFAULT_PORT if preferred is None else preferred
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", want))
    except OSError:
        if preferred is not None:
            sock.close()
            raise SoulframeError(f"port {preferred} on 127.0.0.1 is in use; choose another "
                                 "with --port N (0: any free port)") from None
        sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def run(agent: Agent, *, port: int | None, open_browser: bool, write: bool, as_json: bool = False,
        pm: PluginManager | None = None, echo: Callable[[str], None] | None = None) -> None:
    """Serve the inspector on 127.0.0.1 until interrupted. The URL with the token goes to
    stderr for a person, or with ``as_json`` as one JSON line on stdout for a script."""
    import json

    import click

    sock = listen(port)
    chosen = int(sock.getsockname()[1])
    # hex: no "-" or "_", so no stretch of it can look like a credential to the page's masking
    token = secrets.token_hex(24)
    app = create_app(agent, token=token, write=write, pm=pm, port=chosen)
    url = f"http://127.0.0.1:{chosen}/{token}/"
    say = echo or (lambda line: click.echo(line, err=True))
    if as_json:
        click.echo(json.dumps({"url": url, "host": "127.0.0.1", "port": chosen, "write": write,
                               "agent": agent.id, "workspace": str(agent.root)}))
    else:
        say(f"soulframe ui for {agent.id} ({agent.root}): {url}")
        say("read-write: apply, undo, release and drop are on" if write
            else "read-only (start with --write to allow apply, undo, release and drop)")
        say("Ctrl-C to stop")
    if open_browser:
        import webbrowser

        if not webbrowser.open(url):
            # a server over ssh or in a container has no browser to start: without this
            # line --open just seemed to do nothing
            say("--open: no browser could be started here; open the URL above in a browser "
                "on this machine (an SSH tunnel to its port works too)")
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
