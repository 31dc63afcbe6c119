"""``soulframe models``: every model soulframe can use — chat models (``register_chat_models``)
and embedding providers (``register_embedding_providers``) — and the default chat model.
Plugins add subcommands to the group (``models install`` comes with the offline model)."""

from __future__ import annotations

from typing import Any

import click

from ..model import ConfigError
from .state import State, command_group, echo_json, own_copy, pass_state


def add_models_commands(cli: click.Group) -> None:
    group = command_group(cli, "models", "Chat models and embedding providers: list them, "
                          "pick the default chat model.")
    group.add_command(list_command)
    group.add_command(default_command)
    group.add_command(own_copy(aliases_group))


def _chat_rows(state: State) -> dict[str, Any]:
    from ..chatmodels import all_aliases, default_model
    from ..plugins import collect_named

    config = state.config()
    pm = state.pm if state.pm is not None else config.pm
    providers = collect_named(pm, "register_chat_models") if pm is not None else {}
    selected = config.get("model.provider")
    return {
        "provider": selected,
        "name": config.get("model.name"),
        "default": default_model(),
        "aliases": all_aliases(config),
        "providers": [{"name": n, "description": r.description, "plugin": r.plugin,
                       "selected": n == selected} for n, r in sorted(providers.items())],
    }


def _embedding_rows(state: State) -> dict[str, Any]:
    from ..embedding import explain_providers
    from ..plugins import collect_named

    config = state.config()
    pm = state.pm if state.pm is not None else config.pm
    rows = explain_providers(state.agent(require_workspace=False),
                             collect_named(pm, "register_embedding_providers"))
    selected = _selected(config, rows)
    for row in rows:
        row["selected"] = row["name"] == selected
    return {"provider": config.get("embedding.provider"), "selected": selected, "providers": rows}


@click.command("list")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: {chat: {provider, name, default, aliases, providers}, embedding: "
              "{provider, selected, providers}} (embedding's keys also at the top level).")
@pass_state
def list_command(state: State, as_json: bool) -> None:
    """List chat models (providers, the configured model, aliases, the default) and embedding
    providers (available or why not, model id, dimensions, which one is selected).

    \b
      soulframe -w ~/agent models list
      soulframe -w ~/agent models list --json
    """
    chat = _chat_rows(state)
    emb = _embedding_rows(state)
    if as_json:
        echo_json({**emb, "chat": chat, "embedding": emb})
        return
    click.secho("chat models", bold=True)
    chosen = f"{chat['provider']}/{chat['name']}" if chat["provider"] and chat["name"] else None
    click.echo(f"  [model] = {chosen or 'not set'}"
               + (f"; default: {chat['default']}" if chat["default"] else ""))
    for alias, target in sorted(chat["aliases"].items()):
        click.echo(f"  alias {alias} -> {target}")
    width = max((len(p["name"]) for p in chat["providers"]), default=0)
    for p in chat["providers"]:  # the descriptions in one column, as a table reads
        mark = "*" if p["selected"] else " "
        click.echo(f"{mark} {p['name']:<{width}}  {p['description']}".rstrip())
    click.echo()
    click.secho("embedding providers", bold=True)
    click.echo(f"embedding.provider = {emb['provider']!r}"
               f" -> {emb['selected'] or 'none (semantic search off)'}")
    for row in emb["providers"]:
        mark = "*" if row["selected"] else " "
        state_txt = "available" if row["available"] else "unavailable"
        dims = row.get("dimensions") or "?"
        click.secho(f"{mark} {row['name']}", bold=True, nl=False)
        click.echo(f"  [{state_txt}]  model: {row.get('model_id') or '-'}  dims: {dims}")
        where = row.get("weights") or row.get("endpoint")
        if where:
            click.echo(f"    {'weights' if row.get('weights') else 'endpoint'}: {where}")
        if not row["available"] and row.get("reason"):
            click.echo(f"    why: {row['reason']}")


@click.command("default")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {default, path}.")
@pass_state
def default_command(state: State, name: str | None, as_json: bool) -> None:
    """Show or set the chat model used when a workspace's config names none (and no -m is
    given): provider/model, or an alias of one. A name that names no provider is refused:
    it is used only where no [model] provider is configured.

    \b
      soulframe models default anthropic/claude-haiku-4-5
      soulframe models default          # show it
    """
    from ..chatmodels import (
        default_model,
        default_model_path,
        resolve,
        set_default_model,
        user_aliases,
    )
    from ..plugins import collect_named

    if name:
        # checked before it is saved: every command that reads the config would otherwise
        # fail on it (the workspace's own aliases are not known here; the default is the user's)
        providers = sorted(collect_named(state.pm, "register_chat_models")) if state.pm is not None else []
        provider, model = _config_errors(lambda: resolve(name, providers, user_aliases()))
        if provider is None and providers:
            raise click.ClickException(
                f"models default {name!r}: no chat provider for it; write provider/model (e.g. "
                f"{model.split('/')[0] + '/MODEL' if '/' in model else providers[0] + '/' + model}) "
                f"with one of: {', '.join(providers)}")
        set_default_model(name)
    current = default_model()
    if as_json:
        echo_json({"default": current, "path": str(default_model_path())})
    elif name:
        click.echo(f"default chat model: {current} (in {default_model_path()})")
    else:
        click.echo(current or "no default chat model; set one with `soulframe models default NAME`")


def _selected(config: Any, rows: list[dict[str, Any]]) -> str | None:
    name = str(config.get("embedding.provider") or "auto")
    if name == "none":
        return None
    by_name = {r["name"]: r for r in rows}
    if name != "auto":
        return name if by_name.get(name, {}).get("available") else None
    for candidate in config.get("embedding.auto_order") or ():
        if by_name.get(candidate, {}).get("available"):
            return str(candidate)
    return None


@click.group("aliases")
def aliases_group() -> None:
    """Short names for chat models, used by -m NAME on every command that calls one.

    \b
      soulframe models aliases set fast openai/gpt-4o-mini
      soulframe -w ~/agent heartbeat -m fast
      soulframe models aliases list

    Stored in your user config dir; a workspace's `[model] aliases` wins on the same name.
    """


@aliases_group.command("set")
@click.argument("alias")
@click.argument("model")
def aliases_set(alias: str, model: str) -> None:
    """Make ALIAS mean MODEL (provider/model, a model id, or another alias).

    \b
      soulframe models aliases set fast openai/gpt-4o-mini
      soulframe -w ~/agent heartbeat -m fast
    """
    from ..chatmodels import set_alias

    path = _config_errors(lambda: set_alias(alias, model))
    click.echo(f"alias {alias} -> {model} (in {path})")


@aliases_group.command("remove")
@click.argument("alias")
def aliases_remove(alias: str) -> None:
    """Forget an alias set with `models aliases set`.

    \b
      soulframe models aliases remove fast
    """
    from ..chatmodels import set_alias

    _config_errors(lambda: set_alias(alias, None))
    click.echo(f"removed alias {alias}")


@aliases_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {alias: {model, from}}.")
@pass_state
def aliases_list(state: State, as_json: bool) -> None:
    """Every alias in effect and where it is defined (user or the workspace config).

    \b
      soulframe models aliases list
    """
    from ..chatmodels import aliases_path, user_aliases

    config_aliases = {str(k): str(v) for k, v in (state.config().get("model.aliases") or {}).items()}
    rows = {a: {"model": m, "from": str(aliases_path())} for a, m in user_aliases().items()}
    rows.update({a: {"model": m, "from": "config"} for a, m in config_aliases.items()})
    if as_json:
        echo_json(dict(sorted(rows.items())))
        return
    if not rows:
        click.echo("no aliases; add one with `soulframe models aliases set ALIAS MODEL`")
    width = max((len(a) for a in rows), default=0)
    for alias, row in sorted(rows.items()):
        click.echo(f"{alias:<{width}}  {row['model']}  ({row['from']})")


def _config_errors(action: Any) -> Any:
    try:
        return action()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
