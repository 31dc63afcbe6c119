"""The chat-model clients, and nothing else.

* ``register_chat_models``: ``openai``, ``openai-compatible`` (OpenRouter, LM Studio, Ollama,
  vLLM by ``base_url``), ``anthropic`` and a few presets, over stdlib HTTP with tool calling,
  timeouts and retry;
* ``register_config_keys``: the ``model.*`` keys they read.

The loops that call a model (flush, boot, heartbeat, summon) are other plugins' and get
their model through the registry (:func:`soulframe.kit.chat_model_for`). Nothing heavy
is imported here: a client module is loaded when a model is built.
"""

from __future__ import annotations

from soulframe import ChatModel, K, Key, Registration, hookimpl


@hookimpl
def register_chat_models() -> list[Registration[ChatModel]]:
    from .models import registrations

    return registrations()


@hookimpl
def register_config_keys() -> dict[str, Key]:
    NONE = type(None)
    return {
        # ----------------------------------------------------------------- chat model
        "model.provider": K(None, "openai, openai-compatible, anthropic (presets: openrouter, ollama, lmstudio, vllm)", types=(str, NONE)),
        "model.name": K(None, "model id", types=(str, NONE)),
        "model.base_url": K(None, "endpoint (OpenRouter, LM Studio, Ollama, vLLM ...)", types=(str, NONE)),
        "model.api_key": K(None, "API key (prefer api_key_env)", types=(str, NONE)),
        "model.api_key_env": K(None, "name of the environment variable holding the key", types=(str, NONE)),
        "model.timeout_s": K(60.0, "request timeout"),
        "model.max_retries": K(3, "retries on 429 and 5xx"),
        "model.max_tokens": K(None, "reply token limit (Anthropic requires one: 4,096 when unset)", types=(int, NONE)),
        "model.temperature": K(None, "sampling temperature; unset = the API's default", types=(float, int, NONE)),
        "model.anthropic_version": K("2023-06-01", "anthropic-version header of the Messages API"),
    }
