"""The skills page's facts: skills by tier with what each shadows, a skill search with its
scores, and the plugins with their hooks and registrations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from soulframe import kit as _plugins

if TYPE_CHECKING:
    # the inspector shows the engine's own view (the snapshot, shadowed skills, the mode)
    from soulframe import Agent


def skills_facts(agent: Agent, params: Mapping[str, str]) -> dict[str, Any]:
    skills = agent.skills
    snap = skills.snapshot()
    tiers: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for s in snap.skills:
        tiers.setdefault((s.tier, s.tier_name), []).append({
            "name": s.name, "description": s.description, "location": str(s.path),
            "shadows": [f"{x.tier} {x.tier_name}: {x.path}" for x in skills.shadowed(s.name)],
        })
    query = (params.get("q") or "").strip()
    hits = []
    if query:
        found = skills.search(query)
        top = max((h.score for h in found), default=1.0) or 1.0
        hits = [{"name": h.name, "description": h.description, "score": h.score, "share": h.score / top,
                 "text_score": h.text_score, "vector_score": h.vector_score} for h in found]
    return {
        "tiers": [{"tier": t, "name": n, "skills": rows} for (t, n), rows in sorted(tiers.items())],
        "mode": skills.mode(),
        "problems": [{"path": p.path, "message": p.message} for p in snap.problems],
        "query": query,
        "hits": hits,
    }


def plugin_facts(pm: _plugins.PluginManager) -> dict[str, Any]:
    registered, overrides, failures = _plugins.what_each_registers(pm)
    return {
        "plugins": [
            {"name": i.name, "dist": i.dist or "local", "version": i.version or "",
             "hooks": list(i.hooks), "registers": registered.get(i.name, {}),
             "overrides": overrides.get(i.name, [])}
            for i in _plugins.list_plugins(pm)
        ],
        "plugin_problems": list(pm.load_errors) + failures,
    }
