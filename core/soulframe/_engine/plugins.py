"""The plugin manager: load entry points in a deterministic order, block disabled plugins,
collect what registration hooks return, and describe the installed plugins.

pluggy's own ``load_setuptools_entrypoints`` walks distributions in filesystem order and
silently skips a second plugin of an already-registered name, so soulframe loads the entry
points itself: its own distribution first, then third parties sorted by distribution name.
"""

from __future__ import annotations

import importlib.metadata as md
import logging
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
import pluggy

from soulframe import hookspecs

from .model import (
    ConfigError,
    R,
    Registration,
    Registry,
    SoulframeError,
    SoulframeWarning,
    UnknownNameError,
)

GROUP = "soulframe"
OWN_DIST = "soulframe"
DISABLE_ENV = "SOULFRAME_DISABLE_PLUGINS"
log = logging.getLogger("soulframe.plugins")
TRACE_ENV = "SOULFRAME_TRACE_PLUGINS"
T = TypeVar("T")


class PluginWarning(SoulframeWarning):
    """A plugin could not be loaded, or one plugin overrode another's registration."""


class PluginError(SoulframeError):
    """A plugin's factory raised, or built an object lacking part of its protocol
    (:func:`build`): the plugin's fault, where a :class:`SoulframeError` it raises itself is
    about the user's setup (a bad option, a driver to install)."""


@attrs.frozen
class PluginInfo:
    name: str
    dist: str | None
    version: str | None
    hooks: tuple[str, ...]


class PluginManager(pluggy.PluginManager):
    """pluggy's manager plus the bookkeeping ``soulframe plugins`` reports."""

    def __init__(self) -> None:
        super().__init__(GROUP)
        self.add_hookspecs(hookspecs)
        #: plugin name -> (distribution name, version)
        self.dists: dict[str, tuple[str, str]] = {}
        #: one line per plugin that failed to load, or whose hook failed
        self.load_errors: list[str] = []
        #: the lines of load_errors about a hook that failed (:func:`plugin_failed`)
        self.hook_failures: list[str] = []
        #: one line per named registration a later plugin replaced
        self.overrides: list[str] = []
        #: plugin name -> the commands it added (``tides``, ``memory tidy``), as the CLI was built
        self.commands: dict[str, list[str]] = {}
        #: the plugins that failed to load, in load order (not registered: no hooks to list)
        self.failed: list[PluginInfo] = []
        #: plugin name -> its lines of load_errors, so a report can put them by the plugin
        self.problems: dict[str, list[str]] = {}

    def warn(self, message: str, *, override: bool = False, plugin: str | None = None,
             at: CodePlace | None = None) -> None:
        """Warn once per process; ``plugin`` names the plugin a problem is about, ``at`` the
        line of the plugin's code the warning points at (else soulframe's caller)."""
        kept = self.overrides if override else self.load_errors
        if message in kept:  # a hook called again fails again: said once per process
            return
        kept.append(message)
        if plugin is not None and not override:
            self.problems.setdefault(plugin, []).append(message)
        if at is None:
            warnings.warn(message, PluginWarning, stacklevel=3)
            return
        # pointed at the plugin's line, not pluggy's or soulframe's frame that called it
        # (Python 3.11 has no warn(skip_file_prefixes=...)); its module is the one a filter
        # names: warnings.filterwarnings("ignore", module="acme_plugin")
        registry = at.module_globals.setdefault("__warningregistry__", {})
        warnings.warn_explicit(message, PluginWarning, at.filename, at.lineno, module=at.module,
                               registry=registry, module_globals=at.module_globals)


    def is_own(self, plugin_name: str) -> bool:
        """Whether ``plugin_name`` is one of soulframe's default plugins."""
        dist = self.dists.get(plugin_name)
        return dist is not None and _norm(dist[0]) == OWN_DIST


@attrs.frozen
class CodePlace:
    """A line of a plugin's code, for a warning about that plugin to point at."""

    filename: str
    lineno: int
    module: str
    module_globals: dict[str, Any] = attrs.field(eq=False, repr=False)


def hook_place(pm: pluggy.PluginManager, plugin_name: str, hook_name: str,
               exc: BaseException | None = None) -> CodePlace | None:
    """Where the plugin's implementation of ``hook_name`` is: the line of it that raised
    ``exc`` (its innermost frame in the hook's file), else the function's first line; None
    when the implementation is no plain Python function."""
    plugin = pm.get_plugin(plugin_name)
    callers = pm.get_hookcallers(plugin) if plugin is not None else None
    impls = [impl for caller in callers or () if caller.name == hook_name
             for impl in caller.get_hookimpls() if impl.plugin_name == plugin_name]
    if not impls:
        return None
    fn = impls[0].function
    if isinstance(fn, types.MethodType):  # a plugin object's method
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        return None
    code = fn.__code__
    lineno = code.co_firstlineno
    tb = exc.__traceback__ if exc is not None else None
    while tb is not None:  # the last frame in the hook's own file: where it raised
        if tb.tb_frame.f_code.co_filename == code.co_filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    return CodePlace(code.co_filename, lineno, fn.__module__, fn.__globals__)


#: the code that loads plugins and calls their hooks: a frame there is no plugin's line
_LOADER_FILES = (os.path.dirname(pluggy.__file__) + os.sep,
                 os.path.dirname(os.path.dirname(md.__file__)) + os.sep,  # importlib
                 os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep, "<frozen ")


def _raised_in_plugin(exc: BaseException) -> CodePlace | None:
    """The innermost line of a plugin's own code in ``exc``'s traceback (the import that
    failed, the statement that raised as its module ran); None when it never got there."""
    place = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if not frame.f_code.co_filename.startswith(_LOADER_FILES):
            place = CodePlace(frame.f_code.co_filename, tb.tb_lineno,
                              str(frame.f_globals.get("__name__", "")), frame.f_globals)
        tb = tb.tb_next
    return place


def _env_list(name: str) -> list[str]:
    return [p.strip() for p in os.environ.get(name, "").split(",") if p.strip()]


class _DistFacts:
    """(name, version) of entry points' distributions, read once per distribution:
    ``Distribution.name`` and ``.version`` parse the METADATA file on every access, and
    soulframe's own fourteen entry points share one distribution (a measurable part of
    every command's start-up)."""

    def __init__(self) -> None:
        # keyed by id(); the distribution is kept so the id cannot be reused meanwhile
        self._memo: dict[int, tuple[md.Distribution, str, str]] = {}

    def __call__(self, ep: md.EntryPoint) -> tuple[str, str] | None:
        dist = ep.dist
        if dist is None:
            return None
        hit = self._memo.get(id(dist))
        if hit is None:
            meta = dist.metadata
            hit = (dist, str(meta["Name"]), str(meta["Version"]))
            self._memo[id(dist)] = hit
        return hit[1], hit[2]


def ordered_entry_points() -> list[md.EntryPoint]:
    """soulframe's own entry points first, then third parties by (distribution, name)."""
    eps = list(md.entry_points(group=GROUP))
    facts = _DistFacts()
    seen: dict[str, str] = {}
    unique: list[md.EntryPoint] = []
    for ep in eps:
        dist = (facts(ep) or ("?", ""))[0]
        if ep.name in seen:
            if seen[ep.name] != dist:
                warnings.warn(
                    f"plugin name {ep.name!r} is registered by two distributions "
                    f"({seen[ep.name]} and {dist}); using the one from {seen[ep.name]}",
                    PluginWarning,
                    stacklevel=2,
                )
            # the same distribution seen twice (e.g. an editable install on sys.path twice)
            continue
        seen[ep.name] = dist
        unique.append(ep)

    def key(ep: md.EntryPoint) -> tuple[bool, str, str]:
        dist = (facts(ep) or ("", ""))[0]
        return (_norm(dist) != OWN_DIST, _norm(dist), ep.name)

    return sorted(unique, key=key)


def _norm(dist: str) -> str:
    return dist.lower().replace("_", "-")


def installed_plugin_names() -> list[str]:
    return [ep.name for ep in ordered_entry_points()]


def make_plugin_manager(
    disabled: Sequence[str] = (),
    *,
    load_entrypoints: bool = True,
    plugins: Iterable[Any] = (),
) -> PluginManager:
    """Build a fresh plugin manager.

    :param disabled: plugin names to block (from ``plugins.disabled``); the names in
        ``$SOULFRAME_DISABLE_PLUGINS`` are added. Blocking happens before loading.
    :param load_entrypoints: load the ``soulframe`` entry-point group (tests pass False and
        register exactly the plugins they name through ``plugins``).
    :param plugins: extra plugin objects or modules to register after the entry points.
    """
    pm = PluginManager()
    env_disabled = _env_list(DISABLE_ENV)
    blocked = [*disabled, *env_disabled]
    eps = ordered_entry_points() if load_entrypoints else []
    if load_entrypoints:
        known = {ep.name for ep in eps}
        for name in blocked:
            if name not in known:
                where = f"${DISABLE_ENV}" if name in env_disabled else "plugins.disabled"
                import difflib  # only for a "did you mean": kept off the start-up path

                hint = difflib.get_close_matches(name, sorted(known), n=1)
                raise ConfigError(
                    f"{where}: no installed plugin is named {name!r}"
                    + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    + f"; installed: {', '.join(sorted(known))}"
                )
    for name in blocked:
        pm.set_blocked(name)
        log.info("plugin %s is disabled (blocked before loading)", name)

    facts = _DistFacts()
    for ep in eps:
        if pm.is_blocked(ep.name) or pm.get_plugin(ep.name) is not None:
            continue
        dist, version = facts(ep) or ("?", "?")
        own = _norm(dist) == OWN_DIST
        try:
            plugin = ep.load()
            if isinstance(plugin, type):
                # its hooks would be called without `self`, each failing on every use
                raise TypeError(f"the entry point {ep.value!r} names the class {plugin.__name__}; "
                                f"name the module, or an instance of the class (plugin = {plugin.__name__}())")
            pm.register(plugin, name=ep.name)
            pm.check_pending()
        except Exception as exc:
            if pm.get_plugin(ep.name) is not None:
                pm.unregister(name=ep.name)
            if own:
                # a broken default plugin is a bug in soulframe itself: fail loudly
                raise
            pm.failed.append(PluginInfo(name=ep.name, dist=dist, version=version, hooks=()))
            pm.warn(
                f"plugin {ep.name!r} from distribution {dist} {version} could not be loaded "
                f"and was skipped: {type(exc).__name__}: {exc}{_hook_hint(exc, pm)} "
                f"(disable it with plugins.disabled = [{ep.name!r}])", plugin=ep.name,
                at=_raised_in_plugin(exc),
            )
            continue
        pm.dists[ep.name] = (dist, version)
        log.debug("loaded plugin %s from %s %s", ep.name, dist, version)
        if not own and not pm.get_hookcallers(plugin):
            # pluggy takes only functions carrying soulframe's marker: without it, a plugin
            # does nothing and nothing says why
            unmarked = [n for n in hookspecs.HOOK_NAMES if callable(getattr(plugin, n, None))]
            pm.warn(f"plugin {ep.name!r} from distribution {dist} {version} implements no hook"
                    + (f": {', '.join(unmarked)} needs the @soulframe.hookimpl decorator" if unmarked
                       else " (decorate each hook function with @soulframe.hookimpl)"), plugin=ep.name)

    for plugin in plugins:
        name = getattr(plugin, "__name__", None) or type(plugin).__name__
        if pm.is_blocked(name) or pm.is_registered(plugin):
            # registered already: a plugin's own tests naming the module they installed
            # (`pip install -e .`), which its entry point loaded
            continue
        if pm.get_plugin(name) is not None:
            dist = pm.dists.get(name, ("soulframe", ""))[0]
            raise SoulframeError(
                f"plugin name {name!r} is taken by the installed plugin from {dist}: give this "
                f"one another __name__, or leave the installed one out (disabled=[{name!r}])")
        pm.register(plugin, name=name)
    pm.check_pending()

    if os.environ.get(TRACE_ENV):
        pm.trace.root.setwriter(_trace)
        pm.enable_tracing()
    return pm


def _hook_hint(exc: BaseException, pm: pluggy.PluginManager) -> str:
    """" (did you mean 'register_prompt_sections'?)" for a misspelled hook name."""
    found = re.search(r"unknown hook '(\w+)'", str(exc))
    if found is None:
        return ""
    import difflib

    # the hooks the specs declare (a typo registered a caller of its own, without a spec)
    names = [n for n, caller in vars(pm.hook).items() if not n.startswith("_") and caller.spec is not None]
    close = difflib.get_close_matches(found.group(1), names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _trace(message: str) -> None:
    """One traced hook call, on stderr (stdout may be JSON a script reads), cut to a line's
    worth: a hook's arguments can be a whole prompt."""
    text = message.rstrip("\n")
    sys.stderr.write((text if len(text) <= 240 else text[:237] + "...") + "\n")


def protocol_gaps(obj: object, protocol: type) -> list[str]:
    """The members of ``protocol`` (attributes, methods, properties) that ``obj`` lacks: what
    an error about a plugin's factory names, rather than an AttributeError later on."""
    if isinstance(obj, protocol):  # a runtime_checkable protocol: the usual, quick answer
        return []
    members = set(vars(protocol).get("__annotations__", {}))
    members |= {n for n, v in vars(protocol).items()
                if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    return sorted(members - set(dir(obj)))


def build(agent: Any, which: Registry[Any], reg: Registration[T], protocol: type | None = None, *,
          error: Callable[[str], Exception] = PluginError) -> T:
    """``reg.factory(agent)``, checked where it is built: a factory that raises, or builds an
    object lacking part of ``protocol`` (``None``: an object that is not callable), is an
    ``error`` naming the registration, its plugin and what is wrong, not a traceback from
    deep inside the first prompt or sync that uses it. A :class:`SoulframeError` the factory
    raises (a driver to install, a setting to fix) already says what to do: it passes as is."""
    who = f"{which.kind} {reg.name!r} (plugin {reg.plugin or '?'})"
    try:
        built = reg.factory(agent)
    except SoulframeError:
        raise
    except Exception as exc:
        # a driver that is not installed: the registration knows which extra brings it
        hint = f"; install it with: pip install 'soulframe[{reg.extra}]'" \
            if isinstance(exc, ModuleNotFoundError) and reg.extra else ""
        raise error(f"{who} could not be created: {type(exc).__name__}: {exc}{hint}") from exc
    if protocol is None:
        if not callable(built):
            raise error(f"{who} built a {type(built).__name__}, which is not callable")
        return built
    gaps = protocol_gaps(built, protocol)
    if gaps:
        raise error(f"{who} built a {type(built).__name__}, which lacks {', '.join(gaps)} "
                    f"(see {protocol.__name__})")
    return built


def call_in_order(pm: pluggy.PluginManager, hook_name: str, *, after: Callable[[str], None] | None = None,
                  **kwargs: Any) -> list[tuple[str, Any]]:
    """Call every implementation of a hook, lowest precedence first, keeping who returned what.

    ``get_hookimpls()`` lists implementations lowest-precedence first (trylast, then load
    order, then tryfirst), so iterating it forwards gives "later wins" semantics when the
    results are put into a dict. ``after(plugin_name)`` runs after each implementation,
    whether it returned or failed: for a hook that changes what it is given (the CLI group)
    rather than returning something.
    """
    caller = getattr(pm.hook, hook_name)
    out: list[tuple[str, Any]] = []
    for impl in caller.get_hookimpls():
        if impl.hookwrapper or impl.wrapper:
            continue
        args = {a: kwargs[a] for a in impl.argnames if a in kwargs}
        if os.environ.get(TRACE_ENV):  # called one by one, past pluggy's own tracing
            _trace(f"{hook_name} [{impl.plugin_name}] {', '.join(args) or '(no arguments)'}")
        try:
            out.append((impl.plugin_name, impl.function(**args)))
        except Exception as exc:
            plugin_failed(pm, impl.plugin_name, hook_name, f"{type(exc).__name__}: {exc}", exc)
        if after is not None:
            after(impl.plugin_name)
    return out


#: the hooks that tell plugins about an event (hookspecs: "observers"); what they return is ignored
OBSERVER_HOOKS = frozenset({"workspace_initialized", "memory_indexed", "prompt_built",
                            "before_compaction", "session_ended"})


def notify(pm: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> None:
    """Tell every implementation of an observer hook, soulframe's own first. pluggy would
    call the last-loaded plugin first and stop at the first exception: a third-party
    observer that raised would then keep the conversation from being saved
    (``session_ended``) or the model from being fetched (``workspace_initialized``). Here it
    is named in one warning and the others are still told."""
    call_in_order(pm, hook_name, **kwargs)


def plugin_failed(pm: pluggy.PluginManager, plugin_name: str, hook_name: str, why: str,
                  exc: BaseException | None = None) -> None:
    """A third-party plugin's hook raised or returned something unusable: skip what it
    gave, with one warning naming the plugin and the way out (`soulframe plugins` lists
    it). A default plugin of soulframe's failing is a bug in soulframe: raised."""
    if isinstance(pm, PluginManager) and pm.is_own(plugin_name):
        if exc is not None:
            raise exc
        raise TypeError(f"{hook_name} of {plugin_name}: {why}")
    skipped = "" if hook_name in OBSERVER_HOOKS else " and what it registers was skipped"
    message = (f"plugin {plugin_name!r}: {hook_name} failed{skipped}: {why} "
               f"(disable it with plugins.disabled = [{plugin_name!r}])")
    if isinstance(pm, PluginManager):
        if message not in pm.hook_failures:
            pm.hook_failures.append(message)
        pm.warn(message, plugin=plugin_name, at=hook_place(pm, plugin_name, hook_name, exc))
    else:
        warnings.warn(message, PluginWarning, stacklevel=3)


def collect(pm: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """Flatten list-returning hooks into ``(plugin_name, item)`` pairs, in precedence order."""
    items: list[tuple[str, Any]] = []
    for plugin_name, result in call_in_order(pm, hook_name, **kwargs):
        if result is None:
            continue
        # the hookspecs promise any iterable (a generator of `yield Section(...)` too); a
        # string or a mapping iterates, but not over things the hook registers
        if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Iterable):
            plugin_failed(pm, plugin_name, hook_name,
                          f"returned {type(result).__name__}, expected a list (return [item], not item)")
            continue
        try:
            got = list(result)
        except Exception as exc:  # a generator raising half-way: none of its items are used
            plugin_failed(pm, plugin_name, hook_name, f"{type(exc).__name__}: {exc}", exc)
            continue
        items.extend((plugin_name, item) for item in got)
    return items


def collect_named(pm: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> dict[str, Any]:
    """Collect named registrations (anything with a ``name``); later plugins win, with a
    warning naming both. The returned objects carry ``plugin`` set to who registered them
    when they are attrs classes with that field."""
    found: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for plugin_name, item in collect(pm, hook_name, **kwargs):
        name = getattr(item, "name", None)
        if not isinstance(name, str):
            plugin_failed(pm, plugin_name, hook_name,
                          f"an item of type {type(item).__name__} has no name (str)")
            continue
        if attrs.has(type(item)) and "plugin" in attrs.fields_dict(type(item)):
            item = attrs.evolve(item, plugin=plugin_name)
        if name in found and owner[name] != plugin_name:
            message = (f"{hook_name}: {name!r} from plugin {plugin_name!r} replaces the one "
                       f"from {owner[name]!r}")
            if isinstance(pm, PluginManager):  # ours keeps the list `soulframe plugins` shows
                pm.warn(message, override=True, at=hook_place(pm, plugin_name, hook_name))
            else:
                warnings.warn(message, PluginWarning, stacklevel=2)
        found[name] = item
        owner[name] = plugin_name
    return found


def select(registry: dict[str, R], name: str, *, key: str, kind: str, origin: str = "") -> R:
    """Pick ``name`` from a named registry, or explain what is available."""
    if name in registry:
        return registry[name]
    choices = ", ".join(
        f"{n} (soulframe[{r.extra}])" if r.extra else n for n, r in sorted(registry.items())
    )
    import difflib  # only for a "did you mean": kept off the start-up path

    hint = difflib.get_close_matches(name, list(registry), n=1)
    where = f"{origin}: " if origin else ""
    # origin is a config file's "path:line" when the name came from one (else "$ENV", ...)
    place = re.fullmatch(r"(.+):(\d+)", origin)
    raise UnknownNameError(
        f"{where}{key} = {name!r} — no such {kind}"
        + (f" (did you mean {hint[0]!r}?)" if hint else "")
        + f"; available: {choices or 'none installed'}",
        file=place.group(1) if place else None, line=int(place.group(2)) if place else None, key=key,
    )


def list_plugins(pm: PluginManager) -> list[PluginInfo]:
    """Every registered plugin with its distribution, version and the hooks it implements,
    in load order."""
    infos: list[PluginInfo] = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # blocked
            continue
        hooks = tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or ()))
        dist, version = pm.dists.get(name, (None, None))
        infos.append(PluginInfo(name=name, dist=dist, version=version, hooks=hooks))
    return infos


#: the registration hooks whose items have a ``name``, and what ``soulframe plugins`` calls them
REGISTRY_HOOKS = {
    "register_prompt_sections": "sections",
    "register_context_sources": "context sources",
    "register_truncation_policies": "truncation policies",
    "register_token_estimators": "token estimators",
    "register_stores": "stores",
    "register_embedding_providers": "embedding providers",
    "register_tools": "tools",
    "register_chat_models": "chat models",
    "register_chunkers": "chunkers",
    "register_rerankers": "re-rankers",
}


def what_each_registers(
    pm: PluginManager,
) -> tuple[dict[str, dict[str, list[str]]], dict[str, list[str]], list[str]]:
    """For each plugin: the named things it registers, by kind (config keys included); the
    registrations of another plugin it replaces (same name, later plugin wins); and one line
    per registration hook that failed, which does not hide the others."""
    out: dict[str, dict[str, list[str]]] = {}
    overrides: dict[str, list[str]] = {}
    failures: list[str] = []
    with warnings.catch_warnings():
        # said in the report's failure lines (pm.load_errors), not as warnings too
        warnings.simplefilter("ignore", PluginWarning)
        _what_each(pm, out, overrides, failures)
    failures.extend(m for m in pm.hook_failures if m not in failures)
    return out, overrides, failures


def _what_each(pm: PluginManager, out: dict[str, dict[str, list[str]]], overrides: dict[str, list[str]],
               failures: list[str]) -> None:
    for hook, label in REGISTRY_HOOKS.items():
        try:
            items = collect(pm, hook)
        except Exception as exc:  # a plugin's registration hook failing must not hide the rest
            failures.append(f"{hook} failed: {exc}")
            continue
        owner: dict[str, str] = {}
        for plugin_name, item in items:
            name = getattr(item, "name", None)
            if name is None:
                continue
            out.setdefault(plugin_name, {}).setdefault(label, []).append(str(name))
            previous = owner.get(name)
            if previous is not None and previous != plugin_name:
                overrides.setdefault(plugin_name, []).append(f"{label}: {name} (replaces {previous}'s)")
            owner[name] = plugin_name
    try:
        declared = call_in_order(pm, "register_config_keys")
    except Exception as exc:
        failures.append(f"register_config_keys failed: {exc}")
        declared = []
    for plugin_name, keys in declared:
        if keys:
            out.setdefault(plugin_name, {})["config keys"] = sorted(keys)
