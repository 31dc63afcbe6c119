"""pip's configuration as ``pip install`` reads it, for the model download (:mod:`.download`).

Why this module reads the files itself instead of asking pip: soulframe may be installed
where there is no pip at all (``uv tool install``, a uv virtual environment); pip's loader
(``pip._internal.configuration``) is explicitly not an API and changes between releases; and
``pip config list`` prints values without saying which file each came from, which an error
about a bad setting has to say. pip's rules are documented
(https://pip.pypa.io/en/stable/topics/configuration/) and small, so they are followed here,
and a test checks the result against pip's own loader whenever pip is importable:

- files, lowest priority first: the global ones (``pip.conf`` in each ``$XDG_CONFIG_DIRS``
  entry — ``/etc/xdg`` by default — then ``/etc/pip.conf``), the user's (``~/.pip/pip.conf``,
  ``$XDG_CONFIG_HOME/pip/pip.conf``; skipped when ``$PIP_CONFIG_FILE`` names a file that
  exists), the environment's (``sys.prefix/pip.conf``), then ``$PIP_CONFIG_FILE``.
  ``PIP_CONFIG_FILE=/dev/null`` (``os.devnull``) loads no file at all;
- in the files, ``[global]`` and then ``[install]`` (the section of ``pip install``): every
  ``[install]`` value beats every ``[global]`` one, whatever file it is in;
- ``PIP_<NAME>`` environment variables beat every file (``PIP_EXTRA_INDEX_URL`` is
  ``extra-index-url``); names are case-blind and ``_`` is ``-``;
- a list setting (``extra-index-url``, ``find-links``, ``trusted-host``) is split on
  whitespace, and the winning value replaces the others (pip does not merge them).
"""

from __future__ import annotations

import configparser
import os
import sys
import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs
from soulframe.kit import EmbeddingError, redact_url

DEFAULT_INDEX = "https://pypi.org/simple"
#: pip's defaults for ``timeout`` (seconds per socket operation) and ``retries``
DEFAULT_TIMEOUT_S = 15.0
DEFAULT_RETRIES = 5
KEYRING_PROVIDERS = ("auto", "disabled", "import", "subprocess")

#: the settings the download uses, by pip's option name -> the name it is stored under
#: (``default-timeout`` is pip's other spelling of ``--timeout``)
_KEYS = {
    "index-url": "index-url", "extra-index-url": "extra-index-url", "no-index": "no-index",
    "find-links": "find-links", "trusted-host": "trusted-host", "cert": "cert",
    "client-cert": "client-cert", "proxy": "proxy", "timeout": "timeout",
    "default-timeout": "timeout", "retries": "retries", "keyring-provider": "keyring-provider",
}
_SECTIONS = ("global", "install")
_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}


class DownloadError(EmbeddingError):
    """The model could not be fetched, or what was fetched is not the pinned model."""


class PipConfigError(DownloadError):
    """A pip setting the download needs has a value it cannot use; the message names the
    file (or environment variable) and the key."""


@attrs.frozen
class Setting:
    value: str
    #: "/etc/pip.conf [install] timeout" or "$PIP_TIMEOUT", for messages
    origin: str


def _normalize(name: str) -> str:
    return name.strip().lower().replace("_", "-").removeprefix("--")


def config_files(environ: Mapping[str, str] | None = None) -> list[tuple[str, Path]]:
    """(kind, path) of pip's configuration files, lowest priority first, as pip lists them
    (missing files included: pip skips them when reading)."""
    env = os.environ if environ is None else environ
    named = env.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []
    files: list[tuple[str, Path]] = []
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        program_data = env.get("PROGRAMDATA", r"C:\ProgramData")
        files.append(("global", Path(program_data) / "pip" / "pip.ini"))
        appdata = env.get("APPDATA", str(Path.home() / "AppData" / "Roaming"))
        user = [Path.home() / "pip" / "pip.ini", Path(appdata) / "pip" / "pip.ini"]
        site_name = "pip.ini"
    else:
        xdg_dirs = env.get("XDG_CONFIG_DIRS") or "/etc/xdg"
        files += [("global", Path(d) / "pip" / "pip.conf") for d in xdg_dirs.split(os.pathsep) if d]
        files.append(("global", Path("/etc/pip.conf")))
        config_home = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        user = [Path.home() / ".pip" / "pip.conf"]
        if sys.platform == "darwin":
            user.append(Path.home() / "Library" / "Application Support" / "pip" / "pip.conf")
        user.append(Path(config_home) / "pip" / "pip.conf")
        site_name = "pip.conf"
    if not (named and os.path.exists(named)):
        files += [("user", p) for p in user]
    files.append(("site", Path(sys.prefix) / site_name))
    if named:
        files.append(("env", Path(named)))
    return files


def _file_items(environ: Mapping[str, str]) -> Iterator[tuple[str, str, Setting]]:
    """(section, key, setting) from every file, lowest priority first."""
    for _kind, path in config_files(environ):
        if not path.is_file():
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError, OSError) as exc:
            # pip refuses to run with a broken configuration file; so does the download
            raise PipConfigError(f"pip's configuration file {path} cannot be read: {exc}") from exc
        for section in _SECTIONS:
            if not parser.has_section(section):
                continue
            for key, value in parser.items(section):
                yield section, _normalize(key), Setting(value.strip(), f"{path} [{section}] {key}")


def read(environ: Mapping[str, str] | None = None) -> dict[str, Setting]:
    """The winning value of each setting the download uses, with where it came from."""
    env = os.environ if environ is None else environ
    items = list(_file_items(env))
    found: dict[str, Setting] = {}
    # section first, file second: pip applies every [global] item, then every [install] one
    for section in _SECTIONS:
        for sec, key, setting in items:
            if sec == section and key in _KEYS:
                found[_KEYS[key]] = setting
    for name, value in env.items():
        if name.upper().startswith("PIP_"):
            key = _normalize(name[4:])
            if key in _KEYS:
                found[_KEYS[key]] = Setting(value.strip(), f"${name}")
    return found


@attrs.frozen
class IndexSettings:
    """Where to look for a wheel and how to fetch it: pip's settings (see the module doc).
    ``IndexSettings(url, origin)`` alone is one index and pip's defaults."""

    url: str
    #: where ``url`` came from, for messages: "$PIP_INDEX_URL", a pip config file, "default"
    origin: str = "default"
    extra_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    trusted_hosts: tuple[str, ...] = ()
    cert: str | None = None
    client_cert: str | None = None
    proxy: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    keyring_provider: str = "auto"
    #: setting name -> where its value came from (only the settings that were set)
    origins: Mapping[str, str] = attrs.field(factory=dict)

    def where(self, key: str) -> str:
        """``"timeout (from $PIP_TIMEOUT)"``: a setting named for a message."""
        origin = self.origins.get(key)
        return f"pip's {key} ({origin})" if origin else f"pip's {key} (default)"

    def sources(self) -> list[tuple[str, str]]:
        """(kind, location) in the order they are consulted; kind is "index" or "find-links"."""
        out = [] if self.no_index else [("index", self.url), *(("index", u) for u in self.extra_urls)]
        return out + [("find-links", f) for f in self.find_links]

    def describe(self) -> list[str]:
        """One line per source and per network setting, credentials masked."""
        lines = []
        if self.no_index:
            lines.append(f"no package index ({self.where('no-index')})")
        else:
            lines.append(f"index {redact_url(self.url)} ({self.origin})")
            lines += [f"extra index {redact_url(u)} ({self.origins.get('extra-index-url')})"
                      for u in self.extra_urls]
        lines += [f"find-links {redact_url(f)} ({self.origins.get('find-links')})" for f in self.find_links]
        if self.proxy:
            lines.append(f"proxy {redact_url(self.proxy)} ({self.origins.get('proxy')})")
        if self.trusted_hosts:
            lines.append(f"trusted hosts {' '.join(self.trusted_hosts)} ({self.origins.get('trusted-host')})")
        return lines


def _bool(s: Setting, key: str) -> bool:
    v = s.value.lower()
    if v in _TRUE or v in _FALSE:
        return v in _TRUE
    raise PipConfigError(f"{key} = {s.value!r} ({s.origin}): not a boolean (yes/no, true/false, 1/0)")


def _url(value: str, s: Setting, key: str, *, paths: bool = False) -> str:
    parts = urllib.parse.urlsplit(value)
    if parts.scheme in ("http", "https") and parts.netloc:
        return value
    if parts.scheme == "file" or (paths and (not parts.scheme or len(parts.scheme) == 1)):
        return value  # a local path (a Windows drive letter parses as a one-letter scheme)
    raise PipConfigError(
        f"{key} = {redact_url(value)!r} ({s.origin}): not an http(s):// or file:// URL"
        + (" or a directory" if paths else ""))


def index_settings(environ: Mapping[str, str] | None = None) -> IndexSettings:
    """The indexes, find-links and network settings ``pip install`` would use here.
    Raises :class:`PipConfigError` naming the file and key of a value it cannot use."""
    found = read(environ)
    origins = {k: s.origin for k, s in found.items()}
    kw: dict[str, object] = {}
    url, origin = DEFAULT_INDEX, "default"
    if (s := found.get("index-url")) and s.value:
        url, origin = _url(s.value, s, "index-url"), s.origin
    if s := found.get("extra-index-url"):
        kw["extra_urls"] = tuple(_url(v, s, "extra-index-url").rstrip("/") for v in s.value.split())
    if s := found.get("find-links"):
        kw["find_links"] = tuple(_url(v, s, "find-links", paths=True) for v in s.value.split())
    if s := found.get("no-index"):
        kw["no_index"] = _bool(s, "no-index")
    if s := found.get("trusted-host"):
        kw["trusted_hosts"] = tuple(s.value.split())
    for key in ("cert", "client-cert"):
        if (s := found.get(key)) and s.value:
            path = os.path.expanduser(s.value)
            if not os.path.exists(path):
                raise PipConfigError(f"{key} = {s.value!r} ({s.origin}): no such file")
            kw[key.replace("-", "_")] = path
    if (s := found.get("proxy")) and s.value:
        proxy = s.value if "://" in s.value else f"http://{s.value}"  # pip's default scheme
        if not urllib.parse.urlsplit(proxy).hostname:
            raise PipConfigError(f"proxy = {redact_url(s.value)!r} ({s.origin}): expected "
                                 "scheme://[user:password@]host:port")
        kw["proxy"] = proxy
    if s := found.get("timeout"):
        try:
            kw["timeout"] = float(s.value)
        except ValueError:
            raise PipConfigError(f"timeout = {s.value!r} ({s.origin}): not a number of seconds") from None
        if not kw["timeout"] > 0:  # type: ignore[operator]
            raise PipConfigError(f"timeout = {s.value!r} ({s.origin}): must be more than 0 seconds")
    if s := found.get("retries"):
        try:
            kw["retries"] = int(s.value)
        except ValueError:
            raise PipConfigError(f"retries = {s.value!r} ({s.origin}): not a whole number") from None
        if kw["retries"] < 0:  # type: ignore[operator]
            raise PipConfigError(f"retries = {s.value!r} ({s.origin}): must be 0 or more")
    if s := found.get("keyring-provider"):
        if s.value not in KEYRING_PROVIDERS:
            raise PipConfigError(f"keyring-provider = {s.value!r} ({s.origin}): expected one of "
                                 f"{', '.join(KEYRING_PROVIDERS)}")
        kw["keyring_provider"] = s.value
    return IndexSettings(url.rstrip("/"), origin, origins=origins, **kw)  # type: ignore[arg-type]
