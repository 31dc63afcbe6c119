"""Keeping the host's filesystem layout out of what a tool's caller reads.

A tool's error goes to a model (the tool loop, a chat provider) or to a remote MCP client
(``serve --http``): neither should learn where the machine keeps its workspace, soulframe's
state, config or home directory, nor a database's address. The CLI's own messages are for
the local admin and keep their paths and the commands they suggest; :func:`hide_host_paths`
is for tool errors only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import AgentLike

#: a database URL (its host, user, password and name are the host's business)
_DSN = re.compile(r"\b(?:postgres(?:ql)?|mysql|mariadb|sqlite|redis)(?:\+\w+)?://\S+", re.IGNORECASE)
#: an absolute path left after the known places are named: a slash not inside a word, a
#: relative path or a URL, with two segments at least (``</b>`` or ``a /b`` is no path)
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]")


#: advice to run a command of the host's (``; see `soulframe skills list```): a clause for
#: the local admin, which a model or remote client can neither run nor needs
_COMMAND_ADVICE = re.compile(r"[;,]\s*(?:see|run|try|use|check)\s+`soulframe [^`]*`(?:\s*\([^)]*\))?")
#: a command named anywhere else in the sentence
_COMMAND = re.compile(r"`soulframe [^`]*`")


def _places(agent: AgentLike) -> list[tuple[str, str]]:
    from . import paths

    named: list[tuple[Path, str]] = []
    try:
        named.append((Path(agent.state_dir), "the agent's state directory"))
    except Exception:  # an agent without usable state still gets its other paths hidden
        pass
    named += [(paths.config_dir(), "soulframe's config directory"),
              (paths.data_dir(), "soulframe's data directory"),
              (paths.cache_dir(), "soulframe's cache directory"),
              (paths.soulframe_home(), "soulframe's home directory"),
              (Path.home(), "the home directory")]
    out: list[tuple[str, str]] = []
    for path, name in named:
        for form in {str(path), os.path.realpath(path)}:
            if len(form) > 1:
                out.append((form, name))
    return out


def hide_host_paths(agent: AgentLike, text: str) -> str:
    """``text`` with every absolute path made workspace-relative (a path inside the
    workspace) or named generically (the state, config, home directory; any other path),
    database URLs replaced, and the host's own commands (advice for the local admin) left out."""
    text = _DSN.sub("the database", text)
    root = Path(agent.root)
    for form in sorted({str(root), os.path.realpath(root)}, key=len, reverse=True):
        if len(form) > 1:
            text = text.replace(form + os.sep, "").replace(form, "the workspace")
    # longest first: the state directory lies under the soulframe home, which lies under home
    for form, name in sorted(_places(agent), key=lambda p: len(p[0]), reverse=True):
        text = re.sub(re.escape(form) + r"(?:/[\w.@+-]+)*", name, text)
    text = _COMMAND.sub("a command of the agent's owner", _COMMAND_ADVICE.sub("", text))
    return _ABSOLUTE.sub("a path on the host", text)
