"""The filesystem skill tiers, the built-in skills, and the ``skill_search`` / ``skill_read``
tools (seed 000 §8–11), and the ``doctor`` check for skipped or left-out skills.

Tiers, highest first (a higher tier overrides a same-named skill below it):

1. ``<workspace>/skills/``            (``workspace``)
2. ``<workspace>/.agents/skills/``    (``project``)
3. ``skills.personal_dir``            (``personal``, default ``~/.agents/skills``)
4. ``skills.global_dir``              (``global``, default ``~/.soulframe/skills``) and each of
   ``skills.extra_dirs``              (``extra:<dir>``)
5. the built-in skills shipped in this package (``builtin``)

Setting ``skills.personal_dir`` or ``skills.global_dir`` to ``""`` turns that tier off. A
managed-mode store plugin offers tier 4 itself as a ``SkillSource`` with ``load``, ``version``
and ``load_user`` callables and ``replaces_filesystem_tier=True``: the global directory is
then not read at all (seed 000 §12).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soulframe import DoctorCheck, SkillSource, ToolContext, ToolSpec, hookimpl

if TYPE_CHECKING:
    from soulframe import AgentLike

#: the built-in skills (package data: each a directory with a SKILL.md)
BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"


def _dir(agent: AgentLike, value: Any) -> Path | None:
    if value is None or not str(value).strip():
        return None
    path = Path(str(value)).expanduser()
    # a relative directory is taken relative to the workspace, never the process's cwd
    return path if path.is_absolute() else agent.root / path


@hookimpl
def register_skill_sources(agent: AgentLike) -> Iterable[SkillSource]:
    cfg = agent.config
    sources = [
        # the workspace tiers must be in the workspace: a skills/ that is a symlink out of it
        # is refused, not loaded as if the workspace held those skills
        SkillSource(name="workspace", tier=1, root=agent.root / "skills", within=agent.root),
        SkillSource(name="project", tier=2, root=agent.root / ".agents" / "skills", within=agent.root),
    ]
    personal = _dir(agent, cfg.get("skills.personal_dir"))
    if personal is not None:
        sources.append(SkillSource(name="personal", tier=3, root=personal))
    global_dir = _dir(agent, cfg.get("skills.global_dir"))
    if global_dir is not None:
        sources.append(SkillSource(name="global", tier=4, root=global_dir))
    for extra in cfg.get("skills.extra_dirs") or ():
        path = _dir(agent, extra)
        if path is not None:
            sources.append(SkillSource(name=f"extra:{extra}", tier=4, root=path))
    sources.append(SkillSource(name="builtin", tier=5, root=BUILTIN_DIR))
    return sources


# --------------------------------------------------------------------------- tools


def _search(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("skill_search: 'query' must be a non-empty string")
    k = arguments.get("k", None)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50):
        raise ValueError("skill_search: 'k' must be an integer from 1 to 50")
    hits = ctx.agent.skills.for_session(ctx.session).search(query, k)
    from soulframe.kit import mask_for_model, neutralise

    results = [h.to_dict() for h in hits]
    for r in results:  # user text on its way to the model, as skill_read's content
        r["description"] = neutralise(mask_for_model(r["description"], ctx.agent.config))
    return {
        "query": query,
        "results": results,
        "hint": "read the one that applies with skill_read" if hits else
                "no skill matches; continue without one",
    }


def _read(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    name = arguments.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("skill_read: 'name' must be a non-empty string")
    skills = ctx.agent.skills.for_session(ctx.session)  # the user's private and granted skills too
    # raises SoulframeError with a did-you-mean for an unknown name, as the CLI does
    content = skills.read(name.strip())
    skill = skills.get(name.strip())
    from soulframe.kit import mask_for_model, neutralise

    # a skill's text goes to the model as a prompt's files do: secrets masked, no tag of
    # soulframe's own left live in it
    content = neutralise(mask_for_model(content, ctx.agent.config))
    return {
        "name": skill.name if skill else name.strip(),  # as listed, whichever form was asked
        "location": str(skill.path) if skill else None,
        "base_dir": str(skill.base_dir.resolve()) if skill else None,
        "content": content,
    }


#: the results' shapes (MCP clients get them as outputSchema); open objects, so a field a
#: later version adds does not break an older client
_SCORE = {"type": ["number", "null"]}
SEARCH_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "results": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                           "location": {"type": "string"}, "tier": {"type": "integer"},
                           "tier_name": {"type": "string"}, "score": _SCORE,
                           "text_score": _SCORE, "vector_score": _SCORE},
            "required": ["name", "description", "location", "score"],
        }},
        "hint": {"type": "string"},
    },
    "required": ["query", "results"],
}
READ_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "location": {"type": ["string", "null"]},
                   "base_dir": {"type": ["string", "null"]}, "content": {"type": "string"}},
    "required": ["name", "content"],
}


@hookimpl
def register_tools() -> Iterable[ToolSpec]:
    return [
        ToolSpec(
            name="skill_search",
            description=(
                "Find the skills that fit a task: keyword (BM25) search over skill names, "
                "descriptions and headings, blended with semantic similarity when embeddings "
                "are on. Returns the best matches with name, description and location; read "
                "the one that applies with skill_read."
            ),
            summary="Find skills for a task",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what the task is about, in a few words"},
                    "k": {"type": "integer", "minimum": 1, "maximum": 50,
                          "description": "how many results (default 5)"},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            handler=_search,
            output_schema=SEARCH_OUTPUT,
            idempotent=True,
        ),
        ToolSpec(
            name="skill_read",
            description=(
                "Read a skill's SKILL.md by name (with {baseDir} replaced by the skill's "
                "directory), then follow its instructions."
            ),
            summary="Read a skill's instructions",
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string", "description": "the skill's name"}},
                "required": ["name"],
                "additionalProperties": False,
            },
            handler=_read,
            output_schema=READ_OUTPUT,
            idempotent=True,
        ),
    ]


@hookimpl
def register_doctor_checks() -> Iterable[DoctorCheck]:
    from .checks import skills

    return [skills]
