"""The workspace in a private git repository (seed 003 §6.12, §8.6).

Everything goes through the ``git`` command line (no new dependency). soulframe never
pushes: adding a remote and pushing stay the user's decision. The workspace is a repository
of its own (seed 003 §8.6: ``cd ~/clawd && git init``); a workspace that sits inside a
bigger repository (dotfiles) gets its own nested one from ``backup init``, so a backup
commit never takes along what is staged in the outer repository.

Indexes and databases live in ``state_dir``, outside the workspace; the ``.gitignore``
written by ``backup init`` keeps out any copy that lands inside it anyway, and a config
file holding a literal secret, and a Markdown file holding one, are refused at commit time
(:mod:`.backup_secrets`).
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from soulframe import SoulframeError

from .backup_secrets import file_secrets
from .backup_secrets import secret_configs as _secret_configs

#: what `backup init` writes into .gitignore (appended, never duplicated)
GITIGNORE_HEADER = "# added by `soulframe backup init`: indexes, databases and temporary files"
GITIGNORE_DEFAULTS: tuple[str, ...] = (
    "*.sqlite*",
    "*.db",
    "*.db-*",
    ".*.tmp",
    "*.swp",
    "*~",
    ".DS_Store",
)
#: --exclude-daily: the daily logs (and their archive) stay on this machine only
DAILY_PATTERNS: tuple[str, ...] = ("memory/*.md", "memory/archive/")


class GitError(SoulframeError):
    """git is missing, or a git command failed; the message says which and why."""


def git_executable() -> str:
    exe = shutil.which("git")
    if exe is None:
        raise GitError(
            "git is not installed (or not on PATH): backups need it — install git "
            "(e.g. `apt install git`, `brew install git`) and run this again")
    return exe


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` in ``root``; a failure raises :class:`GitError` with git's message."""
    try:
        out = subprocess.run([git_executable(), *args], cwd=root, capture_output=True, text=True,
                             timeout=120, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} in {root} did not finish in {exc.timeout:.0f}s") from None
    if check and out.returncode != 0:
        detail = (out.stderr or out.stdout).strip()
        if "tell me who you are" in detail or "empty ident" in detail or "user.useConfigOnly" in detail:
            raise GitError(
                "git does not know who you are, so it cannot commit. Run once:\n"
                '  git config --global user.name "Your Name"\n'
                '  git config --global user.email "you@example.com"')
        raise GitError(f"git {' '.join(args[:2])} failed in {root}: {detail or f'exit code {out.returncode}'}")
    return out


def toplevel(root: Path) -> Path | None:
    """The top of the git repository holding ``root``, or ``None`` when it is not in one."""
    out = git(root, "rev-parse", "--show-toplevel", check=False)
    if out.returncode != 0:
        return None
    return Path(out.stdout.strip()).resolve()


def _require_workspace(root: Path) -> Path:
    if not root.is_dir():
        raise SoulframeError(f"{root} does not exist: create the workspace first (`soulframe init`)")
    return root.resolve()


def _require_repo(root: Path) -> Path:
    top = toplevel(root)
    if top is None:
        raise SoulframeError(f"{root} is not in a git repository: run `soulframe backup init` first")
    if top != root:
        raise SoulframeError(
            f"{root} is inside the git repository at {top}, not a repository of its own: run "
            f"`soulframe backup init` to make it one, or commit with git in {top}")
    return top


def redact_url(url: str) -> str:
    """A remote URL without a password or token (``https://user:TOKEN@host`` -> ``user:***``)."""
    from soulframe.kit import redact_endpoint as redact

    return redact(url)


def _ignored(root: Path, name: str) -> bool:
    return git(root, "check-ignore", "-q", "--", name, check=False).returncode == 0


# --------------------------------------------------------------------------- init


@attrs.frozen
class InitResult:
    workspace: Path
    created_repo: bool
    #: the repository the workspace sat in before it got its own
    parent_repo: Path | None
    gitignore_added: list[str]
    commit: str | None
    notes: list[str] = attrs.field(factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"workspace": str(self.workspace), "created_repo": self.created_repo,
                "parent_repo": str(self.parent_repo) if self.parent_repo else None,
                "gitignore_added": list(self.gitignore_added), "commit": self.commit,
                "notes": list(self.notes)}


def gitignore_lines(root: Path, *, exclude_daily: bool, extra_dirs: Sequence[Path] = ()) -> list[str]:
    """The patterns ``backup init`` wants in .gitignore for this workspace."""
    lines = list(GITIGNORE_DEFAULTS)
    for d in extra_dirs:  # state_dir or store.path inside the workspace: never commit them
        try:
            rel = d.expanduser().resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        if rel and rel != ".":
            lines.append(f"/{rel}")
    for name, _keys in _secret_configs(root):
        lines.append(f"/{name}")
    if exclude_daily:
        lines.extend(DAILY_PATTERNS)
    return lines


def append_gitignore(root: Path, lines: Sequence[str]) -> list[str]:
    """Append the lines .gitignore lacks (an existing file is never rewritten)."""
    path = root / ".gitignore"
    existing = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    have = {line.strip() for line in existing.splitlines()}
    new = [line for line in dict.fromkeys(lines) if line not in have]
    if not new:
        return []
    chunk = ""
    if existing and not existing.endswith("\n"):
        chunk += "\n"
    if existing.strip():
        chunk += "\n"
    if GITIGNORE_HEADER not in have:
        chunk += GITIGNORE_HEADER + "\n"
    chunk += "\n".join(new) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(chunk)
    return new


def init(root: Path, *, exclude_daily: bool = False, commit: bool = True,
         extra_dirs: Sequence[Path] = ()) -> InitResult:
    """``git init`` the workspace unless it is a repository already, write the .gitignore
    defaults, and make the first commit (``initial workspace``) if there is none."""
    root = _require_workspace(root)
    notes: list[str] = []
    top = toplevel(root)
    created = False
    parent: Path | None = None
    if top != root:
        out = git(root, "init", "-q", "-b", "main", check=False)
        if out.returncode != 0:  # git older than 2.28 has no -b
            git(root, "init", "-q")
        created = True
        if top is not None:
            parent = top
            rel = root.relative_to(top).as_posix()
            notes.append(f"the workspace was inside the git repository at {top}; it is now a "
                         f"repository of its own — add /{rel}/ to {top / '.gitignore'} so the outer "
                         "one leaves it alone")
    added = append_gitignore(root, gitignore_lines(root, exclude_daily=exclude_daily,
                                                   extra_dirs=extra_dirs))
    for name, keys in _secret_configs(root):
        notes.append(f"{name} holds {', '.join(keys)}: it is kept out of git (.gitignore); "
                     "prefer model.api_key_env / embedding.api_key_env and commit it then")
    sha = None
    if commit and not _has_commits(root):
        result = commit_all(root, "initial workspace")
        sha = result.sha
    return InitResult(root, created, parent, added, sha, notes)


def _has_commits(root: Path) -> bool:
    return git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode == 0


# --------------------------------------------------------------------------- commit


@attrs.frozen
class CommitResult:
    committed: bool
    message: str
    sha: str | None = None
    files: list[str] = attrs.field(factory=list)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def default_message(today: _dt.date) -> str:
    """``memory update 2026-11-21`` (seed 003 §8.6)."""
    return f"memory update {today.isoformat()}"


def commit_all(root: Path, message: str) -> CommitResult:
    """``git add -A`` the workspace and commit it (the index as it then is, so a file
    untracked with ``git rm --cached`` stays out). Nothing changed: ``committed`` is false."""
    root = _require_workspace(root)
    _require_repo(root)
    for name, keys in _secret_configs(root):
        if not _ignored(root, name):
            raise SoulframeError(
                f"{root / name} holds {', '.join(keys)}; refusing to commit a secret. Move it "
                "to an environment variable (model.api_key_env, embedding.api_key_env, "
                f"$SOULFRAME_DSN) or add /{name} to .gitignore (and run `git rm --cached {name}` "
                "if it was committed before — then rotate the key: it is in the history)")
    # what this commit takes: files changed since they were staged, untracked ones not
    # ignored (what `git add -A` adds) and what is staged already. Not every tracked file
    # again: reading 20,000 unchanged daily logs cost seconds a commit (and each cron run
    # with nothing to commit); a secret already committed is in the history whatever this
    # commit does, and `soulframe doctor` names it
    changed = git(root, "ls-files", "-z", "--modified", "--others", "--exclude-standard", check=False)
    staged = git(root, "diff", "--cached", "--name-only", "-z", check=False)
    found = file_secrets(root, [*changed.stdout.split("\0"), *staged.stdout.split("\0")])
    if found:
        shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
        raise SoulframeError(
            f"refusing to commit a secret: {shown}. Remove it from the file (and rotate it if it "
            "was shared); `soulframe doctor` lists every one")
    git(root, "add", "-A")
    staged = git(root, "diff", "--cached", "--name-only", "-z")
    files = [f for f in staged.stdout.split("\0") if f]
    if not files:
        return CommitResult(False, message)
    git(root, "commit", "-q", "-m", message)
    sha = git(root, "rev-parse", "HEAD").stdout.strip()
    return CommitResult(True, message, sha, files)


# --------------------------------------------------------------------------- status


def status(root: Path) -> dict[str, Any]:
    """Is the workspace a repository, what is uncommitted, the last commit, remotes (URLs
    without passwords) and unpushed commits. ``inside`` names the outer repository of a
    workspace that is not a repository of its own."""
    root = root.expanduser().resolve()
    out: dict[str, Any] = {
        "workspace": str(root), "repo": False, "inside": None, "branch": None,
        "dirty": [], "last_commit": None, "remotes": [], "upstream": None, "ahead": None,
    }
    if not root.is_dir():
        out["problem"] = f"{root} does not exist"
        return out
    top = toplevel(root)
    if top is None:
        return out
    if top != root:
        out["inside"] = str(top)
        return out
    out["repo"] = True
    branch = git(root, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    out["branch"] = branch.stdout.strip() or None
    porcelain = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    entries = porcelain.stdout.split("\0")
    dirty = []
    i = 0
    while i < len(entries):
        item = entries[i]
        i += 1
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        if code[0] in "RC":
            i += 1  # the rename's source path follows
        dirty.append({"status": code.strip() or code, "path": path})
    out["dirty"] = dirty
    if _has_commits(root):
        log = git(root, "log", "-1", "--format=%H%x00%cI%x00%s").stdout.rstrip("\n").split("\0")
        if len(log) == 3:
            out["last_commit"] = {"sha": log[0], "date": log[1], "message": log[2]}
    remotes = git(root, "remote", "-v").stdout.splitlines()
    seen: dict[str, str] = {}
    for line in remotes:
        parts = line.split()
        if len(parts) >= 2:
            seen.setdefault(parts[0], redact_url(parts[1]))
    out["remotes"] = [{"name": n, "url": u} for n, u in seen.items()]
    upstream = git(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False)
    if upstream.returncode == 0:
        out["upstream"] = upstream.stdout.strip()
        ahead = git(root, "rev-list", "--count", "@{u}..HEAD", check=False)
        if ahead.returncode == 0:
            out["ahead"] = int(ahead.stdout.strip() or 0)
    return out


# --------------------------------------------------------------------------- restore


def restore(source: str, dest: Path) -> list[str]:
    """``git clone SOURCE DEST``, then make the copy private again (directories 0700, files
    0600, executables 0700): git creates files with the umask's modes, and the workspace
    holds personal memory. Returns the core files the clone lacks."""
    dest = dest.expanduser()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SoulframeError(f"{dest} exists and is not empty: restore into a new directory")
    parent = dest.parent.resolve()
    if not parent.is_dir():
        parent.mkdir(parents=True, mode=0o700)
    existed = dest.exists()
    git(parent, "clone", "-q", "--", source, str(dest.resolve()))
    try:
        _check_out_a_branch(dest, source)
    except GitError:
        # leave the directory as it was: an empty clone would read as a workspace whose
        # files are all missing, and `init` would fill it with templates
        if existed:
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        else:
            shutil.rmtree(dest)
        raise
    make_private(dest)
    from .agents import CORE_FILES

    return [n for n in CORE_FILES if not (dest / n).is_file()]


def _check_out_a_branch(dest: Path, source: str) -> None:
    """After the clone, make sure a commit is checked out. A bare repository made with a
    plain ``git init --bare`` (a NAS, a USB disk) has its HEAD on ``master`` while ``backup
    init`` commits on ``main``: git then clones without checking anything out, and the
    restore looked like an empty workspace."""
    if git(dest, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).returncode == 0:
        return
    listed = git(dest, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin").stdout.split()
    branches = [b for b in listed if b != "HEAD"]
    if not branches:
        raise GitError(f"{source} holds no commits: nothing to restore (was the backup pushed? "
                       "`git -C WORKSPACE push -u origin HEAD` on the machine that has it)")
    for pick in ("main", "master", *(branches if len(branches) == 1 else ())):
        if pick in branches:
            git(dest, "checkout", "-q", "-b", pick, "--track", f"origin/{pick}")
            return
    raise GitError(f"{source} has several branches ({', '.join(branches)}) and its HEAD names none of them: "
                   f"clone it yourself (`git clone -b BRANCH {source} DIR`) or set its HEAD")


def make_private(root: Path) -> None:
    """chmod the tree: directories 0700, files 0600 (0700 when executable); symlinks untouched."""
    os.chmod(root, 0o700)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, 0o700)
        for name in filenames:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                continue
            executable = os.stat(p).st_mode & stat.S_IXUSR
            os.chmod(p, 0o700 if executable else 0o600)
