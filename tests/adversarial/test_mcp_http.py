"""``soulframe serve --http`` answers only the holder of this run's token, through a Host and
Origin that name this server, whatever the bind address: another user of the machine, a web
page doing DNS rebinding, or a page that guessed the port gets nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import httpx2
import pytest
from mcp_servers import HttpServer, http_server, make_workspace, token_file

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def post(server: HttpServer, headers: dict[str, str], host: str | None = None) -> httpx2.Response:
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    if host is not None:
        h["Host"] = host
    return httpx2.post(server.url, content=json.dumps(LIST_TOOLS), headers=h, timeout=30)


@pytest.mark.parametrize("bind", ["127.0.0.1", "0.0.0.0"])
def test_no_token_no_foreign_host_no_foreign_origin(workspace: Path, adversary, bind: str) -> None:
    make_workspace(workspace)
    with http_server(workspace, host=bind) as server:
        cases = [
            ("no token", {}, None, 401),
            ("a wrong token", {"Authorization": "Bearer " + "x" * 43}, None, 401),
            ("the token in another scheme", {"Authorization": f"Basic {server.token}"}, None, 401),
            ("a rebinding page's Host", server.headers(), f"attacker.example:{server.port}", 421),
            ("a foreign Origin", {**server.headers(), "Origin": "http://attacker.example"}, None, 403),
            ("a foreign Origin with a loopback-looking name",
             {**server.headers(), "Origin": "http://127.0.0.1.attacker.example"}, None, 403),
        ]
        for what, headers, host, status in cases:
            with adversary.attempt(f"serve --http --host {bind}: {what}") as a:
                answer = post(server, headers, host)
                a.refused(answer.status_code == status)
                a.leaked(answer.status_code == 200 or "memory_get" in answer.text)
                assert answer.status_code == status, (what, answer.status_code, answer.text)
        # the holder of the token, from this machine's own page, is served
        ok = post(server, {**server.headers(), "Origin": f"http://127.0.0.1:{server.port}"})
        assert ok.status_code == 200 and "memory_get" in ok.text
        # a GET asks for an event stream a stateless server does not offer: answered at once
        got = httpx2.get(server.url, headers={**server.headers(), "Accept": "text/event-stream"}, timeout=10)
        assert got.status_code == 405 and "POST" in got.headers.get("allow", "")


def test_the_token_file_is_the_owners_alone_and_goes_with_the_server(workspace: Path) -> None:
    make_workspace(workspace)
    with http_server(workspace) as server:
        where = token_file(workspace, server.port)
        assert stat.S_IMODE(where.stat().st_mode) == 0o600
        assert stat.S_IMODE(where.parent.stat().st_mode) == 0o700
    assert not where.exists()
    assert server.proc.stderr is not None
    said = server.proc.stderr.read()
    assert said.count(server.token) == 1 and str(where) in said  # printed once, with where it is kept


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another local user needs root")
def test_another_local_user_is_refused(workspace: Path, adversary) -> None:
    """The issue's repro: user nobody called memory_get MEMORY.md on a loopback server."""
    make_workspace(workspace)
    script = (
        "import json, urllib.request, urllib.error, sys\n"
        "req = urllib.request.Request(sys.argv[1], data=json.dumps({'jsonrpc': '2.0', 'id': 1, "
        "'method': 'tools/call', 'params': {'name': 'memory_get', 'arguments': {'path': 'MEMORY.md'}}}).encode(),"
        " headers={'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream'})\n"
        "try:\n    print(urllib.request.urlopen(req, timeout=30).status)\n"
        "except urllib.error.HTTPError as e:\n    print(e.code)\n"
        "try:\n    open(sys.argv[2]).read(); print('read-token')\n"
        "except OSError:\n    print('no-token')\n"
    )
    with http_server(workspace) as server:
        where = token_file(workspace, server.port)
        out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3",
                              "-c", script, server.url, str(where)],
                             capture_output=True, text=True, timeout=60, cwd="/")
        with adversary.attempt("another local user calls memory_get MEMORY.md") as a:
            status, token = out.stdout.split()
            a.refused(status == "401")
            a.leaked(status == "200" or token == "read-token")
            assert (status, token) == ("401", "no-token"), out.stderr


def test_a_name_given_with_allow_host_is_served_and_no_other(workspace: Path, adversary) -> None:
    make_workspace(workspace)
    with http_server(workspace, "--allow-host", "agent.lan", host="0.0.0.0") as server:
        ok = post(server, {**server.headers(), "Origin": f"http://agent.lan:{server.port}"}, f"agent.lan:{server.port}")
        assert ok.status_code == 200 and "memory_get" in ok.text
        for host in (f"agent.lan.attacker.example:{server.port}", f"attacker.example:{server.port}", ""):
            with adversary.attempt(f"serve --http --allow-host agent.lan: Host {host!r}") as a:
                answer = post(server, server.headers(), host)
                a.refused(answer.status_code in (400, 421))
                a.leaked(answer.status_code == 200)
                # a rebinding page reads this answer: it learns no name the server answers to
                a.leaked("agent.lan" in answer.text.replace(host.rsplit(":", 1)[0], ""))


def test_host_and_origin_names_are_compared_without_case(workspace: Path, adversary) -> None:
    """Host names are case-insensitive (RFC 9110): the name exactly as given to --allow-host,
    or a loopback name in capitals, is served; a foreign name in any case is not."""
    make_workspace(workspace)
    with http_server(workspace, "--allow-host", "MyBox", "--workers", "0") as server:
        for host, origin in ((f"MyBox:{server.port}", f"http://MyBox:{server.port}"),
                             (f"mybox:{server.port}", None),
                             (f"LOCALHOST:{server.port}", f"http://LOCALHOST:{server.port}"),
                             ("Localhost", "HTTP://Localhost"),
                             (f"127.0.0.1:{server.port}", f"http://LocalHost:{server.port}")):
            headers = {**server.headers(), **({"Origin": origin} if origin else {})}
            answer = post(server, headers, host)
            assert answer.status_code == 200 and "memory_get" in answer.text, (host, origin, answer.text)
        for host, origin in ((f"ATTACKER.example:{server.port}", None),
                             (f"MyBox.Attacker.Example:{server.port}", None),
                             (f"MyBox:{server.port}", "http://Attacker.Example")):
            with adversary.attempt(f"serve --http --allow-host MyBox: Host {host!r}, Origin {origin!r}") as a:
                answer = post(server, {**server.headers(), **({"Origin": origin} if origin else {})}, host)
                a.refused(answer.status_code in (403, 421))
                a.leaked(answer.status_code == 200)
