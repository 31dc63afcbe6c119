"""A plugin's embedding provider that does not fit the protocol, or whose availability
check raises, is named in one clear message and memory search goes on by keywords — never
an AttributeError from deep inside a search."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from soulframe import Registration, hookimpl
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.plugins import make_plugin_manager


class Half:
    """A provider missing its model_id and embed_query."""

    name = "half"
    dimensions = 4

    def available(self) -> bool:
        return True

    def embed_documents(self, texts: Any) -> Any:
        raise AssertionError("never called: the provider is refused when built")


class Moody(Half):
    model_id = "moody"

    def available(self) -> bool:
        raise RuntimeError("the licence server is down")

    def embed_query(self, text: str) -> Any:
        raise AssertionError("never called: available() fails first")


class Offers:
    @staticmethod
    @hookimpl
    def register_embedding_providers() -> list[Registration[Any]]:
        return [Registration("half", lambda agent: Half(), description="half a provider"),
                Registration("moody", lambda agent: Moody(), description="raises when asked")]


@pytest.mark.parametrize(("provider", "said"), [
    ("half", "embedding provider 'half' (plugin Offers) built a Half, which lacks embed_query, model_id"),
    ("moody", "embedding provider 'moody': available() failed: RuntimeError: the licence server is down"),
])
def test_a_provider_that_does_not_fit_is_named_and_search_goes_on_by_keywords(
        workspace: Path, provider: str, said: str) -> None:
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / "2026-01-02.md").write_text("# 2026-01-02\n- The heron came back to the lake\n")
    agent = Agent(load_config(workspace=workspace, search=False, overrides={"embedding.provider": provider}),
                  pm=make_plugin_manager(plugins=[Offers]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = agent.memory.search("heron")
    assert results.mode == "keyword-only" and "heron" in results[0].snippet
    assert said in (results.notice or "") or any(said in str(w.message) for w in caught), (results.notice, caught)
