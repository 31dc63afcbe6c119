"""Entity pages: ``bank/entities/<name>.md``, one per person, place or project, collecting
the facts consolidation promoted about it, each with its citation (seed 003 §2.2)::

    # Priya

    - Books the team's flights for offsites (source: memory/2026-11-02.md#L4, 2026-11-23)

Off by default (``memory.consolidate.entities``): the model is asked to name the entities
of each fact it promotes. When on, the pages are indexed (private, like MEMORY.md) and a
search whose question names an entity ranks its page's facts first.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .files import ENTITY_DIR

_TITLE = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60]


def page_names(root: Path) -> dict[str, str]:
    """Entity name (lower case) -> page path, from each page's ``# Title`` (or its file name)."""
    folder = root / ENTITY_DIR
    if not folder.is_dir():
        return {}
    out: dict[str, str] = {}
    for p in sorted(folder.glob("*.md")):
        if p.is_symlink():
            continue
        try:
            head = p.read_text(encoding="utf-8", errors="replace")[:400]
        except OSError:
            continue
        m = _TITLE.search(head)
        name = (m.group(1) if m else p.stem.replace("-", " ")).strip().lower()
        if name:
            out[name] = f"{ENTITY_DIR}/{p.name}"
    return out


def pages_named_in(root: Path, query: str) -> set[str]:
    """The pages whose entity the query names (whole words, case-insensitive)."""
    q = " ".join(re.findall(r"\w+", query.lower()))
    found = set()
    for name, path in page_names(root).items():
        words = " ".join(re.findall(r"\w+", name))
        if words and re.search(rf"(?<!\w){re.escape(words)}(?!\w)", q):
            found.add(path)
    return found


def add_fact(memory: Any, name: str, line: str) -> str:
    """Append ``line`` to the entity's page (created with a ``# Name`` title) through
    ``memory.append_to`` (no path out of the workspace)."""
    rel = f"{ENTITY_DIR}/{slug(name) or 'entity'}.md"
    memory.append_to(rel, line.rstrip("\n") + "\n", heading=f"# {' '.join(name.split())}\n\n")
    return rel


__all__ = ["ENTITY_DIR", "add_fact", "page_names", "pages_named_in", "slug"]
