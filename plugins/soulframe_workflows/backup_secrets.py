"""What a backup commit must not take: a config file holding a literal secret (an API key, a
token, a DSN with a password, a base_url carrying one) and a Markdown file holding a secret
(a key pasted into a memory or context file by hand). Names and places only, never values."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from soulframe.kit import looks_secret

CONFIG_NAMES: tuple[str, ...] = ("soulframe.toml", "soulframe.json")
_SECRET_KEY = re.compile(r"(^|[._])(api_key|apikey|token|secret|password)$", re.I)


def config_secrets(path: Path) -> list[str]:
    """Keys of a soulframe config file that hold a literal secret (an API key, a token, a
    DSN with a password). Names only: the values are never shown."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, ValueError):
        return []
    found: list[str] = []

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{prefix}[{i}]")
        elif isinstance(value, str) and value.strip():
            leaf = prefix.rsplit(".", 1)[-1]
            if _SECRET_KEY.search(leaf) and not leaf.endswith("_env"):
                found.append(prefix)
            elif leaf == "dsn" and urlsplit(value).password:
                found.append(prefix)
            elif looks_secret(value):
                # a key in a base_url (user:password@, ?code=, ?k=) or a value shaped like one
                found.append(prefix)

    if isinstance(data, dict):
        walk(data, "")
    return found


def file_secrets(root: Path, names: Iterable[str]) -> list[str]:
    """``file line N (format)`` for every secret in the Markdown files of ``names`` (those a
    commit would take): a key pasted into a memory or context file by hand. Where only,
    never the secret."""
    from soulframe.kit import secret_lines

    out = []
    for name in sorted({n for n in names if n.endswith(".md")}):
        path = root / name
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > 4 << 20:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += [f"{name} line {line} ({kind})" for line, kind in secret_lines(text)]
    return out


def secret_configs(root: Path) -> list[tuple[str, list[str]]]:
    out = []
    for name in CONFIG_NAMES:
        path = root / name
        if path.is_file():
            keys = config_secrets(path)
            if keys:
                out.append((name, keys))
    return out


