"""API keys kept outside the workspace: ``soulframe keys set openai`` stores a key in a 0600
file in the user config dir (``keys.json``), so a workspace kept in git never holds one.

A key is looked up by the environment variable a plugin would read (``OPENAI_API_KEY``); the
short names ``openai``, ``anthropic``, ``gemini`` and ``openrouter`` stand for theirs.
Precedence, the same for every plugin: the config's ``api_key``, else the environment
variable (``api_key_env`` or the provider's default), else this file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .model import SoulframeError

#: short names for the variables soulframe's own providers read
ALIASES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}
PATH_ENV = "SOULFRAME_KEYS_PATH"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def keys_path() -> Path:
    """``$SOULFRAME_KEYS_PATH``, else ``keys.json`` in the user config dir."""
    if os.environ.get(PATH_ENV):
        return Path(os.environ[PATH_ENV]).expanduser()
    from .config import user_config_dir

    return user_config_dir() / "keys.json"


def canonical(name: str) -> str:
    """``openai`` -> ``OPENAI_API_KEY``; any other valid name as given."""
    name = name.strip()
    if name.lower() in ALIASES:
        return ALIASES[name.lower()]
    if not _NAME.fullmatch(name):
        raise SoulframeError(f"key name {name!r}: use letters, digits and '_' (like OPENAI_API_KEY), "
                             f"or one of {', '.join(ALIASES)}")
    return name


def stored_keys(path: Path | None = None) -> dict[str, str]:
    """The keys in the file (name -> key); empty when there is no file."""
    path = path or keys_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SoulframeError(f"{path}: cannot read the keys file ({exc}); fix or remove it") from exc
    if not isinstance(data, dict):
        raise SoulframeError(f"{path}: the keys file must hold a JSON object of name -> key")
    return {str(k): str(v) for k, v in data.items() if v}


def stored_key(name: str) -> str | None:
    """The stored key for ``name`` (or its alias), or ``None``. A broken keys file reads as
    empty here: a missing key then says how to set one, which is the fix either way."""
    try:
        return stored_keys().get(canonical(name))
    except SoulframeError:
        return None


def set_key(name: str, value: str) -> Path:
    """Store ``value`` under ``name``; the file is written atomically, mode 0600, in a 0700
    directory."""
    from .workspace import atomic_write, ensure_private_dir

    value = value.strip()
    if not value:
        raise SoulframeError("the key is empty: nothing stored")
    path = keys_path()
    keys = stored_keys(path)
    keys[canonical(name)] = value
    ensure_private_dir(path.parent)
    atomic_write(path, json.dumps(keys, indent=2, sort_keys=True) + "\n", mode=0o600)
    return path


def remove_key(name: str) -> bool:
    from .workspace import atomic_write

    path = keys_path()
    keys = stored_keys(path)
    if keys.pop(canonical(name), None) is None:
        return False
    atomic_write(path, json.dumps(keys, indent=2, sort_keys=True) + "\n", mode=0o600)
    return True
