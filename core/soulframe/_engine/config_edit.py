"""``soulframe config set`` / ``unset``: change one key of a TOML config file in place.

A person's config file holds their comments, their order and their layout, so it is edited
line by line, never re-serialised: the line that assigns the key gets its new value (its
trailing comment kept), or a new line goes at the end of the key's table (a new table at the
end of the file when there is none). The result is validated as the file is when loaded —
the same keys, types and ranges, with the plugins' keys — before it replaces the old file
(written beside it, then renamed), so a bad value never reaches the file.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from .model import ConfigError

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r'^(\s*"?[A-Za-z0-9_.\-]+"?\s*=\s*)(.*)$')


def parse_value(text: str) -> Any:
    """``VALUE`` as typed on the command line: a TOML value (``3``, ``true``, ``[1, 2]``,
    ``"quoted"``) when it parses as one, else the text itself as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def toml_literal(value: Any) -> str:
    """``value`` written as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{value!r}: not a finite number")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items()) + "}"
    raise ConfigError(f"{value!r}: cannot be written as a TOML value")


def _tables(lines: list[str]) -> list[tuple[int, str]]:
    """(line index, table name) of every table header."""
    out = []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            out.append((i, ".".join(p.strip().strip('"') for p in m.group(1).split("."))))
    return out


def _assignment(lines: list[str], dotted: str) -> int | None:
    """The index of the line that assigns ``dotted`` (in any of TOML's spellings)."""
    table = ""
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            table = ".".join(p.strip().strip('"') for p in m.group(1).split("."))
            continue
        a = _ASSIGN.match(line)
        if a:
            key = ".".join(p.strip().strip('"') for p in a.group(1).split("=")[0].split("."))
            if (f"{table}.{key}" if table else key) == dotted:
                return i
    return None


def _value_part(line: str) -> tuple[str, str]:
    """(the value, a trailing comment with its spacing) of an assignment line; a value that
    continues on the next lines cannot be replaced in place."""
    m = _ASSIGN.match(line)
    assert m is not None
    rest = m.group(2)
    for cut in [j for j, ch in enumerate(rest) if ch == "#"] + [len(rest)]:
        value = rest[:cut].rstrip()
        try:
            tomllib.loads(f"v = {value}")
        except tomllib.TOMLDecodeError:
            continue
        return value, rest[len(value):]
    raise ConfigError(f"{line.strip()!r}: the value goes on over several lines; edit it by hand")


def edited(text: str, dotted: str, value: Any | None) -> str:
    """``text`` with ``dotted`` set to ``value`` (``None``: removed)."""
    lines = text.splitlines()
    at = _assignment(lines, dotted)
    if at is not None:
        if value is None:
            del lines[at]
        else:
            m = _ASSIGN.match(lines[at])
            assert m is not None
            _, comment = _value_part(lines[at])
            lines[at] = m.group(1) + toml_literal(value) + comment
        return "\n".join(lines) + "\n"
    if value is None:
        raise ConfigError(f"{dotted} is not set in this file")
    table, _, leaf = dotted.rpartition(".")
    new_line = f"{leaf} = {toml_literal(value)}"
    headers = _tables(lines)
    if not table:
        first = headers[0][0] if headers else len(lines)
        # after the top-level keys and comments, before the first table
        end = first
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = [new_line, ""] if end < len(lines) and _HEADER.match(lines[end]) else [new_line]
        return "\n".join(lines) + "\n"
    for n, (i, name) in enumerate(headers):
        if name == table:
            end = headers[n + 1][0] if n + 1 < len(headers) else len(lines)
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1
            lines.insert(end, new_line)
            return "\n".join(lines) + "\n"
    body = "\n".join(lines).rstrip("\n")
    return (body + "\n\n" if body else "") + f"[{table}]\n{new_line}\n"


def write_validated(path: Path, text: str, validate: Any) -> None:
    """Write ``text`` beside ``path``, let ``validate(tmp_path)`` load it (raising
    :class:`ConfigError` for a bad value), then rename it over ``path``. The file keeps its
    permissions; a new one is private (it may come to hold a key)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            validate(tmp)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(str(tmp), str(path))) from None
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
