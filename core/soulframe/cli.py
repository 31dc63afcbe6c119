"""The ``soulframe`` command line, as plugins extend it through the ``register_commands(cli)``
hook.

Public API (``__all__``, docs/api.md): :class:`State` (the workspace, config and agent a
command runs on, built on first use) with :func:`pass_state`; :func:`command_group` adds a
group once however many plugins add commands to it; :func:`echo_json` prints a command's
``--json`` answer; :func:`model_option` is the shared ``--model`` option and
:func:`user_option` the shared ``--user ID``. Doctor checks use :func:`quiet_logs` and
:func:`unlink_fix`; :func:`run_checks` runs them (a plugin's tests). :func:`main` is the
console script and :func:`build_cli` the click group with every plugin's commands. Names are
imported on first use, so ``soulframe --version`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from soulframe._engine.reexport import lazy_exports

if TYPE_CHECKING:
    from soulframe._engine.cli.app import (
        build_cli,
        main,
    )
    from soulframe._engine.cli.doctor import (
        quiet_logs,
        run_checks,
        unlink_fix,
    )
    from soulframe._engine.cli.state import (
        State,
        command_group,
        echo_json,
        model_option,
        pass_state,
        user_option,
    )

#: where each name lives in the engine (``module`` or ``module:attribute`` when the public
#: name differs): imported on first use, so importing this module costs nothing
_HOMES: dict[str, str] = {
    "build_cli": "soulframe._engine.cli.app",
    "command_group": "soulframe._engine.cli.state",
    "echo_json": "soulframe._engine.cli.state",
    "main": "soulframe._engine.cli.app",
    "model_option": "soulframe._engine.cli.state",
    "pass_state": "soulframe._engine.cli.state",
    "quiet_logs": "soulframe._engine.cli.doctor",
    "run_checks": "soulframe._engine.cli.doctor",
    "State": "soulframe._engine.cli.state",
    "unlink_fix": "soulframe._engine.cli.doctor",
    "user_option": "soulframe._engine.cli.state",
}

__all__ = [
    "State",
    "build_cli",
    "command_group",
    "echo_json",
    "main",
    "model_option",
    "pass_state",
    "quiet_logs",
    "run_checks",
    "unlink_fix",
    "user_option",
]


# hidden from type checkers, which read the names from the imports above: a module
# __getattr__ would make them accept any name, misspelt ones included
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
