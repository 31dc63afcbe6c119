"""The chat-model registrations. An agent gets its configured model through the registry
(:func:`soulframe.kit.chat_model_for`), never by importing this module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from soulframe import ChatModel, Registration

from .settings import PRESETS, model_table, picked_by, resolve_settings

if TYPE_CHECKING:
    from soulframe import AgentLike

DESCRIPTIONS = {
    "openai": "OpenAI chat completions (api.openai.com)",
    "openai-compatible": "any chat-completions endpoint, by [model] base_url (LM Studio, Ollama, vLLM, llama.cpp ...)",
    "openrouter": "OpenRouter (chat completions, OPENROUTER_API_KEY)",
    "ollama": "Ollama's OpenAI-compatible endpoint (127.0.0.1:11434)",
    "lmstudio": "LM Studio's OpenAI-compatible endpoint (127.0.0.1:1234)",
    "vllm": "vLLM's OpenAI-compatible endpoint (127.0.0.1:8000)",
    "anthropic": "Anthropic Messages API",
}


def build_chat_model(config: Any, provider: str | None = None) -> ChatModel:
    """A chat model from a config's ``[model]`` table (``provider`` overrides its provider)."""
    settings = resolve_settings(model_table(config), provider=provider, picked=picked_by(config))
    if settings.wire == "anthropic":
        from .anthropic_client import AnthropicChatModel

        return AnthropicChatModel(settings)
    from .openai_client import OpenAIChatModel

    return OpenAIChatModel(settings)


def _factory(provider: str) -> Any:
    def factory(agent: AgentLike) -> ChatModel:
        return build_chat_model(agent.config, provider)

    factory.__name__ = f"build_{provider.replace('-', '_')}_chat_model"
    return factory


def registrations() -> list[Registration[ChatModel]]:
    return [Registration(name, _factory(name), DESCRIPTIONS.get(name, "")) for name in PRESETS]
