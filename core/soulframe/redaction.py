"""Masking secrets in text a user sees or soulframe stores: credentials in URLs
(``user:KEY@host``, ``?key=KEY``), values of keys named like a secret (``api_key``, ``token``,
``password`` ...), and values shaped like a credential whatever they are called (``sk-…``,
``AKIA…``, ``ghp_…``, ``xoxb-…``, JWTs, PEM private keys).

Stdlib only, and imports nothing of soulframe's: config, HTTP and logging all use it.
"""

from __future__ import annotations

import re

#: names of URL query parameters and config keys whose values are credentials
_SECRET_NAME = re.compile(
    r"(?:^|[_.\-])(?:api[_\-]?key|apikey|key|token|access[_\-]?token|auth|authorization|secret|"
    r"client[_\-]?secret|password|passwd|pwd|pass|sig|signature|credentials?|session)$",
    re.IGNORECASE,
)
#: values that are credentials whatever they are called: provider key formats, JWTs, PEM keys
_SECRET_VALUE = re.compile(
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"          # OpenAI, Anthropic
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"                 # AWS access key id
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"                  # GitHub tokens
    r"|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9\-]{8,}"               # Slack
    r"|\bAIza[0-9A-Za-z_\-]{30,}"                     # Google API key
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"  # a JWT
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
)
#: ``password=...`` in a libpq key=value DSN or a connection string
_PASSWORD_PAIR = re.compile(r"\b(password|passwd|pwd)(\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
MASK = "***"


def is_secret_name(name: str) -> bool:
    """Whether a config key or URL parameter called ``name`` holds a credential
    (``api_key``, ``embedding.api_key``, ``token``, ``sig``, ``password`` ...)."""
    return bool(_SECRET_NAME.search(name.strip()))


def looks_secret(value: str) -> bool:
    """Whether ``value`` has the shape of a credential (``sk-…``, ``AKIA…``, ``ghp_…``,
    ``xoxb-…``, a JWT, a PEM private key) or is a URL carrying one."""
    return bool(_SECRET_VALUE.search(value)) or any(
        redact_url(m.group(0)) != m.group(0) for m in _URL.finditer(value)
    )


def redact_url(url: str) -> str:
    """``url`` without its credentials: the password of ``user:PASSWORD@host`` (a lone
    ``https://TOKEN@host`` too) and the values of query parameters named like a secret (``key``,
    ``api_key``, ``token``, ``sig``, ``password`` ...) become ``***``. Anything that is not
    a URL comes back as it is."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return mask_secret_values(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        if colon:
            netloc = f"{user}:{MASK}@{host}"
        elif parts.scheme.lower() in ("http", "https"):
            # a lone user name over HTTP(S) is a token (https://TOKEN@github.com); over ssh it
            # is an account name (ssh://git@host)
            netloc = f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = []
        for piece in query.split("&"):
            name, eq, value = piece.partition("=")
            if eq and value and is_secret_name(urllib.parse.unquote_plus(name)):
                piece = f"{name}={MASK}"
            pairs.append(piece)
        query = "&".join(pairs)
    out = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return mask_secret_values(out)


def mask_secret_values(text: str) -> str:
    """``text`` with every value shaped like a credential masked (see :func:`looks_secret`)."""
    text = _PASSWORD_PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    return _SECRET_VALUE.sub(lambda m: m.group(0)[:3] + MASK if m.group(0)[:3] != "---" else MASK, text)


def redact_urls(text: str) -> str:
    """``text`` (a message, a warning, an error body) with every URL in it passed through
    :func:`redact_url` and every credential-shaped value masked."""
    return mask_secret_values(_URL.sub(lambda m: redact_url(m.group(0)), text))
