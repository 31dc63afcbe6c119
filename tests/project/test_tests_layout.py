"""A test file sits with what it tests (docs/architecture.md, "Where a contribution goes"):
tests/plugins/<name>/ for the default plugin plugins/soulframe_<name>, tests/core/<area>/ for
the core, tests/project/ for checks of the repository as a whole. The top of tests/ holds
only the shared helpers (conftest.py, cli_runner.py, ...), which every directory imports by
name: tests/ is on pythonpath."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
# where a test_*.py may be, relative to tests/ ("*": one directory level of any name)
PLACES = ("project", "core/*", "plugins/*", "adversarial", "benchmarks")


def _test_files() -> list[Path]:
    return sorted(p.relative_to(TESTS) for p in TESTS.rglob("test_*.py"))


def _placed(rel: Path) -> bool:
    return any(rel.parent.match(place) and len(rel.parent.parts) == len(Path(place).parts)
               for place in PLACES)


def test_no_test_file_at_the_top_of_tests() -> None:
    top = [p.name for p in TESTS.glob("test_*.py")]
    assert not top, (
        f"{top} at the top of tests/: a test goes with what it tests, in tests/plugins/<name>/ "
        "(plugins/soulframe_<name>), tests/core/<area>/ or tests/project/ (docs/architecture.md)")


def test_every_test_file_is_in_a_known_place() -> None:
    stray = [str(p) for p in _test_files() if not _placed(p)]
    assert not stray, f"test files outside tests/{{{', '.join(PLACES)}}}/: {stray}"


def test_a_plugin_test_directory_names_a_default_plugin() -> None:
    plugins = {p.name.removeprefix("soulframe_") for p in (REPO / "plugins").glob("soulframe_*")
               if p.is_dir()}
    dirs = {p.name for p in (TESTS / "plugins").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert dirs - plugins == set(), (
        f"tests/plugins/{sorted(dirs - plugins)}: no such plugin (plugins/soulframe_<name>)")


def test_test_file_names_are_unique() -> None:
    # docs and docstrings name a test by its file name, and a subprocess may import one by it
    names = Counter(p.name for p in _test_files())
    twice = sorted(name for name, n in names.items() if n > 1)
    assert not twice, f"test file names used twice under tests/: {twice}"
