"""No import cycle anywhere in the core or the default plugins (imports made only for type
checking aside): a cycle means two modules cannot be understood, tested or replaced apart.
Counting the imports made for type checking too, no circle holds more than five modules:
nothing below ``soulframe._engine.agent`` names ``Agent`` (it names the ``AgentLike`` protocol), so
the prompt, memory and skills code is not one knot."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[2]
PLUGINS = sorted(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["soulframe"])


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm).

    A package's ``__init__`` importing its own submodules is not a cycle: Python runs the
    package first either way, so those edges are left out."""
    modules = sorted(graph.modules)
    edges = {
        m: sorted(t for t in graph.find_modules_directly_imported_by(m)
                  if t in graph.modules and not t.startswith(m + "."))
        for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for m in modules:
        if m not in index:
            visit(m)
    return found


def test_no_import_cycle_in_core_or_plugins() -> None:
    graph = grimp.build_graph("soulframe", *PLUGINS, exclude_type_checking_imports=True, cache_dir=None)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


#: the longest circle allowed once imports made for type checking count (a protocol module and
#: the value types it names may refer to each other)
MAX_TYPED_CIRCLE = 5


def test_no_long_import_circle_counting_type_checking_imports() -> None:
    graph = grimp.build_graph("soulframe", *PLUGINS, exclude_type_checking_imports=False, cache_dir=None)
    long = [c for c in cycles(graph) if len(c) > MAX_TYPED_CIRCLE]
    assert not long, "import circles over five modules, TYPE_CHECKING imports counted:\n" + "\n".join(
        f"{len(c)}: " + " <-> ".join(c) for c in long)


def test_model_names_no_engine_module() -> None:
    """The catalogue of shared types names, for type checking, only the engine memo and the
    memory result types it hands out, never the agent, prompt, memory or skills code."""
    graph = grimp.build_graph("soulframe", exclude_type_checking_imports=False, cache_dir=None)
    named = {m for m in graph.find_modules_directly_imported_by("soulframe._engine.model") if m.startswith("soulframe")}
    assert named <= {"soulframe._engine.agentcache", "soulframe._engine.memory.results", "soulframe._engine.paths"}, named


def test_the_cycle_finder_counts_type_checking_imports(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "typedloop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n")
    (pkg / "b.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cycles(grimp.build_graph("typedloop", exclude_type_checking_imports=False, cache_dir=None)) == [
        ["typedloop.a", "typedloop.b"]]
    assert cycles(grimp.build_graph("typedloop", exclude_type_checking_imports=True, cache_dir=None)) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "loopy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "c.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("loopy", cache_dir=None)
    assert cycles(graph) == [["loopy.a", "loopy.b"]]
