"""The prompt page's facts: one session's prompt by section, and two session kinds side by side."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from soulframe import PROMPT_MODES, SESSION_KINDS, Session, SystemPrompt

if TYPE_CHECKING:
    from soulframe import AgentLike


class BadRequest(ValueError):
    """A query parameter the page cannot use (the message says which and why)."""


def session_from(params: Mapping[str, str], prefix: str = "") -> tuple[Session, str | None, int | None]:
    """The session, forced mode and budget a form asked for; unknown values are refused by
    name rather than silently replaced. ``prefix`` names the kind and mode of one side of a
    comparison (``a_kind``); user, channel, title and budget are shared."""
    # `session=` is what people type for the kind (as in `prompt --session`): read it too,
    # so `session=boss` is refused by name instead of quietly showing the main session
    field = prefix + ("session" if params.get(prefix + "session") and not params.get(prefix + "kind")
                      else "kind")
    kind = params.get(field) or "main"
    if kind not in SESSION_KINDS:
        raise BadRequest(f"{field}={kind!r}: not a session kind ({', '.join(SESSION_KINDS)})")
    mode = params.get(prefix + "mode") or None
    if mode is not None and mode not in PROMPT_MODES:
        raise BadRequest(f"mode={mode!r}: not a prompt mode ({', '.join(PROMPT_MODES)})")
    raw_budget = params.get("budget") or ""
    budget: int | None = None
    if raw_budget:
        if not raw_budget.isdigit() or int(raw_budget) < 1:
            raise BadRequest(f"budget={raw_budget!r}: expected a whole number of tokens ≥ 1")
        budget = int(raw_budget)
    title = params.get("title") or None
    session = Session(kind=kind, user_id=params.get("user") or None,  # type: ignore[arg-type]
                      channel=params.get("channel") or None,
                      chat_title=title if kind == "group" else None)
    return session, mode, budget


def prompt_facts(agent: AgentLike, session: Session, mode: str | None, budget: int | None) -> dict[str, Any]:
    """Everything the prompt page shows for one session: sections in prompt order with the
    cache boundary, tokens against the budget, the context files, and what was cut."""
    from soulframe.kit import section_table

    prompt = agent.system_prompt(session, mode=mode, budget_tokens=budget)
    known = {s.name: s for s in section_table(agent).sections}
    scale = max(prompt.budget_tokens or 0, prompt.tokens, 1)
    present = {s.name for s in prompt.sections}
    rows: list[dict[str, Any]] = [
        {"name": s.name, "order": s.order, "zone": s.zone, "tokens": s.tokens, "chars": len(s.text),
         "plugin": s.plugin, "text": s.text, "share": s.tokens / scale,
         "cut": "truncated" if s.truncated else "",
         "original_tokens": s.original_tokens}
        for s in prompt.sections
    ]
    for n in prompt.notices:
        sec = known.get(n.name)
        if n.kept_chars == 0 and sec is not None and n.name not in present:
            rows.append({"name": n.name, "order": sec.order, "zone": sec.zone, "tokens": 0,
                         "chars": n.original_chars, "plugin": sec.plugin, "text": "", "share": 0.0,
                         "cut": "dropped", "original_tokens": None})
    rows.sort(key=lambda r: (r["zone"] != "stable", r["order"]))
    stable = sum(r["tokens"] for r in rows if r["zone"] == "stable")
    return {
        "prompt": prompt,
        "rows": rows,
        "boundary_after": max((i for i, r in enumerate(rows) if r["zone"] == "stable"), default=-1),
        "files": [
            {"name": f.name, "source": f.source, "scope": f.scope, "chars": len(f.content),
             "truncated": f.truncated, "original_chars": f.original_chars}
            for f in prompt.context_files
        ],
        "notices": [
            {"name": n.name, "why": n.hint or f"{n.kept_chars:,} of {n.original_chars:,} characters kept",
             "dropped": n.kept_chars == 0}
            for n in prompt.notices
        ],
        "stable_tokens": stable,
        "dynamic_tokens": prompt.tokens - stable,
        "budget_share": (prompt.tokens / prompt.budget_tokens) if prompt.budget_tokens else None,
    }


def prompt_diff(a: SystemPrompt, b: SystemPrompt) -> dict[str, Any]:
    """Two prompts side by side: each section's tokens in both, the context files each
    has, and a unified diff of the texts."""
    sa = {s.name: s for s in a.sections}
    sb = {s.name: s for s in b.sections}
    order = sorted(set(sa) | set(sb), key=lambda n: (sa.get(n) or sb[n]).order)
    sections = []
    for name in order:
        x, y = sa.get(name), sb.get(name)
        change = ("only in A" if y is None else "only in B" if x is None
                  else "same" if x.text == y.text else "changed")
        sections.append({"name": name, "a": x.tokens if x else None, "b": y.tokens if y else None,
                         "change": change})
    fa = {f.name for f in a.context_files}
    fb = {f.name for f in b.context_files}
    files = [{"name": n, "a": n in fa, "b": n in fb} for n in sorted(fa | fb)]
    lines = list(difflib.unified_diff(a.text.splitlines(), b.text.splitlines(),
                                      f"{a.session.kind} ({a.mode})", f"{b.session.kind} ({b.mode})",
                                      lineterm="", n=2))
    return {"a": a, "b": b, "sections": sections, "files": files, "diff": lines}
