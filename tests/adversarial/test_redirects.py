"""A key never follows a redirect to another origin. Two real HTTP servers on 127.0.0.1 on
different ports: the configured API answers with a redirect (every status, every provider,
chat and embeddings, a key in a header, in the URL's query or as ``user:password@``) whose
Location is the other server, or the same host on another port, or another scheme. Nothing
reaches the other server; the user gets one line naming where the redirect pointed. A
redirect within the API's own origin is still followed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.embeddings_server import FakeEmbeddingsServer
from fakes.redirect_server import RedirectServer
from soulframe._engine.config import load_config
from soulframe._engine.model import SoulframeError

KEY = "sk-proj-Rd1rEcTk3yZq81vXa0KfLw3nQ"
STATUSES = (301, 302, 303, 307, 308)


def _embeddings(provider: str, base_url: str) -> Callable[[], Any]:
    from soulframe_embeddings.remote import GeminiProvider, OpenAIProvider

    cfg = load_config(None, search=False, overrides={
        "embedding.base_url": base_url, "embedding.api_key": KEY, "embedding.max_retries": 0,
        "embedding.model": "m"})
    cls = GeminiProvider if provider == "gemini" else OpenAIProvider
    return lambda: cls(cfg).embed_query("where is the spare key")  # type: ignore[call-arg]


def _chat(provider: str, base_url: str) -> Callable[[], Any]:
    from soulframe_chat.models import build_chat_model

    cfg = load_config(None, search=False, overrides={
        "model.provider": provider, "model.name": "m", "model.base_url": base_url,
        "model.api_key": KEY, "model.max_retries": 0})
    model = build_chat_model(cfg)
    return lambda: model.chat([{"role": "user", "content": "hello"}], timeout=20)


CLIENTS = {
    "openai embeddings": lambda u: _embeddings("openai", u + "/v1"),
    "gemini embeddings": lambda u: _embeddings("gemini", u + "/v1beta"),
    "openai-compatible chat": lambda u: _chat("openai-compatible", u + "/v1"),
    "anthropic chat": lambda u: _chat("anthropic", u),
}


def _credentials(seen: Any) -> list[str]:
    return [v for k, v in seen.headers.items() if KEY in v or k in ("authorization", "x-api-key", "x-goog-api-key")]


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("client", list(CLIENTS))
def test_no_redirect_to_another_port_carries_the_key(adversary, client: str, status: int) -> None:
    with RedirectServer() as api, RedirectServer() as other:
        api.redirect(status, other.url + "/v1/collect")
        call = CLIENTS[client](api.url)
        with adversary.attempt(f"{client}: HTTP {status} to another port") as a:
            with pytest.raises(SoulframeError) as info:
                call()
            a.refused()
            message = str(info.value)
            assert "another origin" in message and other.url in message, message
            assert KEY not in message
            a.leaked(bool(other.requests))
        assert api.requests and _credentials(api.requests[0])  # the key went to the API itself


@pytest.mark.parametrize("where", ["scheme", "host", "absolute-port", "relative-scheme"])
def test_other_origins_of_every_shape_are_refused(adversary, where: str) -> None:
    with RedirectServer() as api, RedirectServer() as other:
        port = other.url.rsplit(":", 1)[1]
        location = {
            "scheme": f"https://127.0.0.1:{api.url.rsplit(':', 1)[1]}/v1/embeddings",  # a downgrade's mirror
            "host": f"http://localhost:{port}/v1/embeddings",
            "absolute-port": f"{other.url}/v1/embeddings",
            "relative-scheme": f"//127.0.0.1:{port}/v1/embeddings",  # scheme-relative
        }[where]
        api.redirect(307, location)
        with adversary.attempt(f"redirect to another {where}") as a:
            with pytest.raises(SoulframeError, match="another origin"):
                _embeddings("openai", api.url + "/v1")()
            a.refused()
            a.leaked(bool(other.requests))


def test_a_key_in_the_query_or_userinfo_does_not_follow_either(adversary) -> None:
    with RedirectServer() as api, RedirectServer() as other:
        api.redirect(302, other.url + "/v1/embeddings")
        host = api.url.removeprefix("http://")
        for base in (f"http://alice:{KEY}@{host}/v1", f"{api.url}/v1?key={KEY}"):
            with adversary.attempt("redirect of a URL carrying its key") as a:
                cfg = load_config(None, search=False, overrides={
                    "embedding.base_url": base, "embedding.max_retries": 0, "embedding.model": "m",
                    "embedding.api_key": "unused-but-set-0000"})
                from soulframe_embeddings.remote import OpenAIProvider

                with pytest.raises(SoulframeError) as info:
                    OpenAIProvider(cfg).embed_query("x")
                a.refused()
                assert KEY not in str(info.value)
                a.leaked(bool(other.requests))


def test_heartbeat_with_a_stored_anthropic_key_does_not_follow(cli, workspace: Path, adversary) -> None:
    cli("init", str(workspace), "--no-download", check=True)
    (workspace / "HEARTBEAT.md").write_text("# HEARTBEAT\n- check the backup job\n")
    cli("keys", "set", "anthropic", "--value", KEY, check=True)
    with RedirectServer() as api, RedirectServer() as other:
        api.redirect(302, other.url + "/v1/messages")
        (workspace / "soulframe.toml").write_text(
            f'[model]\nprovider = "anthropic"\nname = "m"\nbase_url = "{api.url}"\nmax_retries = 0\n')
        with adversary.attempt("heartbeat: anthropic key redirected to another port") as a:
            out = cli("-vv", "-w", str(workspace), "heartbeat")
            adversary.traceback("heartbeat", out.stderr)
            assert out.returncode != 0 and "another origin" in out.stdout + out.stderr, out.stderr
            a.refused()
            assert api.requests[0].headers.get("x-api-key") == KEY
            a.leaked(bool(other.requests) or KEY in out.stdout + out.stderr)


def test_memory_index_does_not_send_the_key_to_the_redirect(cli, workspace: Path, adversary) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "2026-03-01.md").write_text("- ordered oat milk for the office\n")
    with RedirectServer() as api, FakeEmbeddingsServer(dims=8) as other:
        api.redirect(308, other.openai_base_url + "/embeddings")
        (workspace / "soulframe.toml").write_text(
            f'[embedding]\nprovider = "openai-compatible"\nmodel = "nomic"\nmax_retries = 0\n'
            f'base_url = "{api.url}/v1"\napi_key = "{KEY}"\n')
        (workspace / "soulframe.toml").chmod(0o600)
        with adversary.attempt("memory index: embeddings redirected to another port") as a:
            out = cli("-w", str(workspace), "memory", "index", "--json")
            adversary.traceback("memory index", out.stderr)
            assert "another origin" in out.stdout + out.stderr, out.stdout + out.stderr
            a.refused()
            a.leaked(bool(other.requests) or KEY in out.stdout + out.stderr)


@pytest.mark.parametrize("status", STATUSES)
def test_a_redirect_within_the_origin_is_followed(status: int) -> None:
    with RedirectServer() as api:
        api.redirect(status, "/v2/chat/completions")
        api.answer("/v2/chat/completions", {
            "id": "c1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "hello from the moved route"}}]})
        reply = _chat("openai-compatible", api.url + "/v1")()
        assert reply.text == "hello from the moved route"
        moved = api.requests[1]
        # the same request again, body and key included, on the server that was configured
        assert moved.method == "POST" and moved.path == "/v2/chat/completions" and b"hello" in moved.body
        assert moved.headers.get("authorization") == f"Bearer {KEY}"


def test_a_redirect_loop_ends_with_an_error() -> None:
    from soulframe._engine.http import RetryPolicy, post_json

    with RedirectServer() as api:
        api.redirect(308, "/again")
        with pytest.raises(SoulframeError, match="more than 5 redirects"):
            post_json(api.url + "/again", {"x": 1}, retry=RetryPolicy(max_retries=0))
        assert len(api.requests) == 6
