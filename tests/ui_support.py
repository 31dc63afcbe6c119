"""Running ``soulframe ui`` as a user does, for the inspector's tests: the real command in a
subprocess on a free port, a cookie-keeping HTTP client, and a workspace with something on
every page."""

from __future__ import annotations

import contextlib
import datetime as dt
import http.cookiejar
import os
import queue
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cli_runner import run_cli

MEMORY = "# MEMORY.md\n\n- Works on the platform team.\n- Prefers tea to coffee.\n- Lives in Berlin.\n"
FACT = "- The Lisbon office door code changes every Monday; ask Marta for it."
SOUL = "# SOUL.md\n\nCalm, precise, kind.\n"


class UI:
    """A running `soulframe ui`: its URL with the token, its process, its workspace."""

    def __init__(self, proc: subprocess.Popen[str], url: str, workspace: Path) -> None:
        self.proc, self.url, self.workspace = proc, url, workspace
        #: the server, and the server with the token (every page's path starts with it)
        self.origin = "/".join(url.split("/", 3)[:3])
        self.token = url.rstrip("/").rsplit("/", 1)[1]
        self.base = f"{self.origin}/{self.token}"

    def client(self, *, with_token: bool = True) -> Client:
        return Client(self.base if with_token else self.origin)


class Response:
    def __init__(self, status_code: int, text: str) -> None:
        self.status_code, self.text = status_code, text


class Client:
    """A browser-like HTTP client: keeps cookies, follows redirects; ``path`` is relative
    to ``base``."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                data: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> Response:
        url = self.base + path + (("&" if "?" in path else "?") + urllib.parse.urlencode(params) if params else "")
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
        if body is not None:
            req.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with self.opener.open(req, timeout=60) as r:
                return Response(r.status, r.read().decode())
        except urllib.error.HTTPError as e:
            return Response(e.code, e.read().decode())

    def get(self, path: str, **kw: Any) -> Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Response:
        return self.request("POST", path, **kw)


def start_ui(workspace: Path, *args: str) -> UI:
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(workspace), "ui", "--port", "0", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stderr or ()], daemon=True).start()
    seen = []
    while True:
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            proc.kill()
            raise AssertionError(f"`soulframe ui` printed no URL: {seen}") from None
        seen.append(line)
        m = re.search(r"http://127\.0\.0\.1:\d+/[0-9a-f]{48}/", line)
        if m:
            break
    ui = UI(proc, m.group(0), workspace)
    for _ in range(100):  # the socket is bound before the URL is printed; wait for the app
        try:
            urllib.request.urlopen(ui.origin + "/static/ui.css", timeout=2).close()
            return ui
        except urllib.error.URLError:
            threading.Event().wait(0.1)
    raise AssertionError("`soulframe ui` never listened")


def stop(ui: UI) -> None:
    ui.proc.terminate()
    try:
        ui.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        ui.proc.kill()


def make_workspace(root: Path, llm_url: str | None) -> tuple[Path, str]:
    """A workspace with identity files, curated memory, a daily log five days old holding a
    fact that was recalled (so consolidation has a candidate), a skill, and a chat model."""
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    ws = root / "agent"
    run_cli("init", str(ws), "--no-download", check=True)
    (ws / "SOUL.md").write_text(SOUL)
    (ws / "MEMORY.md").write_text(MEMORY)
    day = (dt.date.today() - dt.timedelta(days=5)).isoformat()
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "memory" / f"{day}.md").write_text(
        f"# {day}\n\n- Lunch at the canteen.\n{FACT}\n- Tomas keeps his spare house key under the blue flowerpot.\n"
        "- The staging API key is sk-live1234567890abcdefSECRET\n")
    skill = ws / "skills" / "trip-planner"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: trip-planner\ndescription: Plan train trips across Europe\n---\n"
                                    "# Trip planner\n\n## Booking trains\n")
    config = ['state_dir = "state"', "", "[memory.consolidate]", "min_recalls = 1", "min_queries = 1"]
    if llm_url:
        config += ["", "[model]", 'provider = "openai-compatible"', 'name = "m"', f'base_url = "{llm_url}"',
                   "max_retries = 0"]
    (ws / "soulframe.toml").write_text("\n".join(config) + "\n")
    agent = Agent(load_config(workspace=ws))
    assert any("door code" in h.snippet for h in agent.memory.search("Lisbon office door code", min_score=0))
    agent.close()
    return ws, f"memory/{day}.md#L4"


@contextlib.contextmanager
def serving(root: Path, llm_url: str | None) -> Iterator[tuple[UI, str]]:
    """A `soulframe ui --write` over a fresh workspace (see :func:`make_workspace`), with HOME
    in ``root`` so no personal skill or setting of the machine shows up; yields it and the
    citation of the recalled fact."""
    old = {k: os.environ.get(k) for k in ("HOME", "XDG_CONFIG_HOME")}
    (root / "home").mkdir()
    os.environ.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "home" / ".config"))
    try:
        ws, citation = make_workspace(root, llm_url)
        ui = start_ui(ws, "--write")
        try:
            yield ui, citation
        finally:
            stop(ui)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

