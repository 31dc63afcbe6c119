"""When the alternate persona is active: a daily window (``at`` + ``duration``) in the
agent's timezone, windows crossing midnight included, and an optional chance."""

from __future__ import annotations

import datetime as _dt
import hashlib
import random
import re
from typing import Any

import attrs
from soulframe import ConfigError
from soulframe.kit import where

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?)?\s*$", re.I)
_AT = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$")


def parse_duration(text: str, key: str = "soul_evil.duration") -> _dt.timedelta:
    """``"30m"``, ``"1h"``, ``"90s"``, ``"1.5h"``; a bare number is minutes."""
    parts = re.findall(r"\d+(?:\.\d+)?\s*[a-zA-Z]*", str(text))
    if not parts or "".join(p.replace(" ", "") for p in parts) != str(text).replace(" ", ""):
        raise ConfigError(f"{key} = {text!r} — expected a duration like '30m', '1h', '90s' or '1h30m'")
    total = _dt.timedelta()
    for part in parts:
        m = _DURATION.match(part)
        if not m:
            raise ConfigError(f"{key} = {text!r} — expected a duration like '30m', '1h', '90s' or '1h30m'")
        n = float(m.group(1))
        unit = (m.group(2) or "m").lower()
        total += _dt.timedelta(
            seconds=n if unit.startswith("s") else n * 60 if unit.startswith("m") else n * 3600
        )
    if total <= _dt.timedelta(0) or total > _dt.timedelta(days=1):
        raise ConfigError(f"{key} = {text!r} — expected more than 0 and at most 24 hours")
    return total


def parse_at(text: str, key: str = "soul_evil.at") -> _dt.time:
    m = _AT.match(str(text))
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59 or int(m.group(3) or 0) > 59:
        raise ConfigError(f"{key} = {text!r} — expected a time of day HH:MM (24-hour), e.g. '23:30'")
    return _dt.time(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


@attrs.frozen
class Schedule:
    """``soul_evil.*`` as values: a daily window and/or a chance."""

    enabled: bool = False
    file: str = "SOUL_EVIL.md"
    at: _dt.time | None = None
    duration: _dt.timedelta | None = None
    chance: float = 0.0

    @classmethod
    def from_config(cls, config: Any) -> Schedule:
        at_raw = config.get("soul_evil.at")
        dur_raw = config.get("soul_evil.duration")
        if (at_raw is None) != (dur_raw is None):
            missing = "soul_evil.duration" if dur_raw is None else "soul_evil.at"
            raise ConfigError(
                f"{missing} is not set — a soul-evil window needs both soul_evil.at and "
                "soul_evil.duration (e.g. at = '23:30', duration = '30m')"
            )
        chance = float(config.get("soul_evil.chance") or 0.0)
        if not 0.0 <= chance <= 1.0:
            raise ConfigError(f"soul_evil.chance = {chance!r} — expected a number between 0 and 1")
        return cls(
            enabled=bool(config.get("soul_evil.enabled")),
            file=str(config.get("soul_evil.file") or "SOUL_EVIL.md"),
            # the errors name the config file and line the value came from
            at=parse_at(at_raw, where(config, "soul_evil.at")) if at_raw is not None else None,
            duration=(parse_duration(dur_raw, where(config, "soul_evil.duration"))
                      if dur_raw is not None else None),
            chance=chance,
        )

    @property
    def has_window(self) -> bool:
        return self.at is not None and self.duration is not None

    def window_containing(self, now: _dt.datetime) -> tuple[_dt.datetime, _dt.datetime] | None:
        """The window ``now`` falls in (today's, or yesterday's when it crosses midnight)."""
        if self.at is None or self.duration is None:
            return None
        for days_back in (0, 1):
            day = now.date() - _dt.timedelta(days=days_back)
            start = _dt.datetime.combine(day, self.at, tzinfo=now.tzinfo)
            end = start + self.duration
            if start <= now < end:
                return start, end
        return None

    def next_window(self, now: _dt.datetime) -> tuple[_dt.datetime, _dt.datetime] | None:
        """The next window starting after ``now``."""
        if self.at is None or self.duration is None:
            return None
        start = _dt.datetime.combine(now.date(), self.at, tzinfo=now.tzinfo)
        if start <= now:
            start += _dt.timedelta(days=1)
        return start, start + self.duration

    def decide(self, now: _dt.datetime, session_key: str | None) -> str | None:
        """Why the alternate persona is active at ``now`` (``None``: it is not).

        The chance is drawn once per session and day (seeded by the session key), so a
        session does not flip between personas from one prompt to the next.
        """
        if not self.enabled:
            return None
        window = self.window_containing(now)
        if window is not None:
            start, end = window
            return f"window {start:%H:%M}–{end:%H:%M}"
        if self.chance > 0:
            if session_key:
                seed = hashlib.sha256(f"{session_key}|{now.date()}".encode()).digest()
                draw = random.Random(seed).random()
            else:
                draw = random.random()
            if draw < self.chance:
                return f"chance {self.chance:g}"
        return None
