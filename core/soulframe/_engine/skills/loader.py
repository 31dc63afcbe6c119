"""Reading skills from disk: one ``SKILL.md`` parsed, one skill root scanned.

A skill is a directory holding a ``SKILL.md`` whose front matter (YAML between ``---`` lines,
or JSON) has a ``name`` and a ``description`` (seed 000 §8, 001 §4). Everything a user can
get wrong here — a missing key, broken YAML, a file over ``skills.max_skill_file_bytes``, a
symlink that leaves its root — produces a :class:`SkillProblem` naming the file (and the line
or key), and the skill is skipped; nothing is dropped silently.

Parsing is cached by ``(mtime_ns, size, inode)``, so a reload after one edit re-reads one
file, not all of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..model import Skill, SoulframeWarning

if TYPE_CHECKING:
    from .frontcache import FrontMatterMemo

SKILL_FILE = "SKILL.md"
#: the placeholder replaced with the skill's absolute directory when a skill is read
BASE_DIR_PLACEHOLDER = "{baseDir}"
#: directories that are never skills (and never worth watching)
IGNORED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".DS_Store"})

_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
#: fenced code blocks: a "# comment" or an example SKILL.md inside one is not a heading
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)


class SkillWarning(SoulframeWarning):
    """A skill was skipped or cut (bad front matter, too large, over a prompt limit)."""


@attrs.frozen
class SkillProblem:
    """Why something was skipped or cut: ``path`` names the file, ``message`` says what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


#: what a stat says about a path: (mtime_ns, size, inode); equal means "unchanged". A plain
#: tuple, not a class: the no-watcher staleness check builds one per path per prompt build.
FileSig = tuple[int, int, int]


def sig_of(path: str | os.PathLike[str]) -> FileSig | None:
    """The stat signature of ``path``, or ``None`` when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def substitute_base_dir(text: str, base_dir: Path) -> str:
    """Replace ``{baseDir}`` with the skill's absolute directory (seed 000 §8)."""
    return text.replace(BASE_DIR_PLACEHOLDER, str(base_dir))


def _front_matter_offset(text: str) -> int:
    """How many lines precede the front matter (:func:`split_front_matter` strips them first)."""
    stripped = text.lstrip()
    return text[: len(text) - len(stripped)].count("\n")


def _parse_error(exc: Exception, text: str) -> str:
    """A parser error as "line N: what", with N counted in the whole SKILL.md."""
    import yaml

    lead = _front_matter_offset(text)
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        # line 0 of the YAML text is the rest of the opening '---' line
        line = lead + 1 + exc.problem_mark.line
        what = exc.problem or "invalid YAML"
        opened = ""
        if exc.context_mark is not None and exc.context:
            opened = f" ({exc.context} opened on line {lead + 1 + exc.context_mark.line})"
        return f"line {line}: malformed YAML front matter: {what}{opened}"
    if isinstance(exc, json.JSONDecodeError):
        # line 1 of the JSON text is the opening '{' line
        return f"line {lead + exc.lineno}: malformed JSON front matter: {exc.msg}"
    if isinstance(exc, yaml.YAMLError):
        return f"malformed YAML front matter: {exc}"
    return f"malformed front matter: {type(exc).__name__}: {exc}"


def _json_front_matter(text: str) -> tuple[dict[str, Any], str] | str:
    """A leading JSON object and the text after it, or an error naming the line."""
    lead = len(text) - len(text.lstrip())
    try:
        value, end = json.JSONDecoder().raw_decode(text, lead)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}: malformed JSON front matter: {exc.msg}"
    if not isinstance(value, dict):
        return "JSON front matter must be an object with 'name' and 'description'"
    return value, text[end:].lstrip("\n")


_YAML_FENCE = re.compile(r"^-{3,}\s*$", re.MULTILINE)
_JSON_FENCE = re.compile(r"^(?:{|})$", re.MULTILINE)


def split_front_matter(
    text: str, memo: FrontMatterMemo | None = None
) -> tuple[dict[str, Any], str]:
    """The front matter of a Markdown file as a dict, and the body after it: a ``---``
    fenced YAML block (PyYAML's safe loader) or a JSON object whose braces stand alone on
    their lines; ``({}, text)`` when there is none. The rules python-frontmatter follows
    (whose YAML path this was), without importing it: PyYAML alone is ~2x lighter. With
    ``memo``, a YAML block parsed before (same text) is not parsed again, and PyYAML is
    not imported at all when every block is known."""
    text = text.strip()
    if _YAML_FENCE.match(text):
        parts = _YAML_FENCE.split(text, 2)
        if len(parts) < 3:
            return {}, text
        known, data = memo.get(parts[1]) if memo is not None else (False, None)
        if not known:
            import yaml

            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            data = yaml.load(parts[1], Loader=loader)  # noqa: S506 - a safe loader
            if memo is not None:
                memo.put(parts[1], data)
    elif _JSON_FENCE.match(text):
        parts = _JSON_FENCE.split(text, 2)
        if len(parts) < 3:
            return {}, text
        data = json.loads("{" + parts[1] + "}")
    else:
        return {}, text
    return (data if isinstance(data, dict) else {}), parts[2].strip()


def parse_skill_text(
    text: str,
    path: Path,
    *,
    tier: int = 0,
    tier_name: str = "",
    digest: str = "",
    memo: FrontMatterMemo | None = None,
) -> Skill | SkillProblem:
    """Parse the text of a SKILL.md into a :class:`Skill`, or say why it is not one
    (``memo``: see :func:`split_front_matter`)."""
    shown = str(path)
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write first
    try:
        metadata, body = split_front_matter(text, memo)
    except Exception as exc:  # yaml and json raise their own error types
        return SkillProblem(shown, _parse_error(exc, text))
    if not metadata and text.lstrip().startswith("{"):
        # JSON front matter the fenced form misses: it wants the braces alone on their
        # lines, so `{"name": "x", "description": "y"}` on one line (or a closing brace
        # after the last value) would read as "no front matter"
        got = _json_front_matter(text)
        if isinstance(got, str):
            return SkillProblem(shown, got)
        metadata, body = got
    if not metadata:
        return SkillProblem(
            shown,
            "no front matter: start the file with a '---' block holding 'name' and "
            "'description' (see `soulframe skills new`)",
        )
    for key in ("name", "description"):
        value = metadata.get(key)
        if value is None:
            return SkillProblem(shown, f"front matter has no {key!r} key (it is required)")
        if not isinstance(value, str) or not value.strip():
            return SkillProblem(
                shown, f"front matter key {key!r} must be a non-empty string, got {value!r}"
            )
    # one spelling per name: "café" typed on macOS (NFD) and elsewhere (NFC) is one skill
    name = unicodedata.normalize("NFC", str(metadata["name"]).strip())
    bad = name_problem(name)
    if bad is not None:
        return SkillProblem(shown, f"front matter key 'name' = {bad}")
    description = " ".join(str(metadata["description"]).split())
    headings = tuple(h.strip() for h in _HEADING.findall(_FENCE.sub("", body)))
    clean = {k: v for k, v in metadata.items() if k not in ("name", "description")}
    return Skill(
        name=name,
        description=description,
        path=path,
        tier=tier,
        tier_name=tier_name,
        metadata=clean,
        headings=headings,
        digest=digest,
    )


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a skill, or ``None``. A name is listed in every prompt,
    passed back to ``skill_read`` and used as a directory name, so it holds no line break,
    markup, path separator, control or invisible character (two names that differ only by
    a zero-width space would look like one skill)."""
    from ..neutralise import strip_invisible

    # an emoji's variation selector (the "️" of "☀️") is part of how it is drawn, not a
    # hidden character
    drawn = "".join(c for c in name if not 0xFE00 <= ord(c) <= 0xFE0F)
    if (any(c in name for c in "\n\r\t<>&\"/\\") or strip_invisible(drawn) != drawn
            or any(unicodedata.category(c) == "Cc" for c in name)):
        return f"{name!r}: use letters, digits, '-', '_' or '.'"
    return None


#: a file modified less than this before it was read may be modified again within the same
#: mtime tick (Linux timestamps are coarse, a few ms) without its signature changing: such a
#: "racy" entry is re-read rather than trusted, as git does for its index
RACY_NS = 100_000_000


def is_racy(sig: FileSig | None, read_at_ns: int) -> bool:
    # a file dated in the future (clock skew, `touch -d`) is not racy: treating it so would
    # re-read it on every access for as long as the skew lasts
    return sig is not None and 0 <= read_at_ns - sig[0] < RACY_NS


@attrs.define
class _Cached:
    sig: FileSig
    result: Skill | SkillProblem
    read_at_ns: int


@attrs.define
class ScanResult:
    """What scanning one root found: skills (in directory order), problems, and the paths
    whose stat signature tells whether the root changed since (root, skill dirs, files)."""

    skills: list[Skill] = attrs.field(factory=list)
    problems: list[SkillProblem] = attrs.field(factory=list)
    watched: dict[str, FileSig | None] = attrs.field(factory=dict)


class SkillFileCache:
    """Parsed SKILL.md files keyed by path, valid while the file's stat signature holds;
    with ``memo``, front matter parsed by an earlier process is reused (by content)."""

    def __init__(self, memo: FrontMatterMemo | None = None) -> None:
        self._entries: dict[str, _Cached] = {}
        self.memo = memo

    def load(
        self, path: Path, sig: FileSig, *, tier: int, tier_name: str, max_bytes: int
    ) -> Skill | SkillProblem:
        key = str(path)
        hit = self._entries.get(key)
        if hit is not None and hit.sig == sig and not is_racy(sig, hit.read_at_ns):
            result = hit.result
        else:
            read_at = time.time_ns()
            result = self._read(path, sig, max_bytes=max_bytes)
            self._entries[key] = _Cached(sig, result, read_at)
        if isinstance(result, Skill) and (result.tier != tier or result.tier_name != tier_name):
            result = attrs.evolve(result, tier=tier, tier_name=tier_name)
        return result

    def _read(self, path: Path, sig: FileSig, *, max_bytes: int) -> Skill | SkillProblem:
        if sig[1] > max_bytes:
            return SkillProblem(
                str(path),
                f"{sig[1]:,} bytes is over skills.max_skill_file_bytes ({max_bytes:,}); "
                "skipped — move long reference material into other files next to it",
            )
        try:
            data = path.read_bytes()
        except OSError as exc:
            return SkillProblem(str(path), f"cannot be read: {exc.strerror or exc}")
        if len(data) > max_bytes:  # grew between the stat and the read
            return SkillProblem(
                str(path), f"{len(data):,} bytes is over skills.max_skill_file_bytes ({max_bytes:,})"
            )
        text = data.decode("utf-8", errors="replace")
        return parse_skill_text(text, path, digest=hashlib.sha256(data).hexdigest(), memo=self.memo)

    def forget_missing(self, seen: Iterable[str]) -> None:
        keep = set(seen)
        for key in [k for k in self._entries if k not in keep]:
            del self._entries[key]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def scan_root(
    root: Path,
    *,
    tier: int,
    tier_name: str,
    max_bytes: int,
    cache: SkillFileCache,
    within: Path | None = None,
) -> ScanResult:
    """Find ``<root>/*/SKILL.md``. A skill directory (or SKILL.md) that is a symlink leading
    outside ``root`` is skipped with a problem: a skill root must not become a way to read
    arbitrary files into the prompt. Two directories declaring the same name: the first in
    sorted order wins, with a problem naming both. With ``within``, the root itself must
    resolve inside it: a workspace's ``skills/`` that is a symlink elsewhere is refused the
    same way (``skills.extra_dirs`` is how to add a directory from outside)."""
    out = ScanResult()
    root = Path(root).expanduser()
    out.watched[str(root)] = sig_of(root)
    if out.watched[str(root)] is None or not root.is_dir():
        return out
    real_root = root.resolve()
    if within is not None and not _inside(real_root, Path(within).resolve()):
        out.problems.append(SkillProblem(
            str(root), f"leads through a symlink to {real_root}, outside the workspace {within}; its "
            f"skills are not loaded — to use them, list {real_root} in skills.extra_dirs"))
        return out
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        out.problems.append(SkillProblem(str(root), f"cannot be listed: {exc.strerror or exc}"))
        return out
    by_name: dict[str, Path] = {}
    for entry in entries:
        if entry.name.startswith(".") or entry.name in IGNORED_DIRS:
            continue
        try:
            if not entry.is_dir():
                continue
        except OSError:
            continue
        skill_dir = Path(entry.path)
        if entry.is_symlink() and not _inside(skill_dir.resolve(), real_root):
            out.problems.append(SkillProblem(
                str(skill_dir), f"is a symlink to {skill_dir.resolve()}, outside its skill root "
                f"{root}; skipped"))
            continue
        out.watched[str(skill_dir)] = sig_of(skill_dir)
        skill_file = skill_dir / SKILL_FILE
        sig = sig_of(skill_file)
        if sig is None:
            continue  # a directory without SKILL.md (yet): its mtime is watched above
        out.watched[str(skill_file)] = sig
        if skill_file.is_symlink() and not _inside(skill_file.resolve(), real_root):
            out.problems.append(SkillProblem(
                str(skill_file), f"is a symlink to {skill_file.resolve()}, outside its skill "
                f"root {root}; skipped"))
            continue
        result = cache.load(skill_file, sig, tier=tier, tier_name=tier_name, max_bytes=max_bytes)
        if isinstance(result, SkillProblem):
            out.problems.append(result)
            continue
        if result.name in by_name:
            out.problems.append(SkillProblem(
                str(skill_file), f"declares name {result.name!r}, already declared by "
                f"{by_name[result.name] / SKILL_FILE} in the same root; skipped"))
            continue
        by_name[result.name] = skill_dir
        out.skills.append(result)
    return out


def read_skill(skill: Skill, *, max_bytes: int) -> str:
    """The SKILL.md text of ``skill`` with ``{baseDir}`` replaced by its absolute directory."""
    from ..model import SoulframeError

    # where the file leads now, not when the skills were loaded: it may have been swapped for
    # a link since (a watcher's snapshot is trusted between its reloads)
    real = skill.path.resolve()
    root = skill.base_dir.parent.resolve()
    if not _inside(real, root):
        raise SoulframeError(
            f"{skill.path}: now a link to {real}, outside its skill root {root}; not read")
    try:
        size = real.stat().st_size
    except OSError as exc:
        raise SoulframeError(f"{skill.path}: cannot be read: {exc.strerror or exc}") from exc
    if size > max_bytes:
        raise SoulframeError(
            f"{skill.path}: {size:,} bytes is over skills.max_skill_file_bytes ({max_bytes:,})"
        )
    text = real.read_bytes().decode("utf-8", errors="replace")
    return substitute_base_dir(text, skill.base_dir.resolve())


def frontmatter_value_repr(value: Any) -> str:
    """How a front-matter value is shown in ``skills show`` (JSON for structures)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
