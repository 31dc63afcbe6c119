"""The agent's display identity: name, emoji, avatar, creature, vibe.

Resolution chain (seed 003 §1.3 / §2.3), field by field, first non-empty wins:

1. config ``ui.assistant_name`` / ``ui.assistant_avatar`` / ``ui.assistant_emoji``;
2. the agent's ``identity`` table in config (``[[agents]] identity = {name = ...}``);
3. IDENTITY.md in the workspace (or the user's copy);
4. the default: name "Assistant", nothing else.

IDENTITY.md is read leniently: ``- **Name:** Sage``, ``**Name**: Sage``, ``Name: Sage``,
``- Name: Sage``, ``* name = Sage``, front matter ``name: Sage``; the template's
placeholders (``*(pick something you like)*``) count as unset. A file that has content but
no recognisable field, or an unusable value, gives a warning naming the line and the
fallback is used — never a traceback.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..model import ContextFile, Identity, Session, SoulframeWarning

if TYPE_CHECKING:
    from ..model import AgentLike

FIELDS: tuple[str, ...] = ("name", "emoji", "avatar", "creature", "vibe")
DEFAULT_NAME = "Assistant"
MAX_NAME_CHARS = 64
MAX_VALUE_CHARS = 200

_UI_KEYS = {"name": "ui.assistant_name", "avatar": "ui.assistant_avatar", "emoji": "ui.assistant_emoji"}

# "- **Name:** Sage", "**Name**: Sage", "Name: Sage", "* name = Sage", "1. Name – Sage"
_LINE = re.compile(
    r"""^\s*(?:[-*+]|\d+[.)])?\s*      # optional bullet
        (?:\*\*|__|\*|_)?\s*           # optional emphasis around the key
        (?P<key>[A-Za-z][A-Za-z ]{0,20}?)\s*
        (?:\*\*|__|\*|_)?\s*
        (?P<sep>[:=：])\s*             # separator (full-width colon too)
        (?:\*\*|__)?\s*
        (?P<value>.*?)\s*$""",
    re.X,
)
_KEY_ALIASES = {
    "name": "name",
    "display name": "name",
    "emoji": "emoji",
    "signature emoji": "emoji",
    "avatar": "avatar",
    "creature": "creature",
    "species": "creature",
    "vibe": "vibe",
}


class IdentityWarning(SoulframeWarning):
    """IDENTITY.md could not be read as expected; the message says which line and what
    was used instead."""


@attrs.frozen
class ParsedIdentity:
    """What IDENTITY.md says: field -> value, and field -> line number."""

    values: dict[str, str] = attrs.field(factory=dict)
    lines: dict[str, int] = attrs.field(factory=dict)
    problems: list[str] = attrs.field(factory=list)


@attrs.frozen
class IdentityReport:
    """The resolved identity and where each field came from (for ``soulframe identity``)."""

    identity: Identity
    #: field -> "ui.assistant_name" / "agents[default].identity" / "IDENTITY.md:3" / "default"
    sources: dict[str, str]
    warnings: list[str] = attrs.field(factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": {f: v for f, v in attrs.asdict(self.identity).items() if f in FIELDS},
            "sources": dict(self.sources),
            "warnings": list(self.warnings),
        }


def _clean(value: str) -> str:
    v = value.strip()
    # strip wrapping emphasis / code: *x*, _x_, **x**, `x`
    for _ in range(3):
        m = re.fullmatch(r"(\*\*|__|\*|_|`)(.+)\1", v)
        if not m:
            break
        v = m.group(2).strip()
    v = "".join(ch for ch in v if unicodedata.category(ch) not in ("Cc", "Cf") or ch == "\u200d")
    return v.strip()


def _is_placeholder(value: str) -> bool:
    v = value.strip()
    return (
        not v
        or (v.startswith("(") and v.endswith(")"))
        or (v.startswith("<") and v.endswith(">") and "://" not in v)
        or v.lower() in {"tbd", "todo", "?", "-", "none", "n/a"}
    )


def parse_identity_md(text: str, *, filename: str = "IDENTITY.md") -> ParsedIdentity:
    """Read the identity fields out of IDENTITY.md text (see the module docstring)."""
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    problems: list[str] = []
    in_fence = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or raw.lstrip().startswith("#"):
            continue
        m = _LINE.match(raw)
        if not m:
            continue
        field = _KEY_ALIASES.get(m.group("key").strip().lower())
        if field is None:
            continue
        value = _clean(m.group("value"))
        if _is_placeholder(value):
            continue
        limit = MAX_NAME_CHARS if field == "name" else MAX_VALUE_CHARS
        if len(value) > limit:
            problems.append(
                f"{filename}:{lineno}: {field} is {len(value)} characters (more than {limit}); ignored"
            )
            continue
        if field in values:
            problems.append(
                f"{filename}:{lineno}: a second {field} ({value!r}); using the first, "
                f"{values[field]!r} from line {lines[field]}"
            )
            continue
        values[field] = value
        lines[field] = lineno
    if in_fence:
        problems.append(f"{filename}: a ``` code fence is never closed; fields after it were ignored")
    if not values and text.strip() and "\ufffd" in text:
        problems.append(f"{filename}: not valid UTF-8 and no identity field could be read")
    elif not values and text.strip() and not _only_template(text):
        problems.append(
            f"{filename}: no identity field found (expected lines like '- **Name:** Sage'); "
            "using the fallback"
        )
    return ParsedIdentity(values=values, lines=lines, problems=problems)


def _only_template(text: str) -> bool:
    """The untouched template: every field line is a placeholder, so nothing is wrong."""
    return any(
        (m := _LINE.match(line)) is not None and m.group("key").strip().lower() in _KEY_ALIASES
        for line in text.splitlines()
    )


def explain_identity(
    agent: AgentLike, files: Sequence[ContextFile] | None = None, *, session: Session | None = None
) -> IdentityReport:
    """Resolve the identity and say where every field came from."""
    identity_file: ContextFile | None = None
    if files is None:
        from .context import load_merged

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the prompt build reports file problems
            files = load_merged(agent, session or Session.main())
    for f in files:
        if f.name == "IDENTITY.md":
            identity_file = f
    parsed = ParsedIdentity()
    if identity_file is not None:
        label = "IDENTITY.md" if identity_file.scope == "agent" else "IDENTITY.md (user)"
        parsed = parse_identity_md(identity_file.content, filename=label)
    for problem in parsed.problems:
        warnings.warn(problem, IdentityWarning, stacklevel=2)

    spec_identity = dict(agent.spec.identity)
    chosen: dict[str, str | None] = {}
    sources: dict[str, str] = {}
    for field in FIELDS:
        ui_key = _UI_KEYS.get(field)
        ui_value = agent.config.get(ui_key) if ui_key else None
        if ui_value:
            chosen[field], sources[field] = str(ui_value), ui_key or ""
        elif spec_identity.get(field):
            chosen[field] = str(spec_identity[field])
            sources[field] = f"agents[{agent.spec.id}].identity"
        elif field in parsed.values:
            chosen[field] = parsed.values[field]
            sources[field] = f"IDENTITY.md:{parsed.lines[field]}"
        else:
            chosen[field] = DEFAULT_NAME if field == "name" else None
            sources[field] = "default"
    name_source = sources["name"]
    short = (
        "ui" if name_source.startswith("ui.")
        else "config" if name_source.startswith("agents[")
        else "IDENTITY.md" if name_source.startswith("IDENTITY.md")
        else "default"
    )
    identity = Identity(
        name=chosen["name"] or DEFAULT_NAME,
        emoji=chosen["emoji"],
        avatar=chosen["avatar"],
        creature=chosen["creature"],
        vibe=chosen["vibe"],
        source=short,
    )
    return IdentityReport(identity=identity, sources=sources, warnings=list(parsed.problems))


def resolve_identity(
    agent: AgentLike, files: Sequence[ContextFile] | None = None, *, session: Session | None = None
) -> Identity:
    """The agent's display identity (see the module docstring for the chain).

    :param files: context files already collected for the session (the prompt passes its
        own, so IDENTITY.md is read once); by default the workspace is read.
    """
    return explain_identity(agent, files, session=session).identity
