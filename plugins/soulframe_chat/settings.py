"""The ``[model]`` table of soulframe.toml, resolved into :class:`ModelSettings`.

::

    [model]
    provider = "openai-compatible"      # openai | openai-compatible | anthropic | openrouter | ollama | lmstudio | vllm
    name = "llama3.1:8b"                # the model id the API expects
    base_url = "http://localhost:11434/v1"
    api_key_env = "OLLAMA_KEY"          # the NAME of an environment variable (preferred)
    # api_key = "..."                   # or the key itself (kept out of every log and error)
    timeout_s = 60
    max_retries = 3

The key is held in a :class:`~soulframe.kit.Secret`, whose ``repr`` and ``str`` are ``***``,
so it cannot leak through a log line, an exception message or an attrs ``repr``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
from soulframe.kit import Secret, key_source, redact_endpoint, resolve_api_key

from .errors import ChatConfigError

if TYPE_CHECKING:
    from soulframe import Settings


@attrs.frozen
class Preset:
    """What a provider name implies when the config does not say."""

    wire: str  # "openai" or "anthropic": the HTTP API spoken
    base_url: str | None
    key_env: str | None
    key_required: bool


#: provider name -> defaults. ``openai-compatible`` has no default URL: it must be configured.
PRESETS: dict[str, Preset] = {
    "openai": Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", True),
    "openai-compatible": Preset("openai", None, None, False),
    "openrouter": Preset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True),
    "ollama": Preset("openai", "http://127.0.0.1:11434/v1", None, False),
    "lmstudio": Preset("openai", "http://127.0.0.1:1234/v1", None, False),
    "vllm": Preset("openai", "http://127.0.0.1:8000/v1", None, False),
    "anthropic": Preset("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", True),
}

KNOWN_KEYS = frozenset(
    {
        "provider",
        "name",
        "base_url",
        "api_key",
        "api_key_env",
        "timeout_s",
        "max_retries",
        "max_tokens",
        "temperature",
        "context_window",
        "anthropic_version",
    }
)


@attrs.frozen
class ModelSettings:
    provider: str
    name: str
    base_url: str
    api_key: Secret | None = None
    #: where the key came from, for messages: "environment variable OPENAI_API_KEY" or
    #: "[model] api_key"
    key_source: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 3
    max_tokens: int | None = None
    temperature: float | None = None
    context_window: int | None = None
    anthropic_version: str = "2023-06-01"

    @property
    def wire(self) -> str:
        return PRESETS[self.provider].wire if self.provider in PRESETS else "openai"


def model_table(config: Mapping[str, Any] | Settings | None) -> Mapping[str, Any]:
    """The ``[model]`` table of a config: a plain mapping (``{"model": {...}}`` or the table
    itself), or soulframe's :class:`~soulframe.Config` (read key by key, so its
    defaults apply)."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        value = config.get("model", config)
        return value if isinstance(value, Mapping) else {}
    table: dict[str, Any] = {}
    for key in KNOWN_KEYS:
        value = config.get(f"model.{key}")
        if value is not None:
            table[key] = value
    return table


def picked_by(config: Mapping[str, Any] | Settings | None) -> str | None:
    """``-m NAME`` when ``-m`` picked another provider than the one ``[model]`` configures:
    the core then sets ``[model]``'s base_url and key aside, with that origin, since they are
    the configured provider's; the picked provider's own defaults apply instead."""
    if config is None or isinstance(config, Mapping):
        return None
    origin = config.origin("model.api_key_env")
    return origin if origin.startswith("-m ") else None


def _number(table: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ChatConfigError(f"[model] {key} must be a number, got {type(value).__name__}")
    if value < 0:
        raise ChatConfigError(f"[model] {key} must not be negative, got {value}")
    return kind(value)


def resolve_settings(
    table: Mapping[str, Any],
    *,
    provider: str | None = None,
    environ: Mapping[str, str] | None = None,
    picked: str | None = None,
) -> ModelSettings:
    """Validate a ``[model]`` table. Raises :class:`ChatConfigError` naming the key at fault
    (and the environment variable, never its value). ``picked`` is :func:`picked_by`'s
    ``-m NAME``, for messages that must not send the user back to ``[model]``."""
    provider = str(provider or table.get("provider") or "").strip()
    if not provider:
        raise ChatConfigError(
            "no chat model configured: set [model] provider (openai, openai-compatible, "
            "anthropic, ...) and [model] name in soulframe.toml"
        )
    preset = PRESETS.get(provider, PRESETS["openai-compatible"])
    name = str(table.get("name") or "").strip()
    if not name:
        raise ChatConfigError(f"[model] name (the model id) is required for provider {provider!r}")
    base_url = str(table.get("base_url") or preset.base_url or "").strip().rstrip("/")
    if not base_url and picked:
        raise ChatConfigError(
            f"{picked}: provider {provider!r} has no default base_url, and [model] base_url "
            "belongs to the provider [model] configures; configure this one in [model] instead"
        )
    if not base_url:
        raise ChatConfigError(
            f"[model] base_url is required for provider {provider!r} "
            "(e.g. http://127.0.0.1:11434/v1 for Ollama)"
        )
    if not base_url.startswith(("http://", "https://")):
        raise ChatConfigError(
            f"[model] base_url must start with http:// or https://, got {redact_endpoint(base_url)!r}"
        )

    key, env_name = resolve_api_key(
        table.get("api_key"), table.get("api_key_env"), preset.key_env, environ=environ
    )
    source: str | None = None
    if key is not None:
        source = key_source(env_name, environ=environ) if env_name else "[model] api_key"
    elif table.get("api_key_env"):
        raise ChatConfigError(
            f"[model] api_key_env names the environment variable {env_name}, which is not set"
        )
    if key is None and preset.key_required and picked:
        raise ChatConfigError(
            f"{picked}: provider {provider!r} needs its own API key ([model]'s is for the "
            "provider [model] configures, and a key is never sent to another): set the "
            f"environment variable {preset.key_env} or store it with "
            f"`soulframe keys set {preset.key_env}`"
        )
    if key is None and preset.key_required:
        raise ChatConfigError(
            f"provider {provider!r} needs an API key: set the environment variable "
            f"{preset.key_env}, store it with `soulframe keys set {preset.key_env}`, or name "
            "another variable in [model] api_key_env"
        )
    max_retries = _number(table, "max_retries", int, 3)
    return ModelSettings(
        provider=provider,
        name=name,
        base_url=base_url,
        api_key=key,
        key_source=source,
        timeout_s=_number(table, "timeout_s", float, 60.0),
        max_retries=max_retries,
        max_tokens=_number(table, "max_tokens", int, None),
        temperature=_number(table, "temperature", float, None),
        context_window=_number(table, "context_window", int, None),
        anthropic_version=str(table.get("anthropic_version") or "2023-06-01"),
    )
