"""``soulframe keys``: API keys stored outside the workspace (:mod:`soulframe._engine.keys`)."""

from __future__ import annotations

import sys

import click

from .state import echo_json


@click.group("keys")
def keys_group() -> None:
    """API keys, kept in a private file in your user config dir (never in the workspace).

    \b
    Lookup order for every provider: the config's api_key, then the environment
    variable (api_key_env, or the provider's own: OPENAI_API_KEY ...), then this file.

    \b
      soulframe keys set openai          # prompts; the key is not echoed
      echo "$KEY" | soulframe keys set anthropic
      soulframe keys list
      export OPENAI_API_KEY=$(soulframe keys get openai)
    """


@keys_group.command("set")
@click.argument("name")
@click.option("--value", metavar="KEY", help="The key itself (it lands in your shell history: "
              "prefer the prompt or standard input).")
def keys_set(name: str, value: str | None) -> None:
    """Store a key under NAME: openai, anthropic, gemini, openrouter, or the environment
    variable a provider reads (e.g. MY_PROXY_KEY named by api_key_env).

    \b
      soulframe keys set openai                 # asks for the key, without echo
      printf %s "$KEY" | soulframe keys set MY_PROXY_KEY
    """
    from ..keys import canonical, set_key

    canonical(name)  # a bad name fails before the user types a key
    if value is None:
        if sys.stdin.isatty():
            value = click.prompt("Enter key", hide_input=True)
        else:
            value = sys.stdin.readline()
    path = set_key(name, value)
    click.echo(f"stored {canonical(name)} in {path}")


@keys_group.command("get")
@click.argument("name")
def keys_get(name: str) -> None:
    """Print the key stored under NAME, for a script or another tool (the one command
    that shows a key; it goes to standard output only). Exit 1 if none is stored.

    \b
      soulframe keys get openai
      OPENAI_API_KEY=$(soulframe keys get openai) my-script
    """
    from ..keys import canonical, stored_key

    value = stored_key(name)
    if value is None:
        raise click.ClickException(
            f"no key stored under {canonical(name)}; add one with `soulframe keys set {name}`")
    click.echo(value)


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {path, keys: [names]}.")
def keys_list(as_json: bool) -> None:
    """The names of the stored keys (never the keys).

    \b
      soulframe keys list
      soulframe keys list --json
    """
    from ..keys import keys_path, stored_keys

    names = sorted(stored_keys())
    if as_json:
        echo_json({"path": str(keys_path()), "keys": names})
        return
    if not names:
        click.echo(f"no keys stored (in {keys_path()}); add one with `soulframe keys set NAME`")
    for n in names:
        click.echo(n)


@keys_group.command("path")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {path, exists}.")
def keys_path_command(as_json: bool) -> None:
    """Print where keys are stored.

    \b
      soulframe keys path
    """
    from ..keys import keys_path

    if as_json:
        echo_json({"path": str(keys_path()), "exists": keys_path().exists()})
        return
    click.echo(str(keys_path()))


@keys_group.command("remove")
@click.argument("name")
def keys_remove(name: str) -> None:
    """Forget the key stored under NAME.

    \b
      soulframe keys remove openai
    """
    from ..keys import canonical, remove_key

    if not remove_key(name):
        raise click.ClickException(f"no key stored under {canonical(name)}")
    click.echo(f"removed {canonical(name)}")
