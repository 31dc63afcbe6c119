"""Choosing a chat model by name, as ``llm`` users expect: ``-m NAME`` on every command that
calls one, aliases (``[model] aliases``), and a default set with ``soulframe models default``.

Aliases come from the config's ``[model] aliases`` and from ``soulframe models aliases set``
(a JSON file in the user config dir, as llm keeps ``aliases.json``); the config wins on a name
both define, so a workspace can pin what an alias means for it.

A NAME is an alias, ``provider/model`` (``anthropic/claude-haiku-4-5``,
``openrouter/meta-llama/llama-3.1-8b``: the part before the first ``/`` is a provider only when
a registered chat-model provider has that name), or a bare model id for the configured provider.
The choice overrides ``model.provider`` / ``model.name`` for that run only; everything else in
``[model]`` (timeouts, retries, token limits) still applies, and so do ``base_url`` and the key
while the provider stays the one ``[model]`` names. A NAME that picks another provider sets
them aside (None, with the origin ``-m NAME``): they point at the configured provider's server
and hold its key, and a key meant for one place is never sent to another; the picked
provider's defaults (its server, its key's variable) apply instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from .model import ConfigError

if TYPE_CHECKING:
    from .config import Config


def default_model_path() -> Path:
    from .config import user_config_dir

    return user_config_dir() / "default_model.txt"


def default_model() -> str | None:
    """The model ``soulframe models default NAME`` set, if any."""
    try:
        text = default_model_path().read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


def set_default_model(name: str) -> Path:
    from .workspace import atomic_write, ensure_private_dir

    path = default_model_path()
    ensure_private_dir(path.parent)
    atomic_write(path, name.strip() + "\n")
    return path


def aliases_path() -> Path:
    from .config import user_config_dir

    return user_config_dir() / "aliases.json"


def user_aliases() -> dict[str, str]:
    """The aliases ``soulframe models aliases set`` stored (an unreadable file: none)."""
    import json

    try:
        data = json.loads(aliases_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def set_alias(alias: str, target: str | None) -> Path:
    """Store (or, with ``target=None``, remove) a user-level alias."""
    import json

    from .workspace import atomic_write, ensure_private_dir

    alias, target = alias.strip(), (target or "").strip() or None
    if not alias or "/" in alias or any(c.isspace() for c in alias):
        raise ConfigError(f"alias {alias!r}: use a short name without spaces or '/'")
    current = user_aliases()
    if target is None:
        if current.pop(alias, None) is None:
            raise ConfigError(f"no alias {alias!r} set with `soulframe models aliases set`")
    else:
        current[alias] = target
    path = aliases_path()
    ensure_private_dir(path.parent)
    atomic_write(path, json.dumps(dict(sorted(current.items())), indent=2) + "\n")
    return path


def all_aliases(config: Config) -> dict[str, str]:
    """Every alias in effect: the user's, then the config's over them."""
    return {**user_aliases(), **{str(k): str(v) for k, v in (config.get("model.aliases") or {}).items()}}


def resolve(name: str, providers: Iterable[str], aliases: dict[str, str] | None = None) -> tuple[str | None, str]:
    """``(provider or None, model id)`` for NAME (see the module docstring)."""
    name = name.strip()
    if not name:
        raise ConfigError("-m/--model: the model name is empty")
    seen = set()
    while aliases and name in aliases and name not in seen:  # an alias may name another
        seen.add(name)
        name = str(aliases[name]).strip()
    head, sep, rest = name.partition("/")
    if sep and rest and head in set(providers):
        return head, rest
    return None, name


def choose(config: Config, name: str | None, providers: Iterable[str]) -> Config:
    """``config`` with the model NAME picks; without NAME, the default model when the config
    names none."""
    origin = f"-m {name}"
    if name is None:
        if config.get("model.name") or config.get("model.provider"):
            return config
        name = default_model()
        if name is None:
            return config
        origin = "soulframe models default"
    provider, model = resolve(name, providers, all_aliases(config))
    configured = config.get("model.provider")
    overrides: dict[str, str | None] = {"model__name": model}
    if provider is not None:
        overrides["model__provider"] = provider
    elif not configured and origin == "soulframe models default":
        raise ConfigError(
            f"the default chat model {name!r} (soulframe models default, in {default_model_path()}) "
            f"names no provider: set provider/model with `soulframe models default openai/{model}`, "
            "or set [model] provider in soulframe.toml")
    elif not configured:
        raise ConfigError(
            f"-m {name}: no provider for it: write provider/model (e.g. openai/{model}), or set "
            "[model] provider in soulframe.toml")
    if configured and provider not in (None, configured):
        # [model]'s server and key are the configured provider's (see the module docstring)
        overrides.update(model__base_url=None, model__api_key=None, model__api_key_env=None)
    chosen = config.evolve(**overrides)
    return attrs.evolve(chosen, origins={
        **chosen.origins, **{key.replace("__", "."): origin for key in overrides}})
