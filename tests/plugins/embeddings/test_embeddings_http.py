"""The HTTP providers (openai, openai-compatible, gemini) against a real HTTP server on
127.0.0.1 that speaks each API (tests/fakes/embeddings_server.py)."""

from __future__ import annotations

import email.utils
import logging
import socket
import time
import traceback
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fakes.embeddings_server import FakeEmbeddingsServer, fake_vector
from soulframe._engine.config import load_config
from soulframe._engine.embedding import EmbeddingError, EmbeddingUnavailableError
from soulframe._engine.model import ConfigError
from soulframe.testing import EmbeddingProviderContract
from soulframe_embeddings.remote import GeminiProvider, OpenAIProvider
from soulframe_embeddings.transport import EmbeddingHTTPError, RetryPolicy

KEY = "sk-test-0123456789abcdefSECRET"


def config(**overrides: Any) -> Any:
    """A real soulframe Config with ``embedding.*`` keys set (``base_url=...``)."""
    return load_config(None, search=False, overrides={f"embedding.{k}": v for k, v in overrides.items()})


def unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingsServer]:
    with FakeEmbeddingsServer(api_key=KEY, dims=8) as srv:
        yield srv


def fast(provider: Any, retries: int = 3) -> Any:
    # keep backoff sleeps short in tests; Retry-After is still honoured
    provider.retry = RetryPolicy(max_retries=retries, backoff=0.01, max_delay=5)
    return provider


def assert_no_key(text: str) -> None:
    assert KEY not in text
    assert KEY[:8] not in text and KEY[-6:] not in text


# --------------------------------------------------------------------------- openai


def test_openai_batches_normalises_and_keeps_order(server: FakeEmbeddingsServer) -> None:
    server.shuffle = True  # data[] comes back reversed; "index" says where each belongs
    p = OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY, batch_size=3))
    texts = [f"note {i}" for i in range(7)]
    vecs = p.embed_documents(texts)
    assert [len(r.json["input"]) for r in server.requests] == [3, 3, 1]
    assert vecs.dtype == np.float32 and vecs.shape == (7, 8)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vecs, np.stack([unit(fake_vector(t, 8)) for t in texts]), atol=1e-6)
    first = server.requests[0]
    assert first.path == "/v1/embeddings"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.json["model"] == "text-embedding-3-small"
    assert first.json["encoding_format"] == "float"
    assert "dimensions" not in first.json
    assert p.dimensions == 8  # learned from the reply
    q = p.embed_query("note 3")
    np.testing.assert_allclose(q, vecs[3], atol=1e-6)


def test_openai_key_from_environment(server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    p = OpenAIProvider(config(base_url=server.openai_base_url))
    assert p.available()
    p.embed_query("x")
    assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_openai_key_from_named_variable(server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_EMBED_KEY", KEY)
    p = OpenAIProvider(config(base_url=server.openai_base_url, api_key_env="MY_EMBED_KEY"))
    p.embed_query("x")
    assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"
    monkeypatch.delenv("MY_EMBED_KEY")
    missing = OpenAIProvider(config(base_url=server.openai_base_url, api_key_env="MY_EMBED_KEY"))
    assert not missing.available()
    assert "$MY_EMBED_KEY" in (missing.unavailable_reason() or "")


def test_openai_without_key_is_unavailable_and_says_how_to_fix() -> None:
    p = OpenAIProvider(config())
    assert not p.available()
    assert "OPENAI_API_KEY" in (p.unavailable_reason() or "")
    with pytest.raises(EmbeddingUnavailableError, match="OPENAI_API_KEY"):
        p.embed_documents(["x"])


def test_requested_dimensions_are_sent_and_known_before_the_first_call(server: FakeEmbeddingsServer) -> None:
    p = OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY, dimensions=5))
    assert p.dimensions == 5
    assert p.model_id == "openai:text-embedding-3-small@5"
    assert p.embed_documents(["a", "b"]).shape == (2, 5)
    assert server.requests[0].json["dimensions"] == 5
    # a known model's size is known without a call
    assert OpenAIProvider(config(api_key=KEY, model="text-embedding-3-large")).dimensions == 3072


def test_retries_429_and_503_then_succeeds(server: FakeEmbeddingsServer) -> None:
    p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY)))
    server.fail_next(429, retry_after="0")
    server.fail_next(503)
    vec = p.embed_query("hello")
    assert len(server.requests) == 3
    np.testing.assert_allclose(vec, unit(fake_vector("hello", 8)), atol=1e-6)


def test_retry_after_is_honoured(server: FakeEmbeddingsServer) -> None:
    p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY)))
    server.fail_next(429, retry_after="1")
    start = time.monotonic()
    p.embed_query("hello")
    assert time.monotonic() - start >= 0.95
    assert len(server.requests) == 2


def test_retry_after_as_an_http_date(server: FakeEmbeddingsServer) -> None:
    p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY)))
    server.fail_next(503, retry_after=email.utils.formatdate(time.time() + 1, usegmt=True))
    p.embed_query("hello")
    assert len(server.requests) == 2


def test_retry_after_longer_than_we_wait_is_an_error_not_an_early_retry(server: FakeEmbeddingsServer) -> None:
    p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY)))
    server.fail_next(429, retry_after="3600")
    with pytest.raises(EmbeddingHTTPError, match="retry after 3600 s") as info:
        p.embed_query("hello")
    assert info.value.status == 429
    assert len(server.requests) == 1


def test_gives_up_after_max_retries(server: FakeEmbeddingsServer) -> None:
    p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY, max_retries=2)), retries=2)
    server.fail_next(503, retry_after="0", times=5)
    with pytest.raises(EmbeddingHTTPError, match="HTTP 503") as info:
        p.embed_query("hello")
    assert info.value.status == 503
    assert "after 3 attempts" in str(info.value)
    assert len(server.requests) == 3


def test_max_retries_comes_from_config(server: FakeEmbeddingsServer) -> None:
    p = OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY, max_retries=0))
    server.fail_next(429, retry_after="0")
    with pytest.raises(EmbeddingHTTPError, match="HTTP 429"):
        p.embed_query("hello")
    assert len(server.requests) == 1


def test_wrong_key_is_a_clear_error_that_never_shows_the_key(
    server: FakeEmbeddingsServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "sk-wrong-9876543210zyxwvuSECRET"
    p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=wrong)))
    with pytest.raises(EmbeddingHTTPError) as info:
        p.embed_query("hello")
    exc = info.value
    assert exc.status == 401
    message = str(exc)
    assert "rejected the API key (HTTP 401)" in message
    assert "embedding.api_key" in message  # where the key came from
    assert "Incorrect API key provided" in message  # the API's own explanation is kept
    everything = "".join(traceback.format_exception(exc)) + repr(p) + str(vars(p)) + caplog.text
    for secret in (wrong, wrong[:8], wrong[-6:]):
        assert secret not in everything
    assert len(server.requests) == 1  # a 401 is not retried


def test_unreachable_endpoint_is_a_clear_error() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = fast(OpenAIProvider(config(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY)), retries=1)
    with pytest.raises(EmbeddingHTTPError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1/embeddings") as info:
        p.embed_query("x")
    assert info.value.status is None
    assert_no_key(str(info.value))


def test_wrong_path_is_a_404_naming_the_settings(server: FakeEmbeddingsServer) -> None:
    p = OpenAIProvider(config(base_url=f"{server.url}/nope", api_key=KEY))
    server.fail_next(404, body={"error": {"message": "no such route"}})
    with pytest.raises(EmbeddingHTTPError, match="404.*embedding.base_url"):
        p.embed_query("x")


def test_malformed_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="embedding.base_url"):
        OpenAIProvider(config(base_url="localhost:1234/v1", api_key=KEY))


def test_malformed_reply_is_an_error(server: FakeEmbeddingsServer) -> None:
    p = OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY))
    server.fail_next(200, body={"unexpected": True})
    with pytest.raises(EmbeddingError, match="unexpected reply"):
        p.embed_query("x")


# --------------------------------------------------------------------------- openai-compatible


def test_openai_compatible_needs_no_key_and_never_borrows_openais(
    server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.api_key = None  # like a local Ollama / LM Studio
    p = OpenAIProvider(config(base_url=server.openai_base_url, model="nomic-embed-text"), compatible=True)
    assert p.available()
    vecs = p.embed_documents(["a", "b"])
    assert vecs.shape == (2, 8)
    req = server.requests[-1]
    assert "authorization" not in req.headers  # the OpenAI key stays with OpenAI
    assert req.json["model"] == "nomic-embed-text"
    host = server.url.removeprefix("http://")
    assert p.model_id == f"openai-compatible:nomic-embed-text@{host}"


def test_openai_compatible_sends_a_configured_key(server: FakeEmbeddingsServer) -> None:
    p = OpenAIProvider(config(base_url=server.openai_base_url, model="m", api_key=KEY), compatible=True)
    p.embed_query("x")
    assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_openai_compatible_without_url_or_model_says_what_is_missing() -> None:
    p = OpenAIProvider(config(model="m"), compatible=True)
    assert not p.available() and "embedding.base_url" in (p.unavailable_reason() or "")
    p = OpenAIProvider(config(base_url="http://127.0.0.1:9/v1"), compatible=True)
    assert not p.available() and "embedding.model" in (p.unavailable_reason() or "")


# --------------------------------------------------------------------------- gemini


def test_gemini_batch_embed_contents(server: FakeEmbeddingsServer) -> None:
    p = GeminiProvider(config(base_url=server.gemini_base_url, api_key=KEY, batch_size=250))
    texts = [f"t{i}" for i in range(230)]
    vecs = p.embed_documents(texts)
    # at most 100 requests per batchEmbedContents call, whatever batch_size says
    assert [len(r.json["requests"]) for r in server.requests] == [100, 100, 30]
    req = server.requests[0]
    assert req.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert req.headers["x-goog-api-key"] == KEY
    assert KEY not in req.path  # the key travels in the header, never in the URL
    assert req.json["requests"][0]["model"] == "models/gemini-embedding-001"
    assert req.json["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"
    np.testing.assert_allclose(vecs[5], unit(fake_vector("RETRIEVAL_DOCUMENT|t5", 8)), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)
    assert vecs.dtype == np.float32


def test_gemini_queries_use_the_query_task_type(server: FakeEmbeddingsServer) -> None:
    p = GeminiProvider(config(base_url=server.gemini_base_url, api_key=KEY, dimensions=6))
    q = p.embed_query("where is the printer")
    sent = server.requests[-1].json["requests"][0]
    assert sent["taskType"] == "RETRIEVAL_QUERY"
    assert sent["outputDimensionality"] == 6
    np.testing.assert_allclose(q, unit(fake_vector("RETRIEVAL_QUERY|where is the printer", 6)), atol=1e-6)


def test_gemini_bad_key_is_reported_without_the_key(server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "AIzaWRONG-key-0123456789abcdef"
    monkeypatch.setenv("GEMINI_API_KEY", wrong)
    p = fast(GeminiProvider(config(base_url=server.gemini_base_url)))
    with pytest.raises(EmbeddingHTTPError, match="API key not valid") as info:
        p.embed_query("x")
    text = "".join(traceback.format_exception(info.value)) + repr(p)
    assert wrong not in text and wrong[:8] not in text
    assert len(server.requests) == 1


def test_gemini_retries_on_503(server: FakeEmbeddingsServer) -> None:
    p = fast(GeminiProvider(config(base_url=server.gemini_base_url, api_key=KEY)))
    server.fail_next(503, retry_after="0", times=2)
    assert p.embed_documents(["a"]).shape == (1, 8)
    assert len(server.requests) == 3


def test_gemini_without_key_is_unavailable() -> None:
    p = GeminiProvider(config())
    assert not p.available()
    assert "GEMINI_API_KEY" in (p.unavailable_reason() or "")


@pytest.mark.parametrize(("provider", "alias"), [(OpenAIProvider, "openai"), (GeminiProvider, "gemini")])
def test_a_missing_key_names_the_keys_command_and_that_command_works(provider: Any, alias: str) -> None:
    """What `doctor` and a search's warning tell a user without a key: `soulframe keys set`
    is the way the install page recommends (a key out of the shell's history and the
    workspace), and doing exactly that makes the provider available."""
    from conftest import run_cli

    reason = provider(config()).unavailable_reason() or ""
    assert f"`soulframe keys set {alias}`" in reason
    assert run_cli("keys", "set", alias, input=f"{KEY}\n").returncode == 0
    assert provider(config()).available()


class TestOpenAIProviderContract(EmbeddingProviderContract):
    """The openai provider, against the fake server, passes the contract a third-party
    provider runs (its unavailable reason and describe() included)."""

    @pytest.fixture
    def provider(self, server: FakeEmbeddingsServer) -> OpenAIProvider:
        p = fast(OpenAIProvider(config(base_url=server.openai_base_url, api_key=KEY, dimensions=8)))
        p.embed_query("learn the dimensions")
        return p
