"""The embedding cache (core/soulframe/_engine/embedding.py) and choosing a provider
(``embedding.provider``, ``auto``), with real providers: the fake OpenAI server counts what
actually reaches the API, and the offline model is the real one."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soulframe_embeddings
from fakes.embeddings_server import FakeEmbeddingsServer
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.embedding import (
    NO_PROVIDER_MESSAGE,
    EmbeddingCache,
    EmbeddingUnavailableError,
    InMemoryCacheBackend,
    explain_providers,
    resolve_provider,
    text_hash,
    vector_from_bytes,
    vector_to_bytes,
)
from soulframe._engine.model import UnknownNameError
from soulframe._engine.plugins import collect_named, make_plugin_manager
from soulframe_embeddings.remote import OpenAIProvider

KEY = "sk-cache-test-key-0123456789"


def _model_installed() -> bool:
    from soulframe_embeddings.local import LocalProvider

    return LocalProvider().available()


needs_model = pytest.mark.skipif(not _model_installed(), reason="offline model not installed "
                                 "(soulframe models install)")


def config(**overrides: Any) -> Any:
    return load_config(None, search=False, overrides={k.replace("__", "."): v for k, v in overrides.items()})


@pytest.fixture
def server() -> Iterator[FakeEmbeddingsServer]:
    with FakeEmbeddingsServer(api_key=KEY, dims=8) as srv:
        yield srv


@pytest.fixture
def registry() -> dict[str, Any]:
    """The embedding providers exactly as the installed plugins register them."""
    pm = make_plugin_manager()
    return collect_named(pm, "register_embedding_providers")


def sent_texts(server: FakeEmbeddingsServer) -> list[str]:
    return [t for r in server.requests for t in r.json["input"]]


# --------------------------------------------------------------------------- the cache


def test_unchanged_text_is_never_embedded_twice(server: FakeEmbeddingsServer) -> None:
    provider = OpenAIProvider(config(embedding__base_url=server.openai_base_url, embedding__api_key=KEY))
    cache = EmbeddingCache(InMemoryCacheBackend())
    first = cache.embed_documents(provider, ["alpha", "beta", "alpha"])
    assert sent_texts(server) == ["alpha", "beta"]  # a duplicate in one call: once
    assert np.array_equal(first[0], first[2])
    again = cache.embed_documents(provider, ["beta", "gamma", "alpha"])
    assert sent_texts(server) == ["alpha", "beta", "gamma"]  # only the new text went out
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[2], first[0])
    assert cache.stats.hits == 2 and cache.stats.misses == 3
    assert again.dtype == np.float32 and again.shape == (3, 8)


def test_a_different_model_does_not_reuse_vectors(server: FakeEmbeddingsServer) -> None:
    backend = InMemoryCacheBackend()
    small = OpenAIProvider(config(embedding__base_url=server.openai_base_url, embedding__api_key=KEY))
    large = OpenAIProvider(config(embedding__base_url=server.openai_base_url, embedding__api_key=KEY,
                                  embedding__model="text-embedding-3-large", embedding__dimensions=8))
    EmbeddingCache(backend).embed_documents(small, ["alpha"])
    EmbeddingCache(backend).embed_documents(large, ["alpha"])
    assert [r.json["model"] for r in server.requests] == ["text-embedding-3-small", "text-embedding-3-large"]
    assert len(backend) == 2


def test_cached_vectors_of_the_wrong_size_are_embedded_again(server: FakeEmbeddingsServer) -> None:
    provider = OpenAIProvider(config(embedding__base_url=server.openai_base_url, embedding__api_key=KEY,
                                     embedding__dimensions=8))
    backend = InMemoryCacheBackend()
    backend.put_many(provider.model_id, {text_hash("alpha"): np.ones(4, dtype=np.float32)})
    out = EmbeddingCache(backend).embed_documents(provider, ["alpha"])
    assert out.shape == (1, 8)
    assert sent_texts(server) == ["alpha"]


def test_cache_with_the_offline_model(shared_minilm: Any) -> None:
    provider = shared_minilm
    if not provider.available():
        pytest.skip(provider.unavailable_reason() or "")
    cache = EmbeddingCache(InMemoryCacheBackend())
    texts = ["User prefers dark-mode screenshots", "Alice is allergic to peanuts"]
    a = cache.embed_documents(provider, texts)
    b = cache.embed_documents(provider, texts[::-1])
    assert cache.stats.misses == 2 and cache.stats.hits == 2
    np.testing.assert_array_equal(a, b[::-1])
    assert cache.embed_documents(provider, []).shape == (0, 384)


def test_vector_bytes_round_trip() -> None:
    v = np.array([0.5, -1.25, 3.0], dtype=np.float32)
    blob = vector_to_bytes(v)
    assert len(blob) == 12 and blob[:4] == np.float32(0.5).tobytes()  # little-endian float32
    np.testing.assert_array_equal(vector_from_bytes(blob), v)
    assert vector_from_bytes(blob).dtype == np.float32


# --------------------------------------------------------------------------- choosing


@needs_model
def test_auto_picks_the_offline_model_first(registry: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = resolve_provider(Agent(config()), registry)
    assert provider is not None and provider.name == "local"


def test_auto_falls_through_to_a_configured_api(registry: dict[str, Any], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config(embedding__local__model_path=str(tmp_path))  # no weights there
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    provider = resolve_provider(Agent(cfg), registry)
    assert provider is not None and provider.name == "gemini"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = resolve_provider(Agent(cfg), registry)
    assert provider is not None and provider.name == "openai"  # earlier in auto_order


def test_auto_with_nothing_available_says_so_loudly(registry: dict[str, Any], tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    cfg = config(embedding__local__model_path=str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="soulframe.embedding"):
        assert resolve_provider(Agent(cfg), registry) is None
    assert NO_PROVIDER_MESSAGE in caplog.text
    assert "soulframe models install" in NO_PROVIDER_MESSAGE


def test_auto_order_is_configurable(registry: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = resolve_provider(Agent(config(embedding__auto_order=["openai", "local"])), registry)
    assert provider is not None and provider.name == "openai"


def test_none_switches_semantic_search_off_quietly(registry: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert resolve_provider(Agent(config(embedding__provider="none")), registry) is None
    assert caplog.text == ""


def test_an_explicit_provider_that_cannot_run_is_an_error(registry: dict[str, Any]) -> None:
    with pytest.raises(EmbeddingUnavailableError, match="'openai' is not available.*OPENAI_API_KEY"):
        resolve_provider(Agent(config(embedding__provider="openai")), registry)


def test_an_unknown_provider_names_the_choices(registry: dict[str, Any]) -> None:
    with pytest.raises(UnknownNameError, match=r"'opnai'.*did you mean 'openai'.*gemini.*local"):
        resolve_provider(Agent(config(embedding__provider="opnai")), registry)


@needs_model
def test_explicit_local_with_a_config_file(registry: dict[str, Any], tmp_path: Path) -> None:
    cfg_file = tmp_path / "soulframe.toml"
    cfg_file.write_text('[embedding]\nprovider = "local"\nbatch_size = 4\n')
    cfg = load_config(cfg_file)
    provider = resolve_provider(Agent(cfg), registry)
    assert provider is not None and provider.name == "local"
    assert provider.batch_size == 4  # type: ignore[attr-defined]


def test_registrations_cover_every_documented_provider() -> None:
    names = [r.name for r in soulframe_embeddings.register_embedding_providers()]
    assert names == ["local", "multilingual", "openai", "openai-compatible", "gemini", "none"]


@needs_model
def test_explain_providers_reports_each_one(registry: dict[str, Any]) -> None:
    rows = {r["name"]: r for r in explain_providers(Agent(config()), registry)}
    assert rows["local"]["available"] is True
    assert rows["local"]["dimensions"] == 384
    assert rows["local"]["weights"].endswith("model")
    assert rows["openai"]["available"] is False and "OPENAI_API_KEY" in rows["openai"]["reason"]
    assert rows["none"]["available"] is False


class Broken:
    """A third-party provider gone wrong in one way: NaN rows, or vectors of another size
    than it declares."""

    name = "broken"
    model_id = "broken-1"
    dimensions = 4

    def __init__(self, wrong: str = "") -> None:
        self.wrong = wrong

    def available(self) -> bool:
        return True

    def embed_documents(self, texts):
        if self.wrong == "nan":
            return np.full((len(texts), 4), np.nan, dtype=np.float32)
        if self.wrong == "size":
            return np.full((len(texts), 3), 3 ** -0.5, dtype=np.float32)
        return np.full((len(texts), 4), 0.5, dtype=np.float32)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


@pytest.mark.parametrize(("wrong", "said"), [
    ("nan", "embedding provider 'broken' returned a vector holding NaN or infinity"),
    ("size", "embedding provider 'broken' returned vectors of 3 dimensions; it declares 4"),
])
def test_a_broken_providers_vectors_are_refused_not_cached(wrong: str, said: str) -> None:
    """NaN vectors went into the index and into the cache, keyed by the model id: fixing the
    provider (same model id) still served them, every re-index."""
    from soulframe._engine.embedding import EmbeddingError

    backend = InMemoryCacheBackend()
    with pytest.raises(EmbeddingError, match=re.escape(said)):
        EmbeddingCache(backend).embed_documents(Broken(wrong), ["the heron"])
    assert len(backend) == 0


def test_a_vector_a_broken_provider_cached_before_is_embedded_again() -> None:
    backend = InMemoryCacheBackend()
    backend.put_many("broken-1", {text_hash("the heron"): np.full(4, np.nan, dtype=np.float32)})
    cache = EmbeddingCache(backend)
    vectors = cache.embed_documents(Broken(), ["the heron"])
    assert np.isfinite(vectors).all() and cache.stats.misses == 1


def test_a_broken_query_vector_leaves_search_keyword_only_and_says_why(workspace: Path) -> None:
    from soulframe import Registration
    from soulframe.testing import Provides, make_agent

    (workspace / "MEMORY.md").write_text("# Memory\n- The heron visits the pond.\n")
    provider = Broken()
    offered = Provides(embedding_providers=[Registration("broken", lambda agent: provider)])
    with make_agent(workspace, plugins=[offered], seed=False, embedding__provider="broken",
                    memory__min_score=0.0) as agent:
        agent.memory.sync()
        provider.wrong = "size"  # the documents were fine; the question's vector is not
        hits = agent.memory.search("heron")
    assert [h.path for h in hits] == ["MEMORY.md"]
    assert "embedding provider 'broken' returned vectors of 3 dimensions; it declares 4" in hits.notice
