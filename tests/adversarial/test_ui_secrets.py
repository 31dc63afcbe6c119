"""The inspector's credential stays with the inspector, and its pages show no secret.

* Another server on another port of 127.0.0.1 (a real one, recording what it receives) is
  visited by the same real browser after the inspector's page: nothing it receives carries
  the token, since the token lives in the page's path, never in a cookie (cookies ignore
  ports). Requests marked as coming from another origin or site are refused even with the
  token.
* Every secret format of the shared pattern list, written by hand into a memory file, is
  masked on ``/file``, in ``/memory`` snippets and on the prompt page."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.redirect_server import RedirectServer
from ui_support import UI, Client, serving

CHROMIUM = os.environ.get("SOULFRAME_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: one of each format (none is a live key), and what of it must never show
SECRETS = {
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEf12",
    "gitlab": "glpat-xT7bQ9mZ2kL4vN8pR1sW",
    "npm": "npm_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3G5h",
    "sendgrid": "SG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFgH",
    "twilio": "SK0123456789abcdef0123456789abcdef",
    "telegram": "123456789:AAFh3kL9mN2pQ4rS6tU8vW0xY1zA3bC5dE7",
    "bearer": "Bearer abcdefghijklmnopqrstuvwxyz0123",
    "password": "password: Tr0ub4dor&3",
    "router": "the password for the router is Zebra123!",
    "aws": "AKIAIOSFODNN7EXAMPLQ",
    "github": "ghp_R2d2C3p0BB8Lukeskywalker12345",
    "slack": "xoxb-2048-4096-Ab9Cd8Ef7Gh6",
    "openai": "sk-proj-Zq81vXa0KfLw3nQe7TtY2mBs",
}


def needle(kind: str) -> str:
    value = SECRETS[kind]
    return value.split(" ")[-1][4:]  # the part after a prefix the mask may keep


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UI, str]]:
    with serving(tmp_path_factory.mktemp("ui"), None) as running:
        ui = running[0]
        lines = [f"- {kind} note: {value} (rotate monthly)" for kind, value in SECRETS.items()]
        (ui.workspace / "memory" / "2026-01-05.md").write_text("# 2026-01-05\n\n" + "\n".join(lines) + "\n")
        yield running


def test_every_secret_format_is_masked_on_every_page(site: tuple[UI, str], adversary) -> None:
    ui, _ = site
    with ui.client() as c:
        pages = {
            "/file": c.get("/file", params={"path": "memory/2026-01-05.md"}).text,
            "/memory": c.get("/memory", params={"q": "note rotate monthly", "k": "20", "min_score": "0"}).text,
            "/prompt": c.get("/prompt").text,
        }
    assert "stripe note" in pages["/file"] and "rotate monthly" in pages["/memory"]
    for where, html in pages.items():
        for kind in SECRETS:
            with adversary.attempt(f"ui {where}: {kind}") as a:
                a.leaked(needle(kind) in html)


PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"


def test_a_private_key_over_many_lines_is_masked_whole_on_the_file_page(site: tuple[UI, str], adversary) -> None:
    """A PEM block spans lines; masking each line on its own would show every line but the
    first."""
    ui, _ = site
    block = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *[PEM_BODY[i:] + PEM_BODY[:i] for i in range(8)],
                       "-----END RSA PRIVATE KEY-----"])
    (ui.workspace / "memory" / "2026-01-06.md").write_text(f"# 2026-01-06\n\nthe deploy key:\n{block}\nend\n")
    with ui.client() as c:
        html = c.get("/file", params={"path": "memory/2026-01-06.md"}).text
        reversed_range = c.get("/file", params={"path": "memory/2026-01-06.md", "from": "9", "to": "3"})
    with adversary.attempt("ui /file: a PEM private key over ten lines") as a:
        assert "the deploy key:" in html and "end" in html
        a.leaked(PEM_BODY[10:30] in html or "END RSA PRIVATE KEY" in html)
    assert reversed_range.status_code == 400 and "ends before it starts" in reversed_range.text


def test_a_request_from_another_origin_is_refused_even_with_the_token(site: tuple[UI, str], adversary) -> None:
    ui, _ = site
    port = ui.origin.rsplit(":", 1)[1]
    other = f"http://127.0.0.1:{int(port) + 1}"
    for headers in ({"Origin": other}, {"Origin": "null"}, {"Sec-Fetch-Site": "same-site"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Host": f"127.0.0.1:{int(port) + 1}"}):
        with adversary.attempt(f"ui request with {headers}") as a:
            r = Client(ui.base).get("/memory", params={"q": "door code"}, headers=headers)
            a.refused(r.status_code == 403)
            a.leaked(r.status_code != 403 or "door code" in r.text.lower())
    assert Client(ui.base).get("/memory", headers={"Origin": ui.origin}).status_code == 200


def test_another_port_of_this_machine_never_gets_the_token(site: tuple[UI, str], adversary) -> None:
    if CHROMIUM is None:
        if os.environ.get("SOULFRAME_REQUIRE_BROWSER"):
            pytest.fail("no chromium binary")
        pytest.skip("no chromium binary (Debian's `chromium` package; .ci/run installs it)")
    from playwright.sync_api import sync_playwright

    ui, _ = site
    with RedirectServer() as other, sync_playwright() as p:
        other.answer("/", {"page": "a local web app on another port"})
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page: Any = browser.new_page()
            page.goto(ui.url)
            page.goto(ui.base + "/memory?q=door+code")
            assert "door code" in page.content().lower()
            page.goto(other.url + "/")  # the user visits another local page
            with adversary.attempt("ui token sent to another port of 127.0.0.1") as a:
                assert other.requests
                seen = " ".join(f"{r.path} {r.headers}" for r in other.requests)
                a.leaked(ui.token in seen)
            # and that page cannot use what a cookie would have carried: there is none
            assert page.context.cookies() == []
        finally:
            browser.close()


def test_docs_state_the_real_guarantee() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "ui.md").read_text()
    assert "for that port only" not in text
    assert "no cookie" in text.lower()
