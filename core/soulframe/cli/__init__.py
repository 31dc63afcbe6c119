"""The ``soulframe`` command line: the click app (:mod:`.app`), the helpers every command and
plugin shares (:mod:`.state`), and one module per command group (``prompt``, ``memory``,
``skills``, ``tools``, ``workspace``: init, doctor, context, identity).

Plugins import ``State``, ``pass_state``, ``echo_json`` and ``command_group`` from here and add
their commands through the ``register_commands(cli)`` hook.
"""

from __future__ import annotations

from .app import build_cli, main
from .state import State, command_group, echo_json, model_option, pass_state

__all__ = ["State", "build_cli", "command_group", "echo_json", "main", "model_option", "pass_state"]
