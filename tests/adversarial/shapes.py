"""A workspace holding every hostile path shape the adversarial suite attacks: symlinks to
files and directories, back into the workspace root, out of it, loops, dangling links, and a
file name that is not UTF-8. Each secret is a distinct keyword, so a keyword search for it
finds it wherever it leaked."""

from __future__ import annotations

import os
from pathlib import Path

#: in MEMORY.md: private memory, only a main session may see it
MEMORY_SECRET = "mnemosecretkiwi"
#: in USER.md: the owner's profile, never memory and never public
USER_SECRET = "usersecretplover"
#: in SOUL.md: a context file, never memory
SOUL_SECRET = "soulsecretwren"
#: outside the workspace: no session ever sees it
OUTSIDE_SECRET = "outsidesecretibis"
#: outside the workspace, reached through a linked skills/ root
SKILL_SECRET = "skillsecretrook"
#: public memory: every session may find it
PUBLIC_NOTE = "publicnoteheron"
#: in the file whose name is not UTF-8: skipped, or indexed under an escaped name
BAD_NAME_NOTE = "badnamenotestork"
#: in a file next to the loops: the rest of memory/ is still indexed
BESIDE_LOOPS = "besideloopsegret"

PRIVATE = (MEMORY_SECRET, USER_SECRET, SOUL_SECRET)
NEVER = (OUTSIDE_SECRET, SKILL_SECRET)

SESSION_KINDS = ("main", "group", "subagent", "cron", "heartbeat")

#: paths a memory_get must refuse in every session (each reaches a private or outside file,
#: loops, or does not exist)
HOSTILE_GETS = (
    "memory/all/MEMORY.md", "memory/all/USER.md", "memory/all/SOUL.md",
    "memory/mem.md", "memory/soul.md", "memory/escape.md", "memory/outdir/leak.md", "memory/hard.md",
    "memory/self.md", "memory/a.md", "memory/b.md", "memory/dangling.md",
    "memory/loopdir/x.md", "../outside/leak.md", "memory/../MEMORY.md", "memory/../USER.md",
    "/etc/passwd", "SOUL.md", "USER.md", "memory/all/memory/../MEMORY.md",
)


def build(root: Path) -> Path:
    """Create the workspace under ``root`` and return it."""
    ws = root / "ws"
    outside = root / "outside"
    (ws / "memory").mkdir(parents=True)
    outside.mkdir()
    (outside / "leak.md").write_text(f"# outside\n{OUTSIDE_SECRET} lives outside the workspace\n")
    (ws / "SOUL.md").write_text(f"# SOUL.md\nBe exact. {SOUL_SECRET}\n")
    (ws / "USER.md").write_text(f"# USER.md\nThe owner is Priya. {USER_SECRET}\n")
    (ws / "MEMORY.md").write_text(f"# Memory\n- The launch code word is {MEMORY_SECRET}\n")
    # keyword-only: the shapes are about paths, not meaning, and the suite must stay fast
    (ws / "soulframe.toml").write_text('[embedding]\nprovider = "none"\n')
    (ws / "AGENTS.md").write_text("# AGENTS.md\nBe helpful.\n")
    (ws / "TOOLS.md").write_text("# TOOLS.md\nNothing special.\n")
    (ws / "memory" / "2026-01-02.md").write_text(f"# 2026-01-02\n- A {PUBLIC_NOTE} was seen at the lake\n")
    (ws / "memory" / "notes.md").write_text(f"# notes\n- {BESIDE_LOOPS} beside the loops\n")
    mem = ws / "memory"
    os.symlink("..", mem / "all")                          # a directory link back at the root
    os.symlink("../MEMORY.md", mem / "mem.md")             # a file link to private memory
    os.symlink("../SOUL.md", mem / "soul.md")              # a file link to a context file
    os.symlink(outside / "leak.md", mem / "escape.md")     # a file link out of the workspace
    os.symlink(outside, mem / "outdir")                    # a directory link out of it
    os.symlink("self.md", mem / "self.md")                 # a loop onto itself
    os.symlink("b.md", mem / "a.md")                       # a two-file loop
    os.symlink("a.md", mem / "b.md")
    os.symlink("nowhere.md", mem / "dangling.md")          # dangling
    os.symlink("nowhere", mem / "dangdir")
    os.symlink("loopdir", mem / "loopdir")                 # a directory loop
    os.symlink("2026-01-02.md", mem / "alias.md")          # an allowed alias inside memory/
    os.link(ws / "USER.md", mem / "hard.md")               # a hard link: the same file, public name
    bad = os.fsencode(str(mem)) + b"/bad-\xff\xfe.md"      # a name that is not UTF-8
    with open(bad, "wb") as fh:
        fh.write(f"# bad name\n- {BAD_NAME_NOTE} in a badly named file\n".encode())
    # a skills/ root that is a symlink out of the workspace
    skills = outside / "skills" / "exfil"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: exfil\ndescription: Release checklist for every deploy\n---\n"
        f"# Exfil\n{SKILL_SECRET} steps from outside the workspace\n")
    os.symlink(outside / "skills", ws / "skills")
    return ws
