"""Finding and masking secrets in text a user sees, a model reads or soulframe stores.

One pattern list, :data:`SECRET_PATTERNS`, serves both: the write-time guard
(:mod:`soulframe._engine.memory.safety`), ``doctor`` and ``backup`` *detect* with it, and every place
that shows text (the CLI's messages and logs, ``config show``, the ``ui``, memory tool results
and snippets, context files injected into a prompt, the search index) *masks* with it. So a
format the guard refuses is also a format no page shows.

What counts as a secret: provider key formats (OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``,
AWS ``AKIA…``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``, Slack ``xox?-``, Google
``AIza``, Hugging Face ``hf_``, npm ``npm_``, SendGrid ``SG.``, Twilio ``SK…``, Telegram bot
tokens), JWTs, PEM private keys, ``Bearer …`` and ``Authorization: Basic …``, a ``mysql -pX``
password, credentials in URLs (``user:KEY@host``,
``?key=KEY``) and a keyword with a value (``password: …``, ``the password for the router is
…``, ``wifi pw: …``) whose value is not an everyday word nor code that reads a secret from
elsewhere (``os.environ["X"]``, ``getpass()``, ``process.env.X``, ``settings.X``).

Text is scanned after :func:`soulframe._engine.neutralise.fold` (NFKC, format and tag characters
dropped, look-alike letters folded), so a zero-width character inside a key does not hide it;
a mask covers the original characters.

Stdlib only, and imports nothing of soulframe's but the stdlib-only :mod:`.neutralise`:
config, HTTP and logging all use it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import attrs

from .neutralise import fold_with_map

if TYPE_CHECKING:
    from .model import Settings

#: names of URL query parameters and config keys whose values are credentials
_SECRET_NAME = re.compile(
    r"(?:^|[_.\-])(?:api[_\-]?key|apikey|key|k|code|token|access[_\-]?token|auth|authorization|secret|"
    r"client[_\-]?secret|password|passwd|pwd|pass|sig|signature|credentials?|session)$",
    re.IGNORECASE,
)
_I = re.IGNORECASE

_KEYWORD = (
    r"(?P<key>password|passwd|passphrase|pass\s*code|pin\s*code|pwd|pw|pin|secret(?:[\s_-]*key)?|"
    r"api[\s_-]?key|access[\s_-]?token|auth[\s_-]?token|token|client[\s_-]?secret)"
)
#: "the password for the router is X", "wifi pw: X", "api_key = 'X'"; ``value`` is masked
_KEYWORD_VALUE = (
    rf"\b{_KEYWORD}(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+)?[\w.\-]+(?:\s+[\w.\-]+)?)?"
    r"\s*(?:is|was|=|:|->|=>)\s*[\"'`]?(?P<value>[^\s\"'`,;]{6,})"
)

#: (name, pattern) of every secret format; a pattern with a ``value`` group masks only that
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")),
    ("aws-secret-key", re.compile(r"aws.{0,20}?secret.{0,20}?[=:\s]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", _I)),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{8,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/(?P<value>[A-Za-z0-9/]{20,})")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")),
    ("twilio-key", re.compile(r"\b(?:SK|AC)[0-9a-f]{32}\b")),
    ("telegram-bot-token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer-token", re.compile(r"\bBearer\s+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)", _I)),
    ("basic-auth", re.compile(r"\bAuthorization\s*[:=]\s*[\"']?Basic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})", _I)),
    ("mysql-password", re.compile(r"\bmysql(?:dump|admin|sh)?\b[^\n]{0,80}?\s-p(?P<value>[^\s\"'`]{4,})")),
    ("url-credentials", re.compile(
        r"\b[a-z][a-z0-9+.\-]{0,20}://[^/\s:@]{0,64}:(?P<value>[^/\s@]{3,128})@[^\s/]+", _I)),
    ("password-assignment", re.compile(_KEYWORD_VALUE, _I)),
)

#: words that follow "password is" in ordinary notes; not a password
_BENIGN_VALUES = frozenset({
    "stored", "saved", "kept", "managed", "required", "expired", "expiring", "changed", "reset",
    "written", "located", "available", "shared", "rotated", "protected", "optional", "missing",
    "incorrect", "wrong", "correct", "invalid", "disabled", "enabled", "different", "updated",
    "unknown", "somewhere", "written-down", "hidden", "secret", "private", "redacted", "printed",
    "needed", "handled", "encrypted", "hashed", "generated", "taped", "sticky", "posted",
})
#: code that reads a secret from elsewhere: ``os.environ["X"]``, ``getpass()``,
#: ``process.env.X``, ``settings.X``, ``cfg.get(...)``, ``vault.read(...)``, ``ENV_NAME``
_CODE_VALUE = re.compile(
    r"(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:[(\[].*)?"   # a dotted name, maybe called
    r"|[A-Za-z_$][\w$]*[(\[].*"                                 # a call or a subscript
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"                           # an environment variable's name
    r"|[a-z]+(?:_[a-z]+)+"                                      # a snake_case variable
    r"|(?:none|null|nil|undefined|true|false|os|env)[)\];]*)$"
)
# a value quoted or not, either with backslash escapes (libpq's key=value syntax: "a\ b")
_PASSWORD_PAIR = re.compile(r"\b(password|passwd|pwd)(\s*=\s*)('(?:[^'\\]|\\.)*'|(?:\\.|[^\s\\])+)",
                            re.IGNORECASE)
#: an endpoint's userinfo, to the last "@" before its query: a password typed without
#: percent-encoding may hold "@", "/" or ":", where a URL parser ends the userinfo early
_ENDPOINT_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#\s:@]*):([^?#\s]*)@")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
MASK = "***"


@attrs.frozen
class SecretMatch:
    """One secret in a text: its format, where it is (``start``/``end``, in the text as
    given) and which part a mask replaces (``mask_start``/``mask_end``)."""

    name: str
    start: int
    end: int
    mask_start: int
    mask_end: int
    #: the keyword of a ``password: …`` match (lower case), else ""
    key: str = ""
    #: the secret itself (in folded form), for a preview; never printed whole
    value: str = ""


def value_is_secretlike(value: str) -> bool:
    """``password is hunter2`` yes, ``password is stored in 1Password`` and ``api_key =
    os.environ["OPENAI_API_KEY"]`` no: a password has a digit or a symbol, or is not an
    everyday word, and is not code that reads one from elsewhere."""
    v = value.strip(".").rstrip(")];")
    lowered = v.lower()
    if lowered in _BENIGN_VALUES or lowered.startswith(("<", "{", "$", "***", "xxx", "…", "%(", "os.")):
        return False
    if lowered.endswith(MASK) and len(lowered) <= len(MASK) + 3:
        return False  # "sk-***": masked already (masking twice must change nothing)
    if _CODE_VALUE.match(value.strip(".")) or _CODE_VALUE.match(v):
        return False
    has_digit = any(c.isdigit() for c in v)
    has_symbol = any(not c.isalnum() for c in v)
    mixed = any(c.isupper() for c in v[1:]) and any(c.islower() for c in v)
    return has_digit or has_symbol or mixed


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in ``text``, in order of position, one match per secret (an Anthropic
    key is not also an OpenAI key). Positions are in ``text`` as given, though the search
    runs on its folded form."""
    if not text:
        return []
    folded, where = fold_with_map(text, read_tags=False)
    out: list[SecretMatch] = []
    taken: list[tuple[int, int]] = []

    def original(a: int, b: int) -> tuple[int, int]:
        return (where[a] if a < len(where) else len(text)), (where[b - 1] + 1 if b > 0 else 0)

    for name, pat in SECRET_PATTERNS:
        for m in pat.finditer(folded):
            a, b = m.span()
            if any(a < e and s < b for s, e in taken):
                continue
            key = ""
            if name == "password-assignment":
                if not value_is_secretlike(m.group("value")):
                    continue
                key = " ".join(m.group("key").lower().split())
            va, vb = m.span("value") if "value" in pat.groupindex else (a, b)
            taken.append((a, b))
            value = m.group("value") if "value" in pat.groupindex else m.group(0)
            out.append(SecretMatch(name, *original(a, b), *original(va, vb), key, value))
    out.sort(key=lambda s: s.start)
    return out


def is_secret_name(name: str) -> bool:
    """Whether a config key or URL parameter called ``name`` holds a credential
    (``api_key``, ``embedding.api_key``, ``token``, ``sig``, ``code``, ``password`` ...)."""
    return bool(_SECRET_NAME.search(name.strip()))


def looks_secret(value: str) -> bool:
    """Whether ``value`` holds anything :data:`SECRET_PATTERNS` finds or is a URL carrying
    a credential."""
    return bool(find_secrets(value)) or any(
        redact_url(m.group(0)) != m.group(0) for m in _URL.finditer(value)
    )


def redact_url(url: str) -> str:
    """``url`` without its credentials: the password of ``user:PASSWORD@host`` (a lone
    ``https://TOKEN@host`` too) and the values of query parameters named like a secret (``key``,
    ``api_key``, ``token``, ``sig``, ``code``, ``password`` ...) become ``***``. Anything that
    is not a URL comes back as it is."""
    return _redact_url(url, every_value=False)


def redact_endpoint(url: str) -> str:
    """A configured endpoint (``base_url``, a DSN) as it may be shown: as :func:`redact_url`,
    and *every* query value masked too — a credential can hide under any parameter name
    (``?c=…``, ``?x-id=…``), and which parameters an endpoint takes is not a secret's shape."""
    return _redact_url(url, every_value=True)


def _redact_url(url: str, *, every_value: bool) -> str:
    import urllib.parse

    if every_value:
        url = _ENDPOINT_USERINFO.sub(_mask_userinfo, url, count=1)
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
            if eq and value and (every_value or is_secret_name(urllib.parse.unquote_plus(name))):
                piece = f"{name}={MASK}"
            pairs.append(piece)
        query = "&".join(pairs)
    out = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return mask_secret_values(out)


def _mask_userinfo(m: re.Match[str]) -> str:
    who, rest = m.group(2), m.group(3)
    if re.match(r"\d+/", rest) and ("." in who or who == "localhost"):
        return m.group(0)  # host:port/path@...: an "@" in the path (https://host:443/@name)
    return f"{m.group(1)}{who}:{MASK}@"


def mask_secret_values(text: str) -> str:
    """``text`` with every secret :data:`SECRET_PATTERNS` finds masked (see
    :func:`mask_found`), and any ``password=…`` of a DSN or connection string (for messages
    and config values, where even ``password=`` code is better not shown)."""
    return mask_found(_PASSWORD_PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text))


# Cached by content (a pure function): a prompt build masks the same unchanged context files
# every time, and a warm build must not rescan them (~5 ms for the templates alone).
@functools.lru_cache(maxsize=1024)
def mask_found(text: str) -> str:
    """``text`` with every secret :data:`SECRET_PATTERNS` finds masked: a token keeps its
    first three characters (``sk-***``), a keyword keeps its name (``password: ***``), and
    a masked span keeps its line breaks, so line numbers and citations stay right."""
    found = find_secrets(text)
    if not found:
        return text
    out, at = [], 0
    for s in found:
        if s.mask_start < at:
            continue
        keep = 0
        if (s.mask_start, s.mask_end) == (s.start, s.end) and s.name != "private-key":
            keep = 3
        lines = "\n" * text.count("\n", s.mask_start, s.mask_end)
        out.append(text[at:s.mask_start] + text[s.mask_start:s.mask_start + keep] + MASK + lines)
        at = s.mask_end
    return "".join(out) + text[at:]


#: the config key that turns off the masking of secrets in what reaches a model
MASK_KEY = "memory.mask_secrets"


def mask_for_model(text: str, config: Settings | None = None) -> str:
    """``text`` from a memory or context file on its way to a model (a prompt, a tool result):
    secrets masked (:func:`mask_found`) unless ``memory.mask_secrets = false``."""
    if config is not None and config.get(MASK_KEY) is False:
        return text
    return mask_found(text)


def secret_lines(text: str) -> list[tuple[int, str]]:
    """(line, format) of every secret in ``text``: for ``doctor`` and ``backup``, which name
    where a secret is and never the secret."""
    return [(text.count("\n", 0, s.start) + 1, s.name) for s in find_secrets(text)]


def redact_urls(text: str) -> str:
    """``text`` (a message, a warning, an error body, a page) with every URL in it passed
    through :func:`redact_url` and every secret masked."""
    return mask_secret_values(_URL.sub(lambda m: redact_url(m.group(0)), text))
