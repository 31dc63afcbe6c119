"""A reader for the JSON5 subset OpenClaw's ``openclaw.json`` uses: ``//`` and ``/* */``
comments, trailing commas, unquoted (identifier) keys, single-quoted strings, hexadecimal
numbers, a leading ``+``, ``Infinity``/``NaN``. Written here rather than depending on a JSON5
package for a one-file, read-only need; an error names the file, the line and the key being
read, as the config loader's errors do.
"""

from __future__ import annotations

import math
import re
from typing import Any

from soulframe import ConfigError

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(
    r"[+-]?(?:0[xX][0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Infinity|NaN)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0",
            "/": "/", "\\": "\\", "'": "'", '"': '"', "\n": ""}


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.s = text.lstrip("\ufeff")
        self.i = 0
        self.where = where
        self.keys: list[str] = []

    # -------------------------------------------------------------- errors
    def line(self, pos: int | None = None) -> int:
        return self.s.count("\n", 0, self.i if pos is None else pos) + 1

    def fail(self, msg: str, pos: int | None = None) -> ConfigError:
        key = ".".join(self.keys)
        at = f" (key {key})" if key else ""
        return ConfigError(f"{self.where} line {self.line(pos)}{at}: invalid JSON5: {msg}")

    # -------------------------------------------------------------- lexing
    def skip(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n\ufeff\u00a0\u2028\u2029":
                self.i += 1
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("a /* comment is never closed")
                self.i = end + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.s[self.i] if self.i < len(self.s) else ""

    # -------------------------------------------------------------- values
    def value(self) -> Any:
        c = self.peek()
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "\"'":
            return self.string()
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, self.i) and not _ident_char(self.s, self.i + len(word)):
                self.i += len(word)
                return val
        m = _NUMBER.match(self.s, self.i)
        if m and m.group(0):
            self.i = m.end()
            return _number(m.group(0))
        if not c:
            raise self.fail("unexpected end of file")
        raise self.fail(f"unexpected character {c!r}")

    def obj(self) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            c = self.peek()
            if c == "}":
                self.i += 1
                return out
            if c in "\"'":
                key = self.string()
            else:
                m = _IDENT.match(self.s, self.i)
                if not m:
                    raise self.fail(f"expected a key or '}}', found {c!r}" if c else "unexpected end of file")
                key = m.group(0)
                self.i = m.end()
            if self.peek() != ":":
                self.keys.append(key)
                raise self.fail("expected ':' after the key")
            self.i += 1
            self.keys.append(key)
            if key in out:
                raise self.fail("the key is given twice")
            out[key] = self.value()
            self.keys.pop()
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c != "}":
                self.keys.append(key)
                raise self.fail(f"expected ',' or '}}' after the value, found {c!r}" if c else "unexpected end of file")

    def arr(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            if self.peek() == "]":
                self.i += 1
                return out
            self.keys.append(f"[{len(out)}]")
            out.append(self.value())
            self.keys.pop()
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c != "]":
                raise self.fail(f"expected ',' or ']', found {c!r}" if c else "unexpected end of file")

    def string(self) -> str:
        quote = self.s[self.i]
        start = self.i
        self.i += 1
        parts: list[str] = []
        s, n = self.s, len(self.s)
        while True:
            if self.i >= n:
                raise self.fail("a string is never closed", start)
            c = s[self.i]
            if c == quote:
                self.i += 1
                return "".join(parts)
            if c == "\n":
                raise self.fail("a line break inside a string (end the line with \\ to continue it)")
            if c == "\\":
                e = s[self.i + 1: self.i + 2]
                if e in _ESCAPES:
                    parts.append(_ESCAPES[e])
                    self.i += 2
                elif e == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", s[self.i + 2: self.i + 6]):
                    parts.append(chr(int(s[self.i + 2: self.i + 6], 16)))
                    self.i += 6
                elif e == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", s[self.i + 2: self.i + 4]):
                    parts.append(chr(int(s[self.i + 2: self.i + 4], 16)))
                    self.i += 4
                else:
                    parts.append(e)
                    self.i += 2
                continue
            parts.append(c)
            self.i += 1


def _ident_char(s: str, i: int) -> bool:
    return i < len(s) and (s[i].isalnum() or s[i] in "_$")


def _number(tok: str) -> int | float:
    sign = -1 if tok.startswith("-") else 1
    body = tok.lstrip("+-")
    if body == "Infinity":
        return sign * math.inf
    if body == "NaN":
        return math.nan
    if body[:2].lower() == "0x":
        return sign * int(body, 16)
    if re.fullmatch(r"\d+", body):
        return sign * int(body)
    return sign * float(body)


def loads(text: str, where: str = "<json5>") -> Any:
    """Parse JSON5 ``text``; ``where`` (a file name) starts every error message."""
    p = _Parser(text, where)
    try:
        value = p.value()
    except RecursionError:
        raise p.fail("nested too deeply") from None
    if p.peek():
        raise p.fail(f"unexpected {p.peek()!r} after the end of the document")
    return value


def key_lines(text: str) -> dict[str, int]:
    """The line each dotted key path is written on (``agents.defaults.workspace`` -> 4), so
    a report about a key can point at it."""
    p = _Parser(text, "<json5>")
    found: dict[str, int] = {}

    def walk(prefix: str) -> None:
        c = p.peek()
        if c == "{":
            p.i += 1
            while p.peek() != "}":
                pos = p.i
                if p.peek() in "\"'":
                    key = p.string()
                else:
                    m = _IDENT.match(p.s, p.i)
                    if not m:
                        return
                    key = m.group(0)
                    p.i = m.end()
                dotted = f"{prefix}{key}"
                found[dotted] = p.line(pos)
                p.peek()
                p.i += 1  # ':'
                walk(dotted + ".")
                if p.peek() == ",":
                    p.i += 1
            p.i += 1
        else:
            p.value()

    try:
        walk("")
    except ConfigError:
        pass
    return found
