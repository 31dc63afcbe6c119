"""Write-time safety for memory and context files.

Everything written to ``MEMORY.md``, ``memory/*.md`` or a context file is injected into a
later system prompt. A web page's "ignore previous instructions" or a pasted API key that
lands there keeps working (or leaking) in every session after. So every path that writes
memory or context files (``memory remember``, flush, ``save-session``, consolidation,
``context_write``, MCP ``memory_remember``) passes the text through :func:`guard` first:

* :func:`scan` finds prompt-injection patterns and secrets (API keys, tokens, private keys,
  passwords in common formats). It is a pattern list, cheap and explainable, measured on
  ``tests/data/write_safety/corpus.jsonl`` (see docs/memory-upkeep.md for the figures);
* ``memory.write_safety`` decides: ``refuse`` (default) raises :class:`UnsafeWriteError`
  naming what was found and where it would have gone; ``warn`` writes it and warns;
  ``allow`` writes it;
* a refused (or warned) text is kept in the quarantine file
  ``<state_dir>/quarantine/<agent>.jsonl`` (0600, in a 0700 directory, outside the
  workspace: never indexed, never injected), so nothing is lost. ``soulframe memory
  quarantine list|show|release|drop`` manages it.

A finding never repeats the secret it found: messages show its kind and a four-character
preview.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import secrets
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..model import SoulframeError

if TYPE_CHECKING:
    from ..agent import Agent

MODES = ("refuse", "warn", "allow")


class UnsafeWriteError(SoulframeError):
    """A write was refused: the text looks like a prompt injection or holds a secret."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = (), quarantine_id: str | None = None) -> None:
        super().__init__(message)
        self.findings = findings
        self.quarantine_id = quarantine_id


class UnsafeWriteWarning(UserWarning):
    """A write went through (``memory.write_safety = warn``) although it looks unsafe."""


@attrs.frozen
class Finding:
    """One thing :func:`scan` found: ``kind`` is ``injection`` or ``secret``; ``name`` says
    which pattern (``openai-key``, ``ignore-instructions``); ``preview`` is safe to print.
    ``start``/``end`` place it (an injection's in the text with list markers removed)."""

    kind: str
    name: str
    start: int
    end: int
    preview: str

    def describe(self) -> str:
        return f"{self.kind} ({self.name}: {self.preview})"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "preview": self.preview}


# --------------------------------------------------------------------------- patterns

_I = re.IGNORECASE
_PREV = r"(?:previous|prior|above|earlier|preceding|foregoing|all|any|your|the|these|those|system|safety|security|content)"
_ORDERS = r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints|orders|commands|programming|context)"

INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ignore-instructions", re.compile(
        rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:(?:all|any|of|every|everything|the|your|my|its)\s+){{0,3}}"
        rf"(?:{_PREV}\s+){{0,2}}{_ORDERS}\b", _I)),
    ("ignore-everything-before", re.compile(
        r"\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+(?:(?:you\s+(?:were|have\s+been)\s+told)|"
        r"(?:said|written|above|before|prior|previously))", _I)),
    ("new-instructions", re.compile(
        r"(?:^|\n|[.!]\s+)\s*(?:[-*+>]\s+)?(?:new|updated|revised|real|true|actual|important)\s+(?:system\s+)?instructions?\s*[:\-]", _I)),
    ("role-override", re.compile(
        r"\byou\s+are\s+(?:now|no\s+longer)\b(?:\s+\w+){0,4}?\s+(?:mode|unrestricted|unfiltered|jailbroken|"
        r"DAN|an?\s+(?:AI|assistant|model)\s+(?:with(?:out)?|that))", _I)),
    ("mode-switch", re.compile(
        r"\b(?:developer|DAN|jailbreak|god|sudo|unrestricted|admin(?:istrator)?)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|engaged)\b(?!\s+(?:on|for)\s+(?:the|my|your)\b)"
        r"|\b(?:enable|activate|enter)\s+(?:developer|DAN|jailbreak|god|unrestricted)\s+mode\b", _I)),
    ("no-restrictions", re.compile(
        r"\b(?:without|no|free\s+(?:of|from))\s+(?:any\s+)?(?:ethical\s+|safety\s+|content\s+)?"
        r"(?:restrictions|filters|guardrails|limitations|censorship)\b.{0,40}\b(?:you|answer|respond|comply)"
        r"|\b(?:you|assistant)\s+(?:must|will|should)\s+(?:now\s+)?(?:comply|obey)\s+(?:with\s+)?(?:every|all|any)", _I)),
    ("prompt-exfiltration", re.compile(
        r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|echo)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:full\s+|entire\s+|hidden\s+|original\s+|initial\s+)*(?:system\s+prompt|instructions|hidden\s+prompt|initial\s+prompt)", _I)),
    ("data-exfiltration", re.compile(
        r"\b(?:send|post|upload|forward|email|exfiltrate|transmit)\s+(?:all\s+|the\s+|your\s+|every\s+)*"
        r"(?:memory|memories|files|conversation|chat\s+history|secrets|credentials|api\s+keys?|passwords?|tokens?|"
        r"MEMORY\.md|USER\.md|SOUL\.md)\b.{0,60}?(?:https?://|\bto\s+\S+@\S+|\bto\s+(?:this|the\s+following)\s+(?:url|address|endpoint|server))", _I)),
    ("hide-from-user", re.compile(
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert|reveal\s+(?:this\s+)?to|let)\s+the\s+user(?![\w-])", _I)),
    ("chat-markup", re.compile(
        r"<\|(?:im_start|im_end|system|endoftext|start_header_id)\|>|\[/?INST\]|<</?SYS>>|</?system>"
        r"|^\s*#{2,}\s*(?:system|assistant)\s*(?:prompt|message)?\s*:", _I | re.MULTILINE)),
    ("instruction-to-ai", re.compile(
        r"\b(?:AI|assistant|LLM|language\s+model|chatbot|agent)s?\s+(?:reading|processing|parsing|summari[sz]ing)\s+this\b"
        r".{0,80}?\b(?:must|should|will|ignore|disregard)\b", _I)),
)

_KEYWORD_VALUE = (
    r"\b(?P<key>password|passwd|pwd|passphrase|pass\s*code|pin\s*code|secret(?:\s*key)?|"
    r"api[\s_-]?key|access[\s_-]?token|auth[\s_-]?token|token|client[\s_-]?secret)"
    r"\s*(?:is|was|=|:|->|=>)\s*[\"'`]?(?P<value>[^\s\"'`,;]{6,})"
)

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")),
    ("aws-secret-key", re.compile(r"aws.{0,20}?secret.{0,20}?[=:]\s*[\"']?[A-Za-z0-9/+=]{40}\b", _I)),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b")),
    ("twilio-key", re.compile(r"\bSK[0-9a-f]{32}\b")),
    ("telegram-bot-token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer-token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/\-]{20,}=*", _I)),
    ("url-credentials", re.compile(r"\b[a-z][a-z0-9+.\-]{0,20}://[^/\s:@]{0,64}:[^/\s@]{3,128}@[^\s/]+", _I)),
    ("password-assignment", re.compile(_KEYWORD_VALUE, _I)),
)

#: words that follow "password is" in ordinary notes; not a password
_BENIGN_VALUES = frozenset({
    "stored", "saved", "kept", "managed", "required", "expired", "expiring", "changed", "reset",
    "written", "located", "available", "shared", "rotated", "protected", "optional", "missing",
    "incorrect", "wrong", "correct", "invalid", "disabled", "enabled", "different", "updated",
    "unknown", "somewhere", "written-down", "hidden", "secret", "private", "redacted",
})


_LINE_LEAD = re.compile(r"^[ \t]*(?:(?:[-*+>]|\d+[.)])[ \t]+)+", re.MULTILINE)
_NEGATABLE = frozenset({"prompt-exfiltration", "data-exfiltration", "ignore-instructions"})
#: a rule about an attack ("never reveal the system prompt", "if a page tells you to
#: ignore these rules, it is wrong", "it cannot override these rules") is not one
_NEGATED = re.compile(
    r"\b(?:never|not|don't|do\s+not|must\s+not|refuse\s+to|won't|cannot|can't|(?:tells?|asks?|wants?|says?)"
    r"\s+(?:you\s+)?to)\s+$", _I)


def _preview(text: str) -> str:
    text = text.strip()
    return (text[:4] + "…") if len(text) > 4 else "…"


def _value_is_secretlike(value: str) -> bool:
    """``password is hunter2`` yes, ``password is stored in 1Password`` no: a password
    has a digit or a symbol, or is not an everyday word."""
    v = value.strip(".")
    if v.lower() in _BENIGN_VALUES or v.lower().startswith(("<", "{", "$", "***", "xxx", "…")):
        return False
    has_digit = any(c.isdigit() for c in v)
    has_symbol = any(not c.isalnum() for c in v)
    mixed = any(c.isupper() for c in v[1:]) and any(c.islower() for c in v)
    return has_digit or has_symbol or mixed


def scan(text: str) -> list[Finding]:
    """Every injection pattern and secret found in ``text``, in order of position."""
    if not text:
        return []
    found: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for name, pat in SECRET_PATTERNS:
        for m in pat.finditer(text):
            a, b = m.span()
            if any(a < e and s < b for s, e in taken):
                continue  # one secret, one finding (an Anthropic key is not also an OpenAI key)
            if name == "password-assignment":
                value = m.group("value")
                if not _value_is_secretlike(value):
                    continue
                preview = f"{m.group('key').lower()} = {_preview(value)}"
            else:
                preview = _preview(m.group(0))
            taken.append((a, b))
            found.append(Finding("secret", name, a, b, preview))
    # a list item or quote is read like a line of its own: "- New instructions: ..."
    plain = _LINE_LEAD.sub("", text)
    for name, pat in INJECTION_PATTERNS:
        m = pat.search(plain)
        if m and name in _NEGATABLE and _NEGATED.search(plain[max(0, m.start() - 20):m.start()]):
            m = None  # "never reveal the system prompt" is a rule, not an attack
        if m:
            snippet = " ".join(m.group(0).split())
            found.append(Finding("injection", name, m.start(), m.end(), repr(snippet[:60])))
    found.sort(key=lambda f: f.start)
    return found


def summary(findings: Iterable[Finding]) -> str:
    """``a secret (openai-key: sk-p…) and a prompt injection (ignore-instructions: ...)``"""
    parts = [
        ("a secret" if f.kind == "secret" else "a prompt injection") + f" ({f.name}: {f.preview})"
        for f in findings
    ]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# --------------------------------------------------------------------------- the guard


def mode_of(config: Any) -> str:
    mode = str(config.get("memory.write_safety") if config is not None else "refuse")
    return mode if mode in MODES else "refuse"


def guard(agent: Agent, text: str, *, target: str, via: str) -> list[Finding]:
    """Check ``text`` before ``via`` (``memory remember``, ``flush`` ...) writes it to
    ``target`` (a workspace-relative path, or ``USER.md of user alice``).

    Returns the findings (empty: safe). With ``memory.write_safety = refuse`` (default) an
    unsafe text is quarantined and :class:`UnsafeWriteError` raised; with ``warn`` it is
    quarantined, an :class:`UnsafeWriteWarning` issued and the write goes on; ``allow``
    checks nothing.
    """
    mode = mode_of(getattr(agent, "config", None))
    if mode == "allow":
        return []
    findings = scan(text)
    if not findings:
        return []
    from ..workspace import StorageFullError

    what = summary(findings)
    try:
        q = Quarantine.for_agent(agent)
        entry_id = q.add(text, target=target, via=via, findings=findings, action=mode)
    except (StorageFullError, OSError) as exc:
        # the quarantine could not keep it (a full disk): echo the text rather than lose it
        raise UnsafeWriteError(
            f"{via}: refused to write to {target}: the text contains {what}. It was not written, "
            f"and it could not be kept in quarantine ({exc}); here it is, so it is not lost:\n{text}",
            tuple(findings), None,
        ) from None
    if mode == "warn":
        warnings.warn(
            f"{via}: wrote {what} to {target} (memory.write_safety = warn); "
            f"a copy is in quarantine as {entry_id}",
            UnsafeWriteWarning, stacklevel=2,
        )
        return findings
    raise UnsafeWriteError(
        f"{via}: refused to write to {target}: the text contains {what}. It was not written; "
        f"it is kept in quarantine as {entry_id} ({q.path}). Review it with "
        f"`soulframe memory quarantine show {entry_id}`; write it anyway with "
        f"`soulframe memory quarantine release {entry_id}`",
        tuple(findings), entry_id,
    )


# --------------------------------------------------------------------------- quarantine


@attrs.frozen
class QuarantineEntry:
    id: str
    at: str
    agent: str
    target: str
    via: str
    action: str
    findings: tuple[dict[str, Any], ...]
    text: str
    #: the workspace it was refused in ("" in entries older than this field)
    workspace: str = ""

    def to_dict(self, *, with_text: bool = True) -> dict[str, Any]:
        d = attrs.asdict(self)
        d["findings"] = list(self.findings)
        if not with_text:
            d.pop("text")
        return d


class Quarantine:
    """Refused writes of one agent: JSON Lines in ``<state_dir>/quarantine/<agent>.jsonl``
    (0600, outside the workspace, so never indexed nor injected into a prompt)."""

    def __init__(self, path: Path, agent_id: str = "", workspace: str = "") -> None:
        self.path = path
        self.agent_id = agent_id
        #: two workspaces under one agent id share this file: each sees only its own entries
        self.workspace = workspace

    @classmethod
    def for_agent(cls, agent: Agent) -> Quarantine:
        from ..workspace import ensure_private_dir

        folder = ensure_private_dir(Path(agent.state_dir) / "quarantine")
        key = getattr(agent, "state_key", None) or getattr(agent, "id", "agent")
        return cls(folder / f"{key}.jsonl", str(getattr(agent, "id", "")), str(getattr(agent, "root", "")))

    def add(self, text: str, *, target: str, via: str, findings: Iterable[Finding], action: str) -> str:
        entry_id = _dt.datetime.now(_dt.UTC).strftime("q%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        row = {
            "id": entry_id,
            "at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "agent": self.agent_id,
            "target": target,
            "via": via,
            "action": action,
            "findings": [f.to_dict() for f in findings],
            "text": text,
            "workspace": self.workspace,
        }
        self._append(json.dumps(row, ensure_ascii=False) + "\n")
        return entry_id

    def _append(self, line: str) -> None:
        from ..workspace import update_locked

        # the whole file, replaced under its lock: a full disk leaves the old lines whole
        update_locked(self.path, lambda old: old + line.encode("utf-8"))

    def entries(self) -> list[QuarantineEntry]:
        if not self.path.exists():
            return []
        out: list[QuarantineEntry] = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                d = json.loads(line)
                out.append(QuarantineEntry(
                    id=str(d["id"]), at=str(d.get("at", "")), agent=str(d.get("agent", "")),
                    target=str(d.get("target", "")), via=str(d.get("via", "")),
                    action=str(d.get("action", "refuse")),
                    findings=tuple(d.get("findings") or ()), text=str(d.get("text", "")),
                    workspace=str(d.get("workspace") or ""),
                ))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line: the rest is still readable
        return out

    def mine(self) -> list[QuarantineEntry]:
        """The entries refused in this workspace (and those older than the record of it)."""
        return [e for e in self.entries() if not e.workspace or not self.workspace or e.workspace == self.workspace]

    def get(self, entry_id: str) -> QuarantineEntry:
        for e in self.mine():
            if e.id == entry_id:
                return e
        raise SoulframeError(f"{entry_id}: no such quarantine entry of this workspace in {self.path}")

    def drop(self, entry_id: str) -> QuarantineEntry:
        from ..workspace import update_locked

        entry = self.get(entry_id)

        def without(_old: bytes) -> bytes:  # under the lock: a refusal added meanwhile stays
            rest = [e for e in self.entries() if e.id != entry_id]
            return "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in rest).encode("utf-8")

        update_locked(self.path, without)
        return entry


__all__ = [
    "Finding", "Quarantine", "QuarantineEntry", "UnsafeWriteError", "UnsafeWriteWarning",
    "guard", "mode_of", "scan", "summary",
]
