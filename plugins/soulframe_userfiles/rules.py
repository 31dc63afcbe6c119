"""The per-user context-file rules (seed 000 §3–4, §6, §7) on top of the core's
:class:`~soulframe.ContextFileStore` contract.

* seeding (:func:`seed_to_store`, :func:`seed_user_files`): idempotent, never overwriting
  content, one transaction per call; a user's BOOTSTRAP.md is seeded only until that user
  finished the ritual;
* the context-file interceptor (:func:`read_context_file`, :func:`write_context_file`): how
  a host's ``read_file``/``write_file`` tools reach the right copy; writing an empty
  BOOTSTRAP.md deletes it, checked *before* the rule that predefined agents' agent-level
  files are read-only from chat (otherwise the ritual could never end).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import attrs
from soulframe import ContextFileStore, SoulframeError
from soulframe.memorykit import (
    BOOTSTRAP,
    CONTEXT_FILES,
    agent_level_files,
    check_user,
    context_store,
    effective_user,
    is_context_file,
    is_managed,
    user_level_files,
)

if TYPE_CHECKING:
    from soulframe import AgentLike, Session

#: never copied from the agent's own files into a user's: each user starts from the template
#: (the workspace USER.md describes the owner; it must not reach other users)
PERSONAL_FILES: frozenset[str] = frozenset({"USER.md"})


class ContextFileReadOnlyError(SoulframeError):
    """A write the interceptor refuses (a predefined agent's shared file, from chat)."""


# --------------------------------------------------------------------------- seeding


def templates(agent: AgentLike) -> dict[str, str]:
    """Name -> content of the context-file templates plugins offer (3a's
    ``register_workspace_templates``)."""
    from soulframe.kit import workspace_templates

    return {t.name: t.content for t in workspace_templates(agent.pm)
            if not t.is_dir and t.name in CONTEXT_FILES}


def seed_to_store(agent: AgentLike, *, files: ContextFileStore | None = None) -> list[str]:
    """SeedToStore (managed mode): a predefined agent's six agent-level files, where
    missing or empty; open agents get none. Returns the names written.

    Each file starts from the agent's own workspace copy when it has a non-empty one (so
    switching a customised agent to managed mode keeps its SOUL.md), else the template.
    After that the database is the agent's copy: the workspace files are not read again.
    """
    store = files or context_store(agent)
    if not store.managed:
        return []
    wanted = agent_level_files(store.agent_type, managed=True)
    tpl = templates(agent)
    own = _workspace_content(agent, wanted)
    content = {n: own.get(n) or tpl.get(n, "") for n in wanted}
    return store.seed_agent_files({n: c for n, c in content.items() if c.strip()})


def _workspace_content(agent: AgentLike, names: Sequence[str]) -> dict[str, str]:
    """The non-empty workspace copies of ``names`` on disk, each judged by the file it
    reaches: they are copied to other users, so a name that is the owner's USER.md or
    MEMORY.md under another name (a symlink, a hard link), a hard link from elsewhere or
    a link into private memory is left out (the template is used instead, with a warning)."""
    from soulframe.kit import OWNERS_FILES, ContextWarning, Reached

    reached = Reached(agent.root, OWNERS_FILES, agent)
    out: dict[str, str] = {}
    for n in names:
        try:
            path, real = agent.workspace.locate(n, must_exist=True)
            problem = reached.problem(n, os.stat(real), linked=path.is_symlink(), real=real)
            if problem is not None:
                warnings.warn(f"{problem}; its template was copied to the user instead",
                              ContextWarning, stacklevel=2)
                continue
            text = path.read_bytes().decode("utf-8", errors="replace")
        except (SoulframeError, OSError):
            continue
        if text.strip():
            out[n] = text
    return out


def _agent_level_content(agent: AgentLike, store: ContextFileStore, names: Sequence[str]) -> dict[str, str]:
    """The agent's own current copy of ``names``: in managed mode the store's, else (an
    open agent keeps none there) the workspace's; in standalone mode the workspace's."""
    if store.managed:
        have = store.agent_files()
        found = {n: have[n] for n in names if have.get(n, "").strip()}
        rest = [n for n in names if n not in found]
        return {**_workspace_content(agent, rest), **found} if rest else found
    return _workspace_content(agent, names)


def seed_user_files(agent: AgentLike, user_id: str, *, files: ContextFileStore | None = None) -> list[str]:
    """SeedUserFiles: a user's copies (open: all seven; predefined: USER.md and
    BOOTSTRAP.md), where missing or empty, in one transaction. Idempotent.

    A copy starts from the agent's own version of the file when it has one (so an open
    agent's customised SOUL.md carries over to its users), else from the template; USER.md
    always starts from the template (the agent's USER.md describes its owner).
    """
    user = check_user(user_id)
    store = files or context_store(agent)
    wanted = user_level_files(store.agent_type)
    tpl = templates(agent)
    own = _agent_level_content(agent, store, [n for n in wanted if n not in PERSONAL_FILES])
    content = {n: own.get(n) or tpl.get(n, "") for n in wanted}
    return store.seed_user_files(user, {n: c for n, c in content.items() if c.strip()})


# --------------------------------------------------------------------------- the interceptor


@attrs.frozen
class WriteOutcome:
    """What :func:`write_context_file` did."""

    name: str
    action: Literal["written", "deleted", "unchanged"]
    scope: Literal["agent", "user"]
    where: str


def _routes_to_user(store: ContextFileStore | None, user_id: str | None, name: str) -> bool:
    return store is not None and bool(user_id) and name in user_level_files(store.agent_type)


def _store_or_none(agent: AgentLike, user_id: str | None) -> ContextFileStore | None:
    if user_id or is_managed(agent):
        return context_store(agent)
    return None


def read_context_file(agent: AgentLike, user_id: str | None, name: str,
                      session: Session | None = None) -> str | None:
    """The content a ``read_file`` of context file ``name`` returns for ``user_id``:
    the user's copy first, else the agent-level copy (store in managed mode, workspace
    otherwise); ``None`` when there is none.

    With ``session`` (a tool call), only what that session may see: a file its kind does
    not show (a heartbeat's USER.md) is refused, and so is a workspace file that is, under
    this name, a file the session may not see (privacy follows the file reached)."""
    if session is not None:
        from soulframe.kit import visible_in_session

        if not visible_in_session(name, session, agent.config):
            raise SoulframeError(f"{name}: not shown to a {session.kind} session")
    if not is_context_file(name):
        raise SoulframeError(f"{name}: not a context file ({', '.join(CONTEXT_FILES)})")
    user_id = effective_user(agent, user_id)
    store = _store_or_none(agent, user_id)
    if store is not None and _routes_to_user(store, user_id, name):
        assert user_id is not None
        mine = store.user_files(check_user(user_id))
        if name in mine:
            return mine[name]
        if name == BOOTSTRAP and store.bootstrap_completed(user_id):
            return None  # finished: the agent's own copy must not restart the ritual
    if user_id and name in PERSONAL_FILES:
        # the agent's USER.md describes its owner: a user with no copy yet reads what
        # seeding will give them, never the owner's file
        return templates(agent).get(name)
    if store is not None and store.managed:
        return store.agent_files().get(name)
    if user_id:
        # another user than the owner: never the owner's USER.md or MEMORY.md under this name
        return _workspace_content(agent, [name]).get(name)
    if session is not None:
        problem = _reached_problem(agent, name, session)
        if problem is not None:
            raise SoulframeError(problem)
    try:
        return str(agent.workspace.read_text(name))
    except (SoulframeError, OSError):
        return None


def _reached_problem(agent: AgentLike, name: str, session: Session) -> str | None:
    """Why the workspace's ``name`` may not be served to ``session``: it is, through a link,
    a file the session may not see (MEMORY.md under SOUL.md's name for a heartbeat)."""
    from soulframe.kit import Reached

    try:
        path, real = agent.workspace.locate(name, must_exist=True)
        st = os.stat(real)
    except (SoulframeError, OSError):
        return None  # missing or refused: the read says so
    return Reached.for_session(agent, session).problem(name, st, linked=path.is_symlink(), real=real)


def write_context_file(
    agent: AgentLike, user_id: str | None, name: str, content: str, *, from_chat: bool = True
) -> WriteOutcome:
    """Route a write of context file ``name`` to the right copy (seed 000 §3, §7).

    Order matters: an empty BOOTSTRAP.md is a deletion and is handled first, then the
    rule that a predefined agent's shared files cannot be changed from chat (except
    SOUL.md when the agent has ``self_evolve``); admin paths pass ``from_chat=False``.
    """
    if not is_context_file(name):
        raise SoulframeError(f"{name}: not a context file ({', '.join(CONTEXT_FILES)})")
    user_id = effective_user(agent, user_id)
    store = _store_or_none(agent, user_id)
    to_user = _routes_to_user(store, user_id, name)
    scope: Literal["agent", "user"] = "user" if to_user else "agent"
    managed = store is not None and store.managed

    # 1. an empty BOOTSTRAP.md ends the first-run ritual: delete it, wherever it lives
    if name == BOOTSTRAP and not content.strip():
        if to_user:
            assert store is not None and user_id is not None
            store.delete_user_file(check_user(user_id), name)
            return WriteOutcome(name, "deleted", "user", "store")
        if managed:
            assert store is not None
            store.delete_agent_file(name)
            return WriteOutcome(name, "deleted", "agent", "store")
        path = agent.workspace.resolve(name)
        try:
            path.unlink()
        except FileNotFoundError:
            return WriteOutcome(name, "unchanged", "agent", "workspace")
        return WriteOutcome(name, "deleted", "agent", "workspace")

    # 2. a predefined agent's shared files are read-only from chat
    agent_type = store.agent_type if store is not None else agent.spec.type
    if from_chat and not to_user and agent_type == "predefined":
        if not (name == "SOUL.md" and agent.spec.self_evolve):
            raise ContextFileReadOnlyError(
                f"{name} is shared by every user of the predefined agent "
                f"{agent.id!r} and cannot be changed from chat"
                + ("; only USER.md and BOOTSTRAP.md are yours" if user_id else "")
            )

    # 3. write, once the text is known not to carry an injection or a secret into every
    # later prompt (memory.write_safety)
    from soulframe.memorykit import guard, strip_controls

    content = strip_controls(content)  # a NUL would make the file look binary
    if from_chat:
        _check_chat_size(agent, name, content)
    where = f"{name} of user {user_id}" if to_user else name
    guard(agent, content, target=where, via="context_write" if from_chat else "context set")
    if to_user:
        assert store is not None and user_id is not None
        store.write_user_file(check_user(user_id), name, content)
        return WriteOutcome(name, "written", scope, "store")
    if managed:
        assert store is not None
        store.write_agent_file(name, content)
        return WriteOutcome(name, "written", "agent", "store")
    agent.workspace.write_text(name, content)
    return WriteOutcome(name, "written", "agent", "workspace")


def _check_chat_size(agent: AgentLike, name: str, content: str) -> None:
    """A write from chat holds at most twice what a prompt shows of context files: more is
    never read by the model again (truncation keeps a head and a tail) and grows every
    later file read; an administrator's ``context set`` is not limited."""
    cfg = agent.config
    shown = max(int(cfg.get("bootstrap.max_chars_per_file")), int(cfg.get("bootstrap.total_max_chars")))
    if len(content) > 2 * shown:
        raise SoulframeError(
            f"{name}: {len(content):,} characters is more than a context file written from chat "
            f"may hold ({2 * shown:,}, twice bootstrap.max_chars_per_file / total_max_chars, the "
            "most a prompt shows); keep it short, and put long notes in memory/")
