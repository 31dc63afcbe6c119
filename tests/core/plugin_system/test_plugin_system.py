"""The plugin system as a user and a plugin author meet it: entry-point discovery, load
order, disabling, overrides, and plugins that are broken."""

from __future__ import annotations

import json
import os
import textwrap
import warnings
from pathlib import Path

import pytest
from soulframe import Section, SkillSource, hookimpl
from soulframe._engine.model import ConfigError, Registration, UnknownNameError
from soulframe._engine.plugins import (
    PluginWarning,
    collect_named,
    list_plugins,
    make_plugin_manager,
    ordered_entry_points,
    select,
)


def make_dist(site: Path, dist: str, module: str, code: str, ep_name: str | None = None) -> None:
    """Install a distribution the way pip leaves it on disk (a module plus a .dist-info with
    METADATA and entry_points.txt), into a directory that is put on PYTHONPATH."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(code))
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[soulframe]\n{ep_name or module} = {module}\n")


def pythonpath(site: Path) -> dict[str, str]:
    """The environment that installs ``site``'s distributions. The CLI calls given it run
    as a real process (``process=True``): only a new interpreter puts PYTHONPATH on sys.path
    and finds the entry points there, and in this one the plugin's module would stay
    imported into the next test."""
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


# --------------------------------------------------------------------------- discovery


def test_default_plugins_come_from_entry_points() -> None:
    eps = ordered_entry_points()
    own = [ep for ep in eps if ep.dist is not None and ep.dist.name == "soulframe"]
    assert own, "soulframe's default plugins must be registered as entry points"
    assert all(ep.name.startswith("soulframe_") for ep in own)
    # soulframe's own plugins load first, then third parties sorted by distribution
    dists = [ep.dist.name.lower() for ep in eps if ep.dist is not None]
    first_third_party = next((i for i, d in enumerate(dists) if d != "soulframe"), len(dists))
    assert all(d == "soulframe" for d in dists[:first_third_party])
    assert dists[first_third_party:] == sorted(dists[first_third_party:])


def test_plugins_command_lists_defaults_and_example(cli) -> None:
    out = cli("plugins", "--json", "--all", check=True)
    rows = json.loads(out.stdout)
    by_name = {r["name"]: r for r in rows}
    assert by_name["soulframe_workspace"]["dist"] == "soulframe"
    qh = by_name["soulframe_quiet_hours"]
    assert qh["dist"] == "soulframe-quiet-hours"
    assert "register_prompt_sections" in qh["hooks"]
    assert qh["registers"]["sections"] == ["quiet_hours"]
    # and the commands each adds: its own, or a subcommand of a group another one owns
    assert qh["registers"]["commands"] == ["quiet-hours"]
    assert "memory flush" in by_name["soulframe_memory"]["registers"]["commands"]
    # without --all, JSON lists third-party plugins only (as `llm plugins` does)
    third = json.loads(cli("plugins", "--json", check=True).stdout)
    assert {r["name"] for r in third} == {r["name"] for r in rows if r["dist"] != "soulframe"}


def test_plugins_filtered_by_a_misspelt_hook_is_an_error_with_a_hint(cli) -> None:
    """It said "no third-party plugins installed", sending the author to reinstall."""
    out = cli("plugins", "--hook", "register_prompt_section")
    assert out.returncode == 2
    assert "no hook is named 'register_prompt_section' (did you mean 'register_prompt_sections'?)" in out.stderr
    rows = json.loads(cli("plugins", "--json", "--hook", "register_prompt_sections", check=True).stdout)
    assert "soulframe_quiet_hours" in {r["name"] for r in rows}


def test_plugins_does_not_say_none_is_installed_when_one_failed_to_load(tmp_path: Path, cli) -> None:
    site = tmp_path / "site"
    make_dist(site, "soulframe-broken", "soulframe_broken", "raise ImportError('no module named tidal')\n")
    env = {**pythonpath(site), "SOULFRAME_DISABLE_PLUGINS": "soulframe_quiet_hours"}
    out = cli("plugins", env=env, process=True)
    assert out.returncode == 0, out.stderr
    assert "no third-party plugins installed" not in out.stdout
    assert "soulframe_broken  (soulframe-broken 0.1)\n    not loaded (the problem is below)" in out.stdout
    assert "problem: plugin 'soulframe_broken' from distribution soulframe-broken 0.1 could not be loaded" in out.stdout


def test_provides_refuses_what_it_cannot_offer() -> None:
    """A typo (store=) offered nothing: a contract test then ran against the default store."""
    from soulframe.testing import Provides

    with pytest.raises(TypeError, match="Provides offers stores, embedding_providers, prompt_sections, not store"):
        Provides(store=[Registration("mine", factory=lambda agent: None)])


def test_disabled_in_config_removes_the_plugin(cli, workspace: Path) -> None:
    (workspace / "soulframe.toml").write_text('[plugins]\ndisabled = ["soulframe_quiet_hours"]\n')
    rows = json.loads(cli("-w", str(workspace), "plugins", "--json", check=True).stdout)
    assert "soulframe_quiet_hours" not in {r["name"] for r in rows}
    out = cli("-w", str(workspace), "quiet-hours")
    assert out.returncode != 0 and "No such command" in out.stderr


def test_disabled_by_environment(cli) -> None:
    rows = json.loads(cli("plugins", "--json", env={"SOULFRAME_DISABLE_PLUGINS": "soulframe_quiet_hours"},
                          check=True).stdout)
    assert rows == []


def test_disabling_an_unknown_name_is_an_error_with_a_hint(cli, workspace: Path) -> None:
    (workspace / "soulframe.toml").write_text('[plugins]\ndisabled = ["soulframe_quiet_hour"]\n')
    out = cli("-w", str(workspace), "plugins")
    assert out.returncode == 2
    assert "no installed plugin is named 'soulframe_quiet_hour'" in out.stderr
    assert "did you mean 'soulframe_quiet_hours'" in out.stderr


# --------------------------------------------------------------------------- broken plugins


def test_broken_plugin_gives_one_warning_and_the_rest_works(cli, tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "soulframe-broken", "soulframe_broken", "import no_such_module_anywhere\n")
    out = cli("plugins", "--json", env=pythonpath(site), process=True)
    assert out.returncode == 0, out.stderr
    warnings_ = [line for line in out.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings_) == 1, out.stderr
    assert "soulframe_broken" in warnings_[0] and "soulframe-broken" in warnings_[0]
    assert "ModuleNotFoundError" in warnings_[0]
    assert warnings_[0].endswith("(disable it with plugins.disabled = ['soulframe_broken'])")
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["soulframe_quiet_hours"]["loaded"] and rows["soulframe_quiet_hours"]["problems"] == []
    # a script reading --json sees the broken plugin as well, with why (it was left out)
    assert rows["soulframe_broken"] == {
        "name": "soulframe_broken", "dist": "soulframe-broken", "version": "0.1", "hooks": [],
        "registers": {}, "overrides": [], "loaded": False, "problems": [warnings_[0].removeprefix("warning: ")]}
    text = cli("plugins", env=pythonpath(site), process=True)
    assert "soulframe_broken  (soulframe-broken 0.1)\n    not loaded (the problem is below)\n" in text.stdout
    assert "problem: plugin 'soulframe_broken' from distribution soulframe-broken 0.1 could not" in text.stdout


def test_plugin_with_a_bad_hook_signature_is_skipped(cli, tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "soulframe-badsig", "soulframe_badsig", """
        from soulframe import hookimpl

        @hookimpl
        def register_prompt_sections(not_an_argument_of_the_spec):
            return []
    """)
    out = cli("plugins", "--json", env=pythonpath(site), process=True)
    assert out.returncode == 0, out.stderr
    assert "soulframe_badsig" in out.stderr and "not_an_argument_of_the_spec" in out.stderr
    badsig = next(r for r in json.loads(out.stdout) if r["name"] == "soulframe_badsig")
    assert not badsig["loaded"] and "not_an_argument_of_the_spec" in badsig["problems"][0]


def test_misspelled_hook_fails_loudly(tmp_path: Path) -> None:
    class Typo:
        __name__ = "typo_plugin"

        @hookimpl
        def register_store(self):  # the hook is register_stores
            return []

    import pluggy

    with pytest.raises(pluggy.PluginValidationError, match="register_store"):
        make_plugin_manager(load_entrypoints=False, plugins=[Typo()])


def test_misspelled_hook_in_a_third_party_plugin_is_a_warning(cli, tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "soulframe-typo", "soulframe_typo", """
        from soulframe import hookimpl

        @hookimpl
        def register_prompt_section():
            return []
    """)
    out = cli("plugins", "--json", env=pythonpath(site), process=True)
    assert out.returncode == 0
    assert "unknown hook 'register_prompt_section'" in out.stderr
    assert "(did you mean 'register_prompt_sections'?)" in out.stderr


# --------------------------------------------------------------------------- named registries


def _section(name: str, text: str) -> Section:
    return Section(name=name, order=8, render=lambda ctx: text)


def test_same_name_later_plugin_wins_with_a_warning() -> None:
    class First:
        __name__ = "first"

        @hookimpl
        def register_prompt_sections(self):
            return [_section("time", "first")]

    class Second:
        __name__ = "second"

        @hookimpl
        def register_prompt_sections(self):
            return [_section("time", "second")]

    pm = make_plugin_manager(load_entrypoints=False, plugins=[First(), Second()])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sections = collect_named(pm, "register_prompt_sections")
    assert sections["time"].render(None) == "second"
    assert sections["time"].plugin == "second"
    assert any("'second' replaces the one from 'first'" in str(w.message) for w in caught)
    assert any(issubclass(w.category, PluginWarning) for w in caught)
    assert pm.overrides and "time" in pm.overrides[0]


def test_a_hook_may_yield_what_it_registers_as_the_hookspecs_say() -> None:
    """The hookspecs return ``Iterable[Section]``: a generator type-checks, and was refused
    as 'returned generator, expected a list (return [item], not item)'."""

    class Yields:
        __name__ = "yields"

        @hookimpl
        def register_prompt_sections(self):
            yield _section("tides", "## Tides")

    class Breaks:
        __name__ = "breaks"

        @hookimpl
        def register_prompt_sections(self):
            yield _section("weather", "## Weather")
            raise RuntimeError("forecast offline")

    pm = make_plugin_manager(load_entrypoints=False, plugins=[Yields(), Breaks()])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sections = collect_named(pm, "register_prompt_sections")
    assert list(sections) == ["tides"]  # and none of a generator that broke half-way
    assert [str(w.message) for w in caught] == [
        "plugin 'breaks': register_prompt_sections failed and what it registers was skipped: "
        "RuntimeError: forecast offline (disable it with plugins.disabled = ['breaks'])"]


def test_tryfirst_still_works_as_pluggy_documents() -> None:
    class Early:
        __name__ = "early"

        @hookimpl(tryfirst=True)
        def register_prompt_sections(self):
            return [_section("time", "early-but-tryfirst")]

    class Late:
        __name__ = "late"

        @hookimpl
        def register_prompt_sections(self):
            return [_section("time", "late")]

    pm = make_plugin_manager(load_entrypoints=False, plugins=[Early(), Late()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert collect_named(pm, "register_prompt_sections")["time"].render(None) == "early-but-tryfirst"


def test_unknown_store_name_lists_what_is_available_and_the_extra() -> None:
    registry = {
        "sqlite": Registration("sqlite", factory=lambda agent: None),
        "postgres": Registration("postgres", factory=lambda agent: None, extra="postgres"),
    }
    with pytest.raises(UnknownNameError) as err:
        select(registry, "postgress", key="store.backend", kind="store", origin="soulframe.toml:3")
    message = str(err.value)
    assert "soulframe.toml:3: store.backend = 'postgress' — no such store" in message
    assert "did you mean 'postgres'" in message
    assert "postgres (soulframe[postgres])" in message and "sqlite" in message


def test_list_plugins_reports_distribution_and_hooks() -> None:
    pm = make_plugin_manager()
    infos = {i.name: i for i in list_plugins(pm)}
    assert infos["soulframe_quiet_hours"].dist == "soulframe-quiet-hours"
    assert infos["soulframe_quiet_hours"].version == "0.1.0"
    assert "register_commands" in infos["soulframe_quiet_hours"].hooks


def test_a_plugins_own_tests_may_name_the_module_it_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              request: pytest.FixtureRequest) -> None:
    """An author who ran `pip install -e .` and wrote `make_agent(ws, plugins=[my_plugin])`
    got pluggy's "Plugin name already registered" and a dump of every plugin: the entry
    point had loaded that very module already."""
    import sys

    from soulframe import Session, SoulframeError
    from soulframe.testing import make_agent

    site = tmp_path / "site"
    make_dist(site, "soulframe-tides", "soulframe_tides", """
        from soulframe import Section, hookimpl

        @hookimpl
        def register_prompt_sections():
            return [Section(name="tides", order=8.6, render=lambda ctx: "## Tides\\nLow at noon.")]
    """)
    monkeypatch.syspath_prepend(str(site))
    request.addfinalizer(lambda: sys.modules.pop("soulframe_tides", None))
    import soulframe_tides  # type: ignore[import-not-found]

    with make_agent(tmp_path / "ws", plugins=[soulframe_tides]) as agent:
        shown = [s for s in agent.system_prompt(Session.main()).sections if s.name == "tides"]
    assert [(s.plugin, s.text) for s in shown] == [("soulframe_tides", "## Tides\nLow at noon.")]

    class Impostor:
        __name__ = "soulframe_tides"

    with pytest.raises(SoulframeError) as err:
        make_plugin_manager(plugins=[Impostor()])
    assert str(err.value) == ("plugin name 'soulframe_tides' is taken by the installed plugin from "
                              "soulframe-tides: give this one another __name__, or leave the installed one "
                              "out (disabled=['soulframe_tides'])")


def test_an_entry_point_naming_a_class_says_to_name_an_instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                request: pytest.FixtureRequest) -> None:
    """`tides = "soulframe_tides_cls:Tides"` loaded the class: each of its hooks then failed,
    on every use, with "missing 1 required positional argument: 'self'"."""
    import sys

    site = tmp_path / "site"
    make_dist(site, "soulframe-tides-cls", "soulframe_tides_cls", """
        from soulframe import Section, hookimpl

        class Tides:
            @hookimpl
            def register_prompt_sections(self):
                return [Section(name="tides", order=8.6, render=lambda ctx: "## Tides")]
    """)
    (site / "soulframe_tides_cls-0.1.dist-info" / "entry_points.txt").write_text(
        "[soulframe]\nsoulframe_tides_cls = soulframe_tides_cls:Tides\n")
    monkeypatch.syspath_prepend(str(site))
    request.addfinalizer(lambda: sys.modules.pop("soulframe_tides_cls", None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pm = make_plugin_manager()
    assert pm.get_plugin("soulframe_tides_cls") is None
    assert [str(w.message) for w in caught if "tides" in str(w.message)] == [
        "plugin 'soulframe_tides_cls' from distribution soulframe-tides-cls 0.1 could not be loaded and was "
        "skipped: TypeError: the entry point 'soulframe_tides_cls:Tides' names the class Tides; name the module, "
        "or an instance of the class (plugin = Tides()) (disable it with plugins.disabled = ['soulframe_tides_cls'])"]


def test_a_plugin_whose_hooks_lack_the_marker_is_told_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         request: pytest.FixtureRequest) -> None:
    """Without @soulframe.hookimpl pluggy ignores a function, even one named like a hook: the
    plugin was listed with no hooks, did nothing, and nothing said why."""
    import sys

    site = tmp_path / "site"
    make_dist(site, "soulframe-unmarked", "soulframe_unmarked", """
        from soulframe import Section

        def register_prompt_sections():
            return [Section(name="tides", order=8.6, render=lambda ctx: "## Tides")]
    """)
    monkeypatch.syspath_prepend(str(site))
    request.addfinalizer(lambda: sys.modules.pop("soulframe_unmarked", None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_plugin_manager()
    assert [str(w.message) for w in caught if "unmarked" in str(w.message)] == [
        "plugin 'soulframe_unmarked' from distribution soulframe-unmarked 0.1 implements no hook: "
        "register_prompt_sections needs the @soulframe.hookimpl decorator"]


def test_a_warning_about_a_plugin_points_at_the_plugins_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 request: pytest.FixtureRequest) -> None:
    """`python -W default` showed a failing hook's warning at soulframe's plugins.py (the
    line that called pluggy), a line no plugin author can act on; and a filter by the
    plugin's module could not reach it."""
    import sys

    from soulframe import Session
    from soulframe.testing import make_agent

    site = tmp_path / "site"
    make_dist(site, "soulframe-gusts", "soulframe_gusts", """
        from soulframe import hookimpl

        @hookimpl
        def register_prompt_sections():
            raise RuntimeError("no wind data")

        @hookimpl
        def register_tools():
            return "wind"
    """)
    make_dist(site, "soulframe-calm", "soulframe_calm", "import os\nimport no_such_module_for_calm\n")
    monkeypatch.syspath_prepend(str(site))
    request.addfinalizer(lambda: sys.modules.pop("soulframe_gusts", None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with make_agent(tmp_path / "ws") as agent:
            agent.system_prompt(Session.main())
            agent.tools(Session.main())
    where = sorted({(Path(w.filename).name, w.lineno) for w in caught
                    if "gusts" in str(w.message) or "calm" in str(w.message)})
    # the import that failed; the raise; the hook that returned a string (its decorator line)
    assert where == [("soulframe_calm.py", 2), ("soulframe_gusts.py", 6), ("soulframe_gusts.py", 8)]
    with warnings.catch_warnings(record=True) as quiet:  # a filter by the plugin's module reaches it
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="soulframe_gusts")
        with make_agent(tmp_path / "ws2") as agent:
            agent.system_prompt(Session.main())
    assert not [w for w in quiet if "gusts" in str(w.message)]


def test_blocked_plugins_are_never_imported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        make_plugin_manager(["no_such_plugin"])
    pm = make_plugin_manager(["soulframe_quiet_hours"])
    assert pm.get_plugin("soulframe_quiet_hours") is None
    assert pm.is_blocked("soulframe_quiet_hours")


# --------------------------------------------------------------------------- import lightness


@pytest.mark.parametrize("args", [["--version"], ["plugins"], ["--help"]])
def test_light_commands_do_not_import_heavy_modules(args: list[str], tmp_path: Path) -> None:
    probe = textwrap.dedent(f"""
        import sys
        from soulframe.cli import main
        try:
            main({args!r})
        except SystemExit:
            pass
        heavy = [m for m in ("numpy", "sqlite_vec", "psycopg", "tokenizers", "mcp", "sqlean")
                 if m in sys.modules]
        print("HEAVY=" + ",".join(heavy))
    """)
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY=" in out.stdout.splitlines(), out.stdout + out.stderr


def test_version(cli, tmp_path: Path) -> None:
    out = cli("--version", check=True)
    assert out.stdout.startswith("soulframe, version ")
    # after other options it is answered by the built CLI, with the same line
    ws = tmp_path / "ws"
    ws.mkdir()
    after = cli("-w", str(ws), "--version", check=True)
    assert after.stdout == out.stdout
    assert "--version" in cli("--help", check=True).stdout


def test_plugins_command_reports_an_override(cli, tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "soulframe-better-time", "soulframe_better_time", """
        from soulframe import Section, hookimpl

        @hookimpl
        def register_prompt_sections():
            return [Section(name="time", order=8, zone="dynamic", render=lambda ctx: "## Time\\nteatime")]
    """)
    out = cli("plugins", env=pythonpath(site), process=True)
    assert out.returncode == 0, out.stderr
    assert "overrides sections: time (replaces soulframe_sections's)" in out.stdout
    rows = json.loads(cli("plugins", "--json", env=pythonpath(site), process=True, check=True).stdout)
    better = next(r for r in rows if r["name"] == "soulframe_better_time")
    assert better["overrides"] == ["sections: time (replaces soulframe_sections's)"]
    # and the prompt uses the replacement
    prompt = cli("-w", str(tmp_path), "prompt", env=pythonpath(site), process=True, check=True)
    assert "teatime" in prompt.stdout


def test_a_plugin_command_cannot_take_a_name_that_is_taken(workspace: Path) -> None:
    """A plugin's `prompt` silently replaced soulframe's, and its `memory` took away every
    `soulframe memory ...` subcommand. The command that was there stays; the plugin's other
    commands are added; one warning names both owners."""
    import click
    from click.testing import CliRunner
    from soulframe.cli import build_cli

    class Hijack:
        __name__ = "hijack"

        @hookimpl
        def register_commands(self, cli):
            for name in ("prompt", "memory", "tides"):
                cli.add_command(click.Command(name, callback=lambda: click.echo("hijacked")))

    class Late:
        __name__ = "late"

        @hookimpl
        def register_commands(self, cli):
            cli.add_command(click.Command("tides", callback=lambda: click.echo("late tides")))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cli = build_cli(make_plugin_manager(plugins=[Hijack(), Late()]))
    said = [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]
    assert said == [
        f"plugin {plugin!r}: register_commands failed and what it registers was skipped: `soulframe {name}` "
        f"is {owner}'s already (give yours another name, or add a subcommand with soulframe.cli.command_group) "
        f"(disable it with plugins.disabled = [{plugin!r}])"
        for plugin, name, owner in (("hijack", "prompt", "soulframe"), ("hijack", "memory", "soulframe"),
                                    ("late", "tides", "hijack"))]
    (workspace / "MEMORY.md").write_text("# Memory\n- The heron visits the pond.\n")
    runner = CliRunner()
    assert "heron" in runner.invoke(cli, ["-w", str(workspace), "prompt"]).output
    assert runner.invoke(cli, ["-w", str(workspace), "memory", "status", "--json"]).exit_code == 0
    assert runner.invoke(cli, ["tides"]).output == "hijacked\n"


def test_each_cli_built_holds_only_its_own_plugins_commands() -> None:
    """The core's groups were module-level objects every build added to: a CLI built after
    another one in the same process (a plugin's tests, a host) still had `memory flush`
    with soulframe_memory disabled."""
    from soulframe.cli import build_cli

    everything = build_cli(make_plugin_manager())
    without = build_cli(make_plugin_manager(["soulframe_memory"]))
    assert "flush" in everything.commands["memory"].commands
    assert "flush" not in without.commands["memory"].commands
    assert "search" in without.commands["memory"].commands  # the core's own stay


def test_command_group_is_shared_between_plugins() -> None:
    import click
    from soulframe.cli import command_group

    cli = click.Group("soulframe")
    first = command_group(cli, "notes", "Notes.")
    assert command_group(cli, "notes", "ignored") is first
    cli.add_command(click.Command("plain"))
    with pytest.raises(Exception, match="it is a command, not a group"):
        command_group(cli, "plain", "x")


# --------------------------------------------------------------------------- the new seams


THIRD_PARTY = """
from soulframe import Registration, hookimpl
from soulframe._engine.config import K
from soulframe._engine.model import Finding


class Reverse:
    name = "reverse"

    def rerank(self, query, candidates):
        n = len(candidates)
        return [(i + 1) / n for i in range(n)]  # the last candidate first


class Explode:
    name = "explode"

    def rerank(self, query, candidates):
        raise RuntimeError("model file missing")


@hookimpl
def register_rerankers():
    return [Registration(name="reverse", factory=lambda agent: Reverse()),
            Registration(name="explode", factory=lambda agent: Explode())]


@hookimpl
def register_config_keys():
    return {"tidy.max_age_days": K(30, "days before a log is tidied", min=1)}


def stale_logs(agent):
    limit = agent.config.get("tidy.max_age_days")
    yield Finding("tidy", "warning", f"logs older than {limit} days are waiting")


@hookimpl
def register_doctor_checks():
    return [stale_logs]
"""


@pytest.fixture
def tidy_site(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    make_dist(site, "soulframe-tidy", "soulframe_tidy", THIRD_PARTY)
    return pythonpath(site)


def _memory_ws(workspace: Path, extra: str = "") -> Path:
    mem = workspace / "memory"
    mem.mkdir()
    (mem / "2026-01-01.md").write_text("# 2026-01-01\n- The boiler was serviced; the boiler is fine.\n")
    (mem / "2026-01-02.md").write_text("# 2026-01-02\n- Walked past the boiler shop.\n")
    (workspace / "soulframe.toml").write_text(
        f'[embedding]\nprovider = "none"\n[memory]\nmin_score = 0.0\n{extra}')
    return workspace


def test_a_reranker_from_an_entry_point_reorders_memory_search(cli, workspace: Path, tidy_site) -> None:
    ws = _memory_ws(workspace)
    plain = json.loads(cli("-w", str(ws), "memory", "search", "boiler", "--json",
                           env=tidy_site, process=True, check=True).stdout)
    (ws / "soulframe.toml").write_text((ws / "soulframe.toml").read_text() + 'reranker = "reverse"\n')
    out = cli("-w", str(ws), "memory", "search", "boiler", "--json", env=tidy_site, process=True, check=True)
    reranked = json.loads(out.stdout)
    order = [r["path"] for r in plain]
    assert len(order) == 2
    assert [r["path"] for r in reranked] == order[::-1]
    assert all("rerank_score" in r for r in reranked)


def test_a_failing_reranker_leaves_search_working_and_says_so(cli, workspace: Path, tidy_site) -> None:
    ws = _memory_ws(workspace, 'reranker = "explode"\n')
    out = cli("-w", str(ws), "memory", "search", "boiler", "--json", env=tidy_site, process=True)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 2
    assert "re-ranker 'explode' failed" in rows[0]["notice"] and "model file missing" in rows[0]["notice"]
    assert "re-ranker 'explode' failed" in out.stderr


def test_a_third_party_declares_config_keys_and_doctor_checks(cli, workspace: Path, tidy_site) -> None:
    (workspace / "soulframe.toml").write_text("[tidy]\nmax_age_days = 10\n")
    out = cli("-w", str(workspace), "doctor", "--json", env=tidy_site, process=True)
    found = json.loads(out.stdout)["findings"]
    assert {"check": "tidy", "level": "warning", "message": "logs older than 10 days are waiting",
            "path": None, "fix": None} in found
    shown = json.loads(cli("-w", str(workspace), "config", "show", "--json", env=tidy_site, process=True,
                           check=True).stdout)
    assert shown["settings"]["tidy.max_age_days"]["value"] == 10
    # typed validation with the file and line, exactly as for soulframe's own keys
    (workspace / "soulframe.toml").write_text("[tidy]\n\nmax_age_days = 0\n")
    bad = cli("-w", str(workspace), "doctor", env=tidy_site, process=True)
    assert bad.returncode == 2
    assert f"{workspace / 'soulframe.toml'} line 3: tidy.max_age_days = 0 — expected a number ≥ 1" in bad.stderr
    (workspace / "soulframe.toml").write_text("[tidy]\nmax_age_day = 3\n")
    typo = cli("-w", str(workspace), "doctor", env=tidy_site, process=True)
    assert typo.returncode == 2 and "did you mean 'tidy.max_age_days'" in typo.stderr


BROKEN_HOOKS = {
    "a register_commands that raises": ("""
        from soulframe import hookimpl

        @hookimpl
        def register_commands(cli):
            raise RuntimeError("no commands today")
    """, "register_commands failed and what it registers was skipped: RuntimeError: no commands today"),
    "a config key the core declares": ("""
        from soulframe import K, hookimpl

        @hookimpl
        def register_config_keys():
            return {"memory.max_results": K(5, "mine")}
    """, "config key 'memory.max_results' is declared already by the core"),
    "one section, not a list": ("""
        from soulframe import Section, hookimpl

        @hookimpl
        def register_prompt_sections():
            return Section(name="lonely", order=8.5, render=lambda ctx: "hi")
    """, "returned Section, expected a list"),
    "a section ordered by a word": ("""
        from soulframe import Section, hookimpl

        @hookimpl
        def register_prompt_sections():
            return [Section(name="wordy", order="nine", render=lambda ctx: "hi")]
    """, "register_prompt_sections failed and what it registers was skipped: TypeError"),
}


@pytest.mark.parametrize("case", list(BROKEN_HOOKS))
def test_a_plugin_whose_hook_fails_is_skipped_and_every_command_still_works(cli, tmp_path: Path,
                                                                          workspace: Path, case: str) -> None:
    """A third-party hook that raises, or returns what soulframe cannot use, costs only what
    it registers: one warning naming the plugin and how to disable it; `plugins` lists the
    failure, `prompt` and the other commands run."""
    code, said = BROKEN_HOOKS[case]
    site = tmp_path / "site"
    make_dist(site, "soulframe-brittle", "soulframe_brittle", code)
    env = pythonpath(site)
    shown = cli("plugins", env=env, process=True)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert said in shown.stderr and "plugins.disabled = ['soulframe_brittle']" in shown.stderr
    assert shown.stderr.count("warning: plugin 'soulframe_brittle'") == 1, shown.stderr  # said once
    prompt = cli("-w", str(workspace), "prompt", env=env, process=True)
    assert prompt.returncode == 0 and "Traceback" not in prompt.stderr, prompt.stderr
    assert "## " in prompt.stdout
    doctor = json.loads(cli("-w", str(workspace), "doctor", "--json", env=env, process=True).stdout)
    assert any(f["check"] == "plugins" and said in f["message"] for f in doctor["findings"]), doctor
    if "config key" in case:
        got = cli("-w", str(workspace), "config", "get", "memory.max_results", env=env, process=True)
        assert got.stdout.strip() == "6"  # the core's key, untouched


@pytest.mark.parametrize(("field", "value", "said"), [
    ("modes", frozenset({"ful"}), "modes must be a set of prompt modes (full, task, minimal, none), "
                                  "not frozenset({'ful'})"),
    ("modes", "full", "modes must be a set of prompt modes (full, task, minimal, none), not 'full'"),
    ("zone", "Dynamic", "zone must be 'stable' or 'dynamic', not 'Dynamic'"),
    ("truncate_priority", "low", "truncate_priority must be an int or None, not 'low'"),
])
def test_a_section_with_a_misspelt_field_is_named_where_the_plugin_builds_it(field: str, value: object,
                                                                             said: str) -> None:
    """Each was silent: a misspelt mode left the section out of every prompt, an unknown
    zone put it below the cache boundary, a priority that is not a number failed only once
    a prompt went over budget."""

    class Misspelt:
        __name__ = "misspelt"

        @hookimpl
        def register_prompt_sections(self):
            return [Section(name="tides", order=8.6, render=lambda ctx: "## Tides\nLow at noon.",
                            **{field: value})]

    pm = make_plugin_manager(load_entrypoints=False, plugins=[Misspelt()])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert collect_named(pm, "register_prompt_sections") == {}
    assert [str(w.message) for w in caught] == [
        "plugin 'misspelt': register_prompt_sections failed and what it registers was skipped: "
        f"TypeError: section 'tides': {said} (disable it with plugins.disabled = ['misspelt'])"]


def test_a_section_takes_its_modes_in_any_collection() -> None:
    assert Section(name="tides", order=8.6, render=str, modes=["full", "task"]).modes == {"full", "task"}


@pytest.mark.parametrize(("offered", "said"), [
    (lambda: SkillSource(name="recipes", tier="high", load=list),
     "TypeError: skill source 'recipes': tier must be an int (1 highest ... 5 lowest), not 'high'"),
    (lambda: Path("/srv/recipes"), "returned a PosixPath, expected SkillSource objects"),
], ids=["tier not a number", "a path, not a source"])
def test_a_wrong_skill_source_costs_only_its_own_skills(workspace: Path, offered, said: str) -> None:
    """Both were a traceback from every command that lists skills (and every prompt)."""
    from soulframe.testing import make_agent

    class Recipes:
        __name__ = "recipes"

        @hookimpl
        def register_skill_sources(self, agent):
            return [offered()]

    with make_agent(workspace, plugins=[Recipes()]) as agent, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "write-a-skill" in agent.skills.names()  # the built-in skills are still there
    assert [str(w.message) for w in caught if issubclass(w.category, PluginWarning)] == [
        f"plugin 'recipes': register_skill_sources failed and what it registers was skipped: {said} "
        "(disable it with plugins.disabled = ['recipes'])"]


def test_a_section_whose_render_returns_a_number_is_named_in_one_line(cli, tmp_path: Path,
                                                                      workspace: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "soulframe-numeric", "soulframe_numeric", """
        from soulframe import Section, hookimpl

        @hookimpl
        def register_prompt_sections():
            return [Section(name="numeric", order=8.5, render=lambda ctx: 42)]
    """)
    out = cli("-w", str(workspace), "prompt", env=pythonpath(site), process=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert ("prompt section 'numeric' from plugin 'soulframe_numeric' failed: TypeError: render returned "
            "int, expected str or None (disable it with plugins.disabled = ['soulframe_numeric'])") in out.stderr


def test_tracing_hooks_writes_to_stderr_and_names_each_plugin(cli, workspace: Path) -> None:
    """SOULFRAME_TRACE_PLUGINS=1 lists every hook call, one short line each, on stderr: the
    JSON a script reads from stdout stays JSON."""
    out = cli("-w", str(workspace), "memory", "status", "--json", env={"SOULFRAME_TRACE_PLUGINS": "1"},
              process=True)
    assert out.returncode == 0, out.stderr
    json.loads(out.stdout)
    lines = out.stderr.splitlines()
    assert any(ln.startswith("register_commands [soulframe_memory] cli") for ln in lines), out.stderr[:2000]
    assert any(ln.startswith("register_config_keys [soulframe_memory]") for ln in lines)
    assert all(len(ln) <= 240 for ln in lines)


# --------------------------------------------------------------------------- observers


class LoudObserver:
    """A third-party plugin whose every observer hook raises."""

    __name__ = "loud_observer"

    @hookimpl
    def session_ended(self, agent, session, messages):
        raise RuntimeError("transcript upload failed")

    @hookimpl
    def prompt_built(self, agent, prompt):
        raise RuntimeError("metrics server down")

    @hookimpl
    def memory_indexed(self, agent, report):
        raise RuntimeError("webhook refused")

    @hookimpl
    def workspace_initialized(self, root, download, echo):
        raise RuntimeError("no network")


def _warned(caught: list[warnings.WarningMessage], hook: str) -> list[str]:
    return [str(w.message) for w in caught
            if issubclass(w.category, PluginWarning) and f"plugin 'loud_observer': {hook} failed" in str(w.message)]


def test_an_observer_that_raises_cannot_keep_the_conversation_from_being_saved(workspace: Path) -> None:
    """pluggy calls the last-loaded plugin first and stops at its exception: soulframe's own
    session_ended, which saves the conversation to memory, never ran."""
    from soulframe import Session
    from soulframe.testing import make_agent

    talk = [{"role": "user", "content": "Book the dentist for Tuesday."},
            {"role": "assistant", "content": "Booked Dr. Weber, Tuesday 9:00."}]
    with make_agent(workspace, plugins=[LoudObserver()]) as agent, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent.end_session(Session.main(), talk)
    saved = list((workspace / "sessions").glob("*-book-the-dentist*.md"))
    assert len(saved) == 1 and "Dr. Weber, Tuesday 9:00" in saved[0].read_text()
    said = _warned(caught, "session_ended")
    assert said == ["plugin 'loud_observer': session_ended failed: RuntimeError: transcript upload failed "
                    "(disable it with plugins.disabled = ['loud_observer'])"]


def test_an_observer_that_raises_leaves_prompts_and_indexing_working(workspace: Path) -> None:
    from soulframe import Session
    from soulframe.testing import make_agent

    (workspace / "MEMORY.md").write_text("# Memory\n- The heron visits the pond on Tuesdays.\n")
    with make_agent(workspace, plugins=[LoudObserver()]) as agent, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "heron" in agent.system_prompt(Session.main()).text
        assert agent.memory.sync().added == ["MEMORY.md"]
        assert agent.memory.search("heron pond", min_score=0)[0].path == "MEMORY.md"
    assert _warned(caught, "prompt_built") and _warned(caught, "memory_indexed")


def test_an_observer_that_raises_does_not_fail_init_nor_stop_the_model_setup(tmp_path: Path) -> None:
    """The hookspec's promise: a workspace_initialized failure must not make ``init`` fail.
    soulframe's own (the offline model's set-up) still runs and says what it did."""
    from click.testing import CliRunner
    from soulframe.cli import build_cli

    cli = build_cli(make_plugin_manager(plugins=[LoudObserver()]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(cli, ["init", str(tmp_path / "agent"), "--no-download"])
    assert result.exit_code == 0, result.output
    assert "semantic search" in result.output  # the embeddings plugin's line
    assert _warned(caught, "workspace_initialized")


# --------------------------------------------------------------------------- factories


class Half:
    """What a plugin's factory builds by mistake: an object with a name and nothing else."""

    name = "half"


def _driver_missing(agent):
    raise RuntimeError("driver missing")


class Factories:
    """A third-party plugin offering, in every registry, one factory that raises ('broken')
    and one that builds a `Half` ('half')."""

    __name__ = "factories"

    def _both(self):
        return [Registration("broken", _driver_missing), Registration("half", lambda agent: Half())]

    @hookimpl
    def register_truncation_policies(self):
        return self._both()

    @hookimpl
    def register_token_estimators(self):
        return self._both()

    @hookimpl
    def register_chunkers(self):
        return self._both()

    @hookimpl
    def register_chat_models(self):
        return self._both()

    @hookimpl
    def register_stores(self):
        return self._both()

    @hookimpl
    def register_rerankers(self):
        return self._both()


class Strings:
    """A context source whose files are names, not ContextFile objects."""

    name = "strings"

    def load(self, agent, session):
        return ["NOTES.md"]


class Sources(Factories):
    __name__ = "factories"

    @hookimpl
    def register_context_sources(self):
        return [*self._both(), Registration("strings", lambda agent: Strings())]


def _use(agent, key: str) -> None:
    from soulframe import Session
    from soulframe.kit import chat_model_for

    if key == "model.provider":
        chat_model_for(agent)
    elif key == "memory.chunker":
        agent.memory.sync()
    elif key == "store.backend":
        agent.store  # noqa: B018 - opened on first use
    else:
        agent.system_prompt(Session.main())


@pytest.mark.parametrize(("key", "kind", "lacks"), [
    ("bootstrap.truncation", "truncation policy", "which lacks enforce_budget, truncate_files (see TruncationPolicy)"),
    ("prompt.tokenizer", "token estimator", "which is not callable"),
    ("memory.chunker", "chunker", "which lacks chunk (see Chunker)"),
    ("model.provider", "chat model", "which lacks chat, model_id (see ChatModel)"),
    ("store.backend", "store", "which lacks check, chunk_vectors, clear"),
])
def test_a_selected_factory_that_fails_is_named_with_its_plugin(workspace: Path, key: str, kind: str,
                                                                lacks: str) -> None:
    """Was a traceback from deep inside the first prompt or sync (AttributeError: 'Half'
    object has no attribute 'truncate_files'), not naming the plugin."""
    from soulframe import SoulframeError
    from soulframe.testing import make_agent

    (workspace / "MEMORY.md").write_text("# Memory\n- The heron visits the pond.\n")
    for name, said in (("broken", "could not be created: RuntimeError: driver missing"),
                       ("half", f"built a Half, {lacks}")):
        settings = {key.replace(".", "__"): name, "model__name": "m"}
        with make_agent(workspace, plugins=[Factories()], seed=False, **settings) as agent, \
                pytest.raises(SoulframeError) as err:
            _use(agent, key)
        assert str(err.value).startswith(f"{kind} {name!r} (plugin factories) {said}")


def test_a_reranker_that_fails_to_build_leaves_search_working_and_says_so(workspace: Path) -> None:
    """The hookspec's promise (fail open) held for a re-ranker that raised, not for one
    whose factory did: that search was a traceback."""
    from soulframe.testing import make_agent

    (workspace / "MEMORY.md").write_text("# Memory\n- The heron visits the pond.\n")
    for name, said in (("broken", "could not be created: RuntimeError: driver missing"),
                       ("half", "built a Half, which lacks rerank (see Reranker)")):
        with make_agent(workspace, plugins=[Factories()], seed=False, memory__reranker=name,
                        memory__min_score=0.0) as agent:
            hits = agent.memory.search("heron")
        assert [h.path for h in hits] == ["MEMORY.md"]
        assert hits.notice.endswith(f"re-ranker {name!r} (plugin factories) {said}; fused order kept")


class Policy:
    """A truncation policy that goes wrong in one of its methods, in one of two ways."""

    name = "fussy"

    def __init__(self, wrong: str) -> None:
        self.wrong = wrong

    def _answer(self, method: str, kept: list):
        if self.wrong == f"{method} raises":
            raise RuntimeError("cannot count")
        if self.wrong == f"{method} returns a list":
            return kept  # the notices forgotten
        return kept, []

    def truncate_files(self, files, config):
        return self._answer("truncate_files", list(files))

    def enforce_budget(self, sections, budget_tokens, estimate):
        return self._answer("enforce_budget", list(sections))


@pytest.mark.parametrize(("wrong", "said"), [
    ("truncate_files raises", "truncate_files failed: RuntimeError: cannot count"),
    ("truncate_files returns a list", "truncate_files failed: ValueError: too many values to unpack"),
    ("enforce_budget raises", "enforce_budget failed: RuntimeError: cannot count"),
    ("enforce_budget returns a list", "enforce_budget failed: ValueError: too many values to unpack"),
])
def test_a_truncation_policy_that_fails_is_named_with_its_plugin(workspace: Path, wrong: str, said: str) -> None:
    """Each was a traceback from the middle of the prompt build."""
    from soulframe import Session, SoulframeError
    from soulframe.testing import make_agent

    class Fussy:
        __name__ = "fussy_plugin"

        @hookimpl
        def register_truncation_policies(self):
            return [Registration("fussy", lambda agent: Policy(wrong))]

    # a budget the standard sections exceed, so enforce_budget is called
    with make_agent(workspace, plugins=[Fussy()], bootstrap__truncation="fussy", prompt__budget_tokens=400) as agent, \
            pytest.raises(SoulframeError) as err:
        agent.system_prompt(Session.main())
    assert str(err.value).startswith(f"truncation policy 'fussy' (plugin fussy_plugin): {said}")


@pytest.mark.parametrize(("returned", "said"), [
    (lambda files: [f.name for f in files], "returned a list holding a str, expected ContextFile objects"),
    (lambda files: {f.name: f for f in files}, "returned dict, expected a list of ContextFile or None"),
], ids=["names", "a dict"])
def test_a_transform_that_returns_the_wrong_thing_leaves_the_files_as_they_were(workspace: Path, returned,
                                                                               said: str) -> None:
    """Both were a traceback from every prompt."""
    from soulframe import Session
    from soulframe.testing import make_agent

    class Renamer:
        __name__ = "renamer"

        @hookimpl
        def transform_context_files(self, files):
            return returned(files)

    (workspace / "SOUL.md").write_text("# Soul\nCalm and kind.\n")
    with make_agent(workspace, plugins=[Renamer()], seed=False) as agent, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "Calm and kind." in agent.system_prompt(Session.main()).text
    assert f"transform_context_files in plugin 'renamer' failed; its change was skipped: TypeError: {said}" in {
        str(w.message) for w in caught}


def test_a_context_source_that_fails_to_build_is_skipped_with_one_warning(workspace: Path) -> None:
    from soulframe import Session
    from soulframe.testing import make_agent

    (workspace / "SOUL.md").write_text("# Soul\nCalm and kind.\n")
    with make_agent(workspace, plugins=[Sources()], seed=False) as agent, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "Calm and kind." in agent.system_prompt(Session.main()).text
    assert ["context source 'strings' from plugin 'factories' failed and was skipped: TypeError: load returned "
            "a str, expected ContextFile objects"] == [str(w.message) for w in caught if "'strings'" in str(w.message)]
    said = sorted(str(w.message) for w in caught if issubclass(w.category, PluginWarning))
    assert said == [
        "plugin 'factories': register_context_sources failed and what it registers was skipped: context source "
        "'broken' (plugin factories) could not be created: RuntimeError: driver missing "
        "(disable it with plugins.disabled = ['factories'])",
        "plugin 'factories': register_context_sources failed and what it registers was skipped: context source "
        "'half' (plugin factories) built a Half, which lacks load (see ContextSource) "
        "(disable it with plugins.disabled = ['factories'])",
    ]
