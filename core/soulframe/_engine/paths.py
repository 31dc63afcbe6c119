"""Where soulframe keeps its own files, outside any workspace: one layout, one override.

By default soulframe follows the platform's conventions (XDG on Linux):

=================  ==========================================  ===============================
what               default                                     with ``SOULFRAME_HOME=H``
=================  ==========================================  ===============================
user config, keys  ``~/.config/soulframe``                     ``H/config``
models             ``~/.local/share/soulframe/models``         ``H/data/models``
caches             ``~/.cache/soulframe``                      ``H/cache``
default workspace  ``~/.soulframe/workspace``                  ``H/workspace``
indexes (state)    ``~/.soulframe/state``                      ``H/state``
global skills      ``~/.soulframe/skills``                     ``H/skills``
=================  ==========================================  ===============================

``SOULFRAME_HOME`` (as llm's ``LLM_USER_PATH``) puts everything under one directory: a
portable install, a test run that must not touch the real ones, a second identity on one
machine. A setting in a config file (``workspace``, ``state_dir``, ``skills.global_dir``)
still wins over both. ``soulframe paths`` prints the table as it applies.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "SOULFRAME_HOME"

#: the config keys whose default lies under the soulframe home, and the folder there
HOME_DEFAULTS = {"workspace": "workspace", "state_dir": "state", "skills.global_dir": "skills"}


def override() -> Path | None:
    """``$SOULFRAME_HOME``, when set."""
    value = os.environ.get(ENV)
    return Path(value).expanduser() if value else None


def soulframe_home() -> Path:
    """``$SOULFRAME_HOME``, else ``~/.soulframe``."""
    return override() or Path("~/.soulframe").expanduser()


def default_workspace() -> Path:
    return soulframe_home() / "workspace"


def _platform(kind: str) -> Path:
    import platformdirs

    getter = {"config": platformdirs.user_config_dir, "data": platformdirs.user_data_dir,
              "cache": platformdirs.user_cache_dir}[kind]
    return Path(getter("soulframe"))


def config_dir() -> Path:
    """The user config (``soulframe.toml``), stored keys, aliases, the default chat model."""
    home = override()
    return home / "config" if home else _platform("config")


def data_dir() -> Path:
    """Downloaded models."""
    home = override()
    return home / "data" if home else _platform("data")


def cache_dir() -> Path:
    """What can be rebuilt: the model's arranged weights."""
    home = override()
    return home / "cache" if home else _platform("cache")
