"""What ``soulframe ui`` refuses and how it starts: no token, another Host, a form without the
token, paths outside the memory files, changes without --write; the JSON line for scripts, a
port that is taken, --open, and the missing extra. Plain HTTP against the real command."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from ui_support import UI, Client, make_workspace, serving, start_ui, stop


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UI, str]]:
    with serving(tmp_path_factory.mktemp("ui"), None) as running:
        yield running


def test_requests_without_the_token_are_refused(site: tuple[UI, str]) -> None:
    ui, _ = site
    with ui.client(with_token=False) as c:
        for path in ("/", "/prompt", "/memory?q=key", "/file?path=MEMORY.md", "/upkeep"):
            r = c.get(path)
            assert r.status_code == 403 and "token" in r.text, path
        assert c.get("/prompt?token=wrong").status_code == 403
        assert c.get(f"/prompt?token={ui.token}").status_code == 403  # the path carries it, not the query
        assert c.get("/" + "0" * 48 + "/prompt").status_code == 403
        r = c.post("/upkeep/undo", data={"token": "wrong"})
        assert r.status_code == 403
    # another name for this machine (a DNS-rebinding page) is refused even with the token
    r = Client(ui.base).get("/prompt", headers={"Host": "attacker.example"})
    assert r.status_code == 403 and "loopback" in r.text


def test_an_unknown_session_kind_is_refused_by_name(site: tuple[UI, str]) -> None:
    ui, _ = site
    with ui.client() as c:
        for query in ("session=boss", "kind=boss"):
            r = c.get(f"/prompt?{query}")
            assert r.status_code == 400 and "boss" in r.text and "not a session kind" in r.text
        assert c.get("/prompt?session=group").status_code == 200


def test_a_form_posted_without_the_token_is_refused(site: tuple[UI, str]) -> None:
    ui, _ = site
    before = (ui.workspace / "MEMORY.md").read_bytes()
    with ui.client() as c:  # the cookie alone is not enough for a change
        assert c.post("/upkeep/undo", data={}).status_code == 403
    assert (ui.workspace / "MEMORY.md").read_bytes() == before


def test_paths_outside_the_memory_files_are_refused(site: tuple[UI, str], tmp_path: Path) -> None:
    ui, _ = site
    outside = tmp_path / "outside.md"
    outside.write_text("a secret plan\n")
    (ui.workspace / "memory" / "escape.md").symlink_to(outside)
    (ui.workspace / "memory" / "soul.md").symlink_to(ui.workspace / "SOUL.md")
    try:
        with ui.client() as c:
            for path in ("../outside.md", str(outside), "memory/../../outside.md", "SOUL.md",
                         "memory/escape.md", "memory/soul.md", "soulframe.toml"):
                r = c.get("/file", params={"path": path})
                assert r.status_code == 403, (path, r.status_code)
                assert "secret plan" not in r.text and "Calm, precise" not in r.text
            assert c.get("/file", params={"path": "MEMORY.md"}).status_code == 200
    finally:
        (ui.workspace / "memory" / "escape.md").unlink()
        (ui.workspace / "memory" / "soul.md").unlink()


def results(html: str) -> str:
    """The search results of a memory page (the page also lists the owner's index)."""
    found = re.search(r'<section id="results">.*?</section>', html, re.S)
    assert found is not None, html[-2000:]
    return found.group(0)


def test_memory_is_searched_and_opened_as_the_session_the_page_names(site: tuple[UI, str]) -> None:
    """"Why does the group chat not find this?" is answered with what a group's search returns:
    MEMORY.md is the owner's main session's only, so a group neither finds nor opens it."""
    ui, _ = site
    question = {"q": "Prefers tea to coffee", "min_score": "0"}
    with ui.client() as c:
        main = results(c.get("/memory", params=question).text)
        assert "MEMORY.md#L" in main
        group = results(c.get("/memory", params={**question, "kind": "group", "user": "alice"}).text)
        assert "as a group session of alice" in group
        assert "MEMORY.md#L" not in group and "Prefers tea" not in group
        assert "kind=group" in group  # its citations open the file as the group reads it
        cited = re.search(r'href="/[0-9a-f]+(/file\?[^"]*)"', group)
        assert cited is not None and c.get(cited.group(1).replace("&amp;", "&")).status_code == 200
        assert c.get("/file", params={"path": "MEMORY.md", "kind": "group"}).status_code == 403
        assert c.get("/file", params={"path": "MEMORY.md"}).status_code == 200
        r = c.get("/memory", params={**question, "kind": "boss"})
        assert r.status_code == 400 and "not a session kind" in r.text


def test_a_cited_range_past_the_end_of_the_file_is_refused_saying_how_long_it_is(
        site: tuple[UI, str]) -> None:
    ui, _ = site
    lines = (ui.workspace / "MEMORY.md").read_text().count("\n") + 1
    with ui.client() as c:
        past = c.get("/file", params={"path": "MEMORY.md", "from": "99999"})
        assert past.status_code == 400
        assert "past its end" in past.text and "L99999" in past.text
        assert c.get("/file", params={"path": "MEMORY.md", "from": "1", "to": str(lines)}).status_code == 200


def test_read_only_by_default(tmp_path: Path) -> None:
    ws, _ = make_workspace(tmp_path, None)
    ui = start_ui(ws)
    try:
        before = (ws / "MEMORY.md").read_bytes()
        with ui.client() as c:
            page = c.get("/upkeep").text
            assert "read-only" in page and 'disabled title="start the inspector with --write"' in page
            for action in ("/upkeep/apply", "/upkeep/undo", "/quarantine/drop", "/quarantine/release"):
                r = c.post(action, data={"token": ui.token, "id": "q1"})
                assert r.status_code == 403 and "without --write" in r.text, action
        assert (ws / "MEMORY.md").read_bytes() == before
    finally:
        stop(ui)


def test_what_an_action_did_is_shown_by_the_page_it_leads_to_and_nowhere_else(tmp_path: Path) -> None:
    """Another tab (or an error page) rendered between the action and its redirect must not
    show the action's message; the page the redirect names shows it once."""
    import urllib.error
    import urllib.parse
    import urllib.request

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kw: Any) -> None:
            return None

    ws, _ = make_workspace(tmp_path, None)
    ui = start_ui(ws, "--write")
    try:
        body = urllib.parse.urlencode({"token": ui.token}).encode()
        with pytest.raises(urllib.error.HTTPError) as redirect:
            urllib.request.build_opener(Stay).open(
                urllib.request.Request(ui.base + "/upkeep/discard", data=body, method="POST"), timeout=30)
        assert redirect.value.code == 303
        location = redirect.value.headers["Location"]
        with ui.client() as c:
            for elsewhere in ("/memory?k=0", "/prompt", "/upkeep"):
                assert "dry run discarded" not in c.get(elsewhere).text, elsewhere
            shown = Client(ui.origin).get(location)
            assert shown.status_code == 200 and "dry run discarded" in shown.text
            assert "dry run discarded" not in Client(ui.origin).get(location).text  # once
    finally:
        stop(ui)


def test_the_timeline_lists_the_latest_days_and_says_how_many_are_left_out(tmp_path: Path) -> None:
    import datetime as dt

    ws, _ = make_workspace(tmp_path, None)
    first = dt.date(2020, 1, 1)
    for i in range(200):
        day = (first + dt.timedelta(days=i)).isoformat()
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n- walked the dog, day {i}\n")
    total = len(list((ws / "memory").glob("????-??-??.md")))
    ui = start_ui(ws)
    try:
        with ui.client() as c:
            html = c.get("/memory").text
        timeline = html[html.index('id="timeline"'):]
        assert timeline.count("/file?path=memory") == 90
        assert "memory/2020-07-18.md" in timeline  # the latest of the 200 is listed
        assert "memory/2020-01-01.md" not in timeline
        assert f"{total - 90} older daily logs are not listed here" in timeline
    finally:
        stop(ui)


def test_without_the_extra_it_names_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['uvicorn'] = None; from soulframe.cli import main; "
            "sys.argv = ['soulframe', '-w', sys.argv[1], 'ui']; main()")
    ws = tmp_path / "ws"
    run_cli("init", str(ws), "--no-download", check=True)
    # its own interpreter: uvicorn is made unimportable there, not in this one
    out = subprocess.run([sys.executable, "-c", code, str(ws)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "pip install 'soulframe[ui]'" in out.stderr


def test_json_line_for_scripts_and_a_taken_port(tmp_path: Path) -> None:
    ws, _ = make_workspace(tmp_path, None)
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "ui", "--port", "0", "--json"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["host"] == "127.0.0.1" and info["write"] is False and info["port"] > 0
        assert re.fullmatch(rf"http://127\.0\.0\.1:{info['port']}/[0-9a-f]{{48}}/", info["url"])
        # the port is listening as soon as the line is printed; the URL opens the pages
        with Client(info["url"].rstrip("/")) as c:
            assert c.get("/").status_code == 200
        # a port asked for by name that is taken is an error naming it, not another port
        taken = subprocess.run([sys.executable, "-m", "soulframe", "-w", str(ws), "ui", "--port", str(info["port"])],
                               capture_output=True, text=True, timeout=60)
        assert taken.returncode != 0 and f"port {info['port']} on 127.0.0.1 is in use" in taken.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_open_hands_the_tokened_url_to_the_browser(tmp_path: Path) -> None:
    ws, _ = make_workspace(tmp_path, None)
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser.py"
    recorder.write_text(f"import sys, pathlib; pathlib.Path({str(opened)!r}).write_text(sys.argv[1])\n")
    env = {**os.environ, "BROWSER": f"{sys.executable} {recorder} %s"}  # what webbrowser runs
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "ui", "--port", "0", "--json", "--open"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        for _ in range(100):
            if opened.exists() and opened.read_text():
                break
            threading.Event().wait(0.1)
        assert opened.read_text() == info["url"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_open_without_a_browser_says_so(tmp_path: Path) -> None:
    """On a machine without a browser (over SSH, in a container) --open cannot open
    anything: it says so beside the URL instead of silently doing nothing."""
    ws, _ = make_workspace(tmp_path, None)
    no_tools = tmp_path / "empty-bin"
    no_tools.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(BROWSER=str(no_tools / "no-browser"), PATH=str(no_tools))  # nothing webbrowser could run
    proc = subprocess.Popen([sys.executable, "-m", "soulframe", "-w", str(ws), "ui", "--port", "0", "--open"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(3)]  # the URL, read-only, Ctrl-C
        assert lines[0].startswith("soulframe ui for ") and "http://127.0.0.1:" in lines[0]
        ready, _, _ = select.select([proc.stderr], [], [], 15)  # then the browser's answer
        assert ready, f"nothing said about the browser after {lines}"
        assert "no browser could be started here" in proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
