"""``soulframe ui``: a local web inspector for an agent's prompt, memory, upkeep and skills.

Server-rendered pages (starlette, uvicorn, Jinja2; the ``ui`` extra), no build step and
nothing fetched from elsewhere, so it works offline. Those libraries are imported only when
``ui`` runs (see :mod:`soulframe_ui.server`); loading this plugin imports click and soulframe.
"""

from __future__ import annotations

import click
from soulframe import hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("ui")
    @click.option("--port", type=click.IntRange(0, 65535), default=None, metavar="N",
                  help="Port on 127.0.0.1 (default 8765, or a free one if that is taken; 0: any free port).")
    @click.option("--open", "open_browser", is_flag=True, help="Open the page in your web browser.")
    @click.option("--write", is_flag=True,
                  help="Allow changes: apply / undo consolidation, release / drop quarantined writes.")
    @click.option("--json", "as_json", is_flag=True,
                  help="Print the URL, port and mode as one JSON line on stdout (for scripts).")
    @click.pass_context
    def ui(ctx: click.Context, port: int | None, open_browser: bool, write: bool, as_json: bool) -> None:
        """Inspect the agent in your browser: the prompt, memory, upkeep, skills and plugins.

        \b
        Pages:
          Prompt   a session's prompt by section and zone, tokens against the budget, what
                   was truncated or dropped and why, and the diff between two session kinds
          Memory   search with per-channel score bars, citations that open the file, index
                   status, the daily-log timeline and the most recalled entries
          Upkeep   the consolidation diary, a dry run to review (apply / undo with --write)
                   and the quarantine of refused writes
          Skills   skills by tier with what they shadow, skill search, the plugins and hooks

        It listens on 127.0.0.1 only and prints a URL with a token made for this run; a
        request without the token is refused. It is read-only unless --write is given, and
        it masks anything shaped like a secret.

        \b
          soulframe ui                  print the URL and serve until Ctrl-C
          soulframe ui --open           and open it in the browser
          soulframe ui --write          allow apply / undo / release / drop
          soulframe ui --port 0 --json  any free port; the URL as JSON on stdout
        """
        try:
            from .server import run
        except ModuleNotFoundError as exc:
            from soulframe import SoulframeError

            raise SoulframeError(
                f"`soulframe ui` needs starlette, uvicorn and Jinja2, which are not installed "
                f"(no module {exc.name!r}): pip install 'soulframe[ui]'"
            ) from None

        run(ctx.obj.agent(), port=port, open_browser=open_browser, write=write, as_json=as_json, pm=ctx.obj.pm)
