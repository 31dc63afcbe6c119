"""Switching on soulframe's loggers for a person watching: ``soulframe -v ...`` (info),
``-vv`` (debug), or ``SOULFRAME_LOG=debug|info|warning``. Everything goes to stderr, through
a filter that masks secrets: the values of API keys soulframe could send (the environment
variables providers read, the keys file) and anything shaped like a key or a password in a
URL, so ``-vv`` output can be pasted into an issue.
"""

from __future__ import annotations

import logging
import os
import re
import sys

ENV = "SOULFRAME_LOG"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}

#: a bearer token or a key handed over as ``key: value`` in a header or a log line
_HEADER = re.compile(r"(?i)\b(bearer|x-api-key|api[_-]?key|authorization)([=: ]+)(?:bearer\s+)?[^\s&\"',;]{6,}")
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|DSN)", re.I)


def known_secrets() -> list[str]:
    """Values that must never be shown: secret-named environment variables and stored keys."""
    found = [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]
    try:
        from .keys import stored_keys

        found += list(stored_keys().values())
    except Exception:  # an unreadable keys file must not break logging
        pass
    return found


def mask_secrets(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with known secret values, URL credentials and secret-shaped strings
    replaced by ``***`` (the shapes are :mod:`soulframe._engine.redaction`'s, shared by every
    place that shows text)."""
    from .http import redact
    from .redaction import redact_urls

    text = redact(text, *(known_secrets() if secrets is None else secrets))
    text = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    return redact_urls(text)


class MaskSecrets(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.secrets = known_secrets()

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = mask_secrets(record.getMessage(), self.secrets)
        record.args = ()
        if record.exc_info:
            # a traceback can quote a URL with a key in it: keep only the masked message
            record.msg += f" ({mask_secrets(repr(record.exc_info[1]), self.secrets)})"
            record.exc_info = None
            record.exc_text = None
        return True


_handler: logging.Handler | None = None


def configure(verbosity: int = 0) -> int | None:
    """Switch the ``soulframe`` loggers on at the level ``-v`` counts or ``$SOULFRAME_LOG``
    names (the higher wins); returns the level, or ``None`` when logging stays off."""
    global _handler
    levels = []
    env = os.environ.get(ENV, "").strip().lower()
    if env:
        if env not in LEVELS:
            print(f"warning: {ENV}={env!r} — expected debug, info or warning", file=sys.stderr)
        else:
            levels.append(LEVELS[env])
    if verbosity:
        levels.append(logging.DEBUG if verbosity > 1 else logging.INFO)
    if not levels:
        return None
    level = min(levels)
    logger = logging.getLogger("soulframe")
    logger.setLevel(level)
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("%(name)s %(levelname)s: %(message)s"))
        _handler.addFilter(MaskSecrets())
        logger.addHandler(_handler)
        logger.propagate = False
    return level
