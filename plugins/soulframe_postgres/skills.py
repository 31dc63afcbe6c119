"""Managed skills (seed 000 §11–12): published to the ``skills`` table, with visibility,
grants, version pinning and embeddings.

* ``public``   - every agent and user;
* ``private``  - only the owner (``skills.owner_id`` = the user id);
* ``internal`` - only an agent with a ``skill_agent_grants`` row or a user with a
  ``skill_user_grants`` row.

Each publish of changed content adds a version (``skill_versions``); an agent grant may pin
a version (``pinned_version``), which that agent then sees instead of the latest.
``list_accessible(agent_id, user_id)`` answers "what may this caller use" in one query.

In managed mode these skills are tier 4 (global) of the skill hierarchy
(:func:`managed_skill_source`): each accessible skill's files are written to a private cache
directory (``<state_dir>/managed-skills/<slug>/v<version>/``) so ``{baseDir}`` and
``skill_read`` work as for a skill on disk.

One module, over the usual size, because visibility, grants and pins are one set of rules
that every query here applies together.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs
from soulframe import Skill, SkillSource, SoulframeError

from .connection import Database
from .schema import build_vector_index, query_cast, vector_expr

if TYPE_CHECKING:
    from soulframe import AgentLike


VISIBILITIES = ("public", "private", "internal")
#: a published skill directory may hold at most this much text besides SKILL.md
MAX_EXTRA_BYTES = 1024 * 1024
SKILL_FILE = "SKILL.md"


class SkillGrantError(SoulframeError):
    """A publish, grant or revoke that cannot be done (unknown skill, agent or version)."""


@attrs.frozen
class ManagedSkill:
    """A skill as a caller may use it: the version it sees, and that version's files."""

    id: uuid.UUID
    slug: str
    name: str
    description: str
    visibility: str
    owner_id: str | None
    version: int
    latest_version: int
    content: str
    files: dict[str, str]
    digest: str
    pinned: bool = False


@attrs.frozen
class Published:
    """What a publish did: ``changed`` is a new version of the content; ``was_visibility``
    and ``was_owner`` are what the skill had before (None when ``created``), so a republish
    that only changed who may see it says so instead of "unchanged"."""

    slug: str
    version: int
    created: bool
    changed: bool
    was_visibility: str | None = None
    was_owner: str | None = None


def _digest(content: str, files: dict[str, str]) -> str:
    h = hashlib.sha256(content.encode("utf-8"))
    for name in sorted(files):
        h.update(b"\0" + name.encode("utf-8") + b"\0" + files[name].encode("utf-8"))
    return h.hexdigest()


def read_skill_dir(directory: Path, *, max_skill_bytes: int = 256 * 1024) -> tuple[str, dict[str, str], Any]:
    """SKILL.md, the other text files of a skill directory, and the parsed skill."""
    from soulframe.kit import SkillProblem, parse_skill_text

    directory = Path(directory).expanduser()
    skill_md = directory / SKILL_FILE
    if not skill_md.is_file():
        raise SkillGrantError(f"{directory}: no {SKILL_FILE} (a skill is a directory holding one)")
    data = skill_md.read_bytes()
    if len(data) > max_skill_bytes:
        raise SkillGrantError(f"{skill_md}: {len(data):,} bytes is over skills.max_skill_file_bytes "
                              f"({max_skill_bytes:,})")
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillGrantError(f"{skill_md}: not valid UTF-8 (byte {exc.start})") from None
    parsed = parse_skill_text(content, skill_md)
    if isinstance(parsed, SkillProblem):
        raise SkillGrantError(str(parsed))
    files: dict[str, str] = {}
    total = 0
    root = directory.resolve()
    for path in sorted(directory.rglob("*")):
        if path.is_dir() or path.name == SKILL_FILE and path.parent == directory:
            continue
        rel = path.relative_to(directory).as_posix()
        if any(part.startswith(".") or part in ("node_modules", "__pycache__")
               for part in rel.split("/")):
            continue
        real = path.resolve()
        if root not in real.parents:
            raise SkillGrantError(f"{path}: a symlink leaving the skill directory")
        raw = real.read_bytes()
        if b"\x00" in raw[:8192]:
            raise SkillGrantError(f"{path}: binary files cannot be published (text only)")
        total += len(raw)
        if total > MAX_EXTRA_BYTES:
            raise SkillGrantError(f"{directory}: more than {MAX_EXTRA_BYTES // 1024} KB of files "
                                  "besides SKILL.md")
        files[rel] = raw.decode("utf-8", errors="replace")
    return content, files, parsed


def slugify(name: str) -> str:
    """A skill's stable id, also the name of its cache directory: letters, digits, "-", "_"
    and "." inside, never "." or ".." (a skill named ".." was written beside the cache)."""
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in name.strip().lower())
    return out.strip("-.") or "skill"


def _cache_name(slug: str) -> str:
    """The directory of ``slug`` in the cache: the slug itself, or, for one not in that form
    (published before slugs were checked), its slug plus a hash, so two such skills never
    share a directory and read each other's files."""
    name = slugify(slug)
    return name if name == slug else f"{name}-{hashlib.sha256(slug.encode()).hexdigest()[:8]}"


class PostgresSkills:
    """The skills tables of one database (not bound to an agent)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ agents

    @staticmethod
    def _agent_id(conn: Any, agent: str) -> uuid.UUID:
        try:
            as_uuid = uuid.UUID(str(agent))
        except ValueError:
            as_uuid = None
        row = None
        if as_uuid is not None:
            row = conn.execute("SELECT id FROM agents WHERE id = %s", (as_uuid,)).fetchone()
        if row is None:
            row = conn.execute("SELECT id FROM agents WHERE key = %s", (str(agent),)).fetchone()
        if row is None:
            raise SkillGrantError(f"no agent {agent!r} in the database (an agent is registered "
                                  "the first time it runs in managed mode)")
        return row[0]  # type: ignore[no-any-return]

    @staticmethod
    def _skill(conn: Any, slug: str) -> tuple[uuid.UUID, int]:
        row = conn.execute("SELECT id, version FROM skills WHERE slug = %s", (slug,)).fetchone()
        if row is None:
            raise SkillGrantError(f"no managed skill {slug!r} (publish it with "
                                  "`soulframe skills publish DIR`)")
        return row[0], int(row[1])

    # ------------------------------------------------------------------ publishing

    def publish(self, directory: Path, *, visibility: str = "private", owner_id: str | None = None,
                published_by: str | None = None, slug: str | None = None,
                max_skill_bytes: int = 256 * 1024) -> Published:
        """Publish a skill directory: a new version if its content changed, else the same
        one (idempotent); visibility and owner are updated either way."""
        if visibility not in VISIBILITIES:
            raise SkillGrantError(f"--visibility {visibility!r} — expected one of "
                                  f"{', '.join(VISIBILITIES)}")
        if visibility == "private" and not owner_id:
            raise SkillGrantError("a private skill needs an owner (--owner USER)")
        if slug is not None and slugify(slug) != slug:
            raise SkillGrantError(f"--slug {slug!r}: use lower-case letters, digits, '-', '_' and "
                                  f"'.' inside (e.g. {slugify(slug)!r})")
        content, files, parsed = read_skill_dir(directory, max_skill_bytes=max_skill_bytes)
        key = slug or slugify(parsed.name)
        digest = _digest(content, files)

        def go(conn: Any) -> Published:
            row = conn.execute("SELECT id, version, visibility, owner_id FROM skills WHERE slug = %s "
                               "FOR UPDATE", (key,)).fetchone()
            if row is None:
                sid = uuid.uuid4()
                conn.execute(
                    "INSERT INTO skills (id, slug, name, description, visibility, owner_id, version) "
                    "VALUES (%s, %s, %s, %s, %s, %s, 1)",
                    (sid, key, parsed.name, parsed.description, visibility, owner_id))
                self._add_version(conn, sid, 1, content, files, digest, published_by)
                self._bump(conn)
                return Published(key, 1, created=True, changed=True)
            sid, version = row[0], int(row[1])
            latest = conn.execute("SELECT digest FROM skill_versions WHERE skill_id = %s AND "
                                  "version = %s", (sid, version)).fetchone()
            changed = latest is None or latest[0] != digest
            if changed:
                version += 1
                self._add_version(conn, sid, version, content, files, digest, published_by)
            conn.execute(
                "UPDATE skills SET name = %s, description = %s, visibility = %s, owner_id = %s, "
                "version = %s, status = 'active', updated_at = now(), "
                "embedding = CASE WHEN %s THEN NULL ELSE embedding END, "
                "dims = CASE WHEN %s THEN NULL ELSE dims END WHERE id = %s",
                (parsed.name, parsed.description, visibility, owner_id, version, changed,
                 changed, sid))
            self._bump(conn)
            return Published(key, version, created=False, changed=changed, was_visibility=row[2],
                             was_owner=row[3])

        return self.db.run(go, what=f"publishing skill {key}")

    @staticmethod
    def _add_version(conn: Any, sid: uuid.UUID, version: int, content: str,
                     files: dict[str, str], digest: str, by: str | None) -> None:
        conn.execute(
            "INSERT INTO skill_versions (skill_id, version, content, files, digest, published_by) "
            "VALUES (%s, %s, %s, %s::jsonb, %s, %s)",
            (sid, version, content, json.dumps(files), digest, by))

    @staticmethod
    def _bump(conn: Any) -> None:
        conn.execute("INSERT INTO skill_generation (id, generation) VALUES (1, 1) "
                     "ON CONFLICT (id) DO UPDATE SET generation = skill_generation.generation + 1")

    def set_visibility(self, slug: str, visibility: str, *, owner_id: str | None = None) -> None:
        if visibility not in VISIBILITIES:
            raise SkillGrantError(f"visibility {visibility!r} — expected one of {', '.join(VISIBILITIES)}")

        def go(conn: Any) -> None:
            sid, _ = self._skill(conn, slug)
            conn.execute("UPDATE skills SET visibility = %s, owner_id = coalesce(%s, owner_id), "
                         "updated_at = now() WHERE id = %s", (visibility, owner_id, sid))
            self._bump(conn)

        self.db.run(go, what=f"changing visibility of {slug}")

    def archive(self, slug: str) -> None:
        def go(conn: Any) -> None:
            sid, _ = self._skill(conn, slug)
            conn.execute("UPDATE skills SET status = 'archived', updated_at = now() WHERE id = %s",
                         (sid,))
            self._bump(conn)

        self.db.run(go, what=f"archiving {slug}")

    # ------------------------------------------------------------------ grants

    def grant_agent(self, slug: str, agent: str, *, pinned_version: int | None = None,
                    granted_by: str | None = None) -> None:
        """Grant ``agent`` (key or id) the skill; ``pinned_version`` pins the version it
        sees (granting again changes or clears the pin)."""

        def go(conn: Any) -> None:
            sid, latest = self._skill(conn, slug)
            aid = self._agent_id(conn, agent)
            if pinned_version is not None:
                ok = conn.execute("SELECT 1 FROM skill_versions WHERE skill_id = %s AND version = %s",
                                  (sid, pinned_version)).fetchone()
                if not ok:
                    raise SkillGrantError(f"--pin {pinned_version}: skill {slug!r} has versions "
                                          f"1 to {latest}")
            conn.execute(
                "INSERT INTO skill_agent_grants (skill_id, agent_id, pinned_version, granted_by) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (skill_id, agent_id) DO UPDATE SET "
                "pinned_version = EXCLUDED.pinned_version, granted_by = EXCLUDED.granted_by, "
                "granted_at = now()", (sid, aid, pinned_version, granted_by))
            self._bump(conn)

        self.db.run(go, what=f"granting {slug}")

    def grant_user(self, slug: str, user_id: str, *, granted_by: str | None = None) -> bool:
        """Grant a user the skill. Idempotent (``ON CONFLICT DO NOTHING``): returns False
        when the grant existed."""

        def go(conn: Any) -> bool:
            sid, _ = self._skill(conn, slug)
            cur = conn.execute(
                "INSERT INTO skill_user_grants (skill_id, user_id, granted_by) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING", (sid, user_id, granted_by))
            self._bump(conn)
            return bool(cur.rowcount)

        return self.db.run(go, what=f"granting {slug}")

    def revoke_agent(self, slug: str, agent: str) -> bool:
        def go(conn: Any) -> bool:
            sid, _ = self._skill(conn, slug)
            aid = self._agent_id(conn, agent)
            cur = conn.execute("DELETE FROM skill_agent_grants WHERE skill_id = %s AND agent_id = %s",
                               (sid, aid))
            self._bump(conn)
            return bool(cur.rowcount)

        return self.db.run(go, what=f"revoking {slug}")

    def revoke_user(self, slug: str, user_id: str) -> bool:
        def go(conn: Any) -> bool:
            sid, _ = self._skill(conn, slug)
            cur = conn.execute("DELETE FROM skill_user_grants WHERE skill_id = %s AND user_id = %s",
                               (sid, user_id))
            self._bump(conn)
            return bool(cur.rowcount)

        return self.db.run(go, what=f"revoking {slug}")

    # ------------------------------------------------------------------ reading

    def generation(self) -> int:
        row = self.db.run(lambda conn: conn.execute(
            "SELECT generation FROM skill_generation WHERE id = 1").fetchone(), what="skills version")
        return int(row[0]) if row else 0

    def list_accessible(self, agent_id: uuid.UUID | str | None, user_id: str | Sequence[str] | None
                        ) -> list[ManagedSkill]:
        """The active skills ``agent_id`` and ``user_id`` may use (seed 000 §12), each at the
        version the agent sees (its pin, else the latest), by slug."""
        users = [user_id] if isinstance(user_id, str) else list(user_id or [])

        def go(conn: Any) -> Any:
            aid = self._agent_id(conn, str(agent_id)) if agent_id is not None else None
            return conn.execute(
                """
                SELECT DISTINCT ON (s.slug) s.id, s.slug, s.name, s.description, s.visibility,
                       s.owner_id, coalesce(ag.pinned_version, s.version), s.version,
                       v.content, v.files, v.digest, ag.pinned_version IS NOT NULL
                FROM skills s
                LEFT JOIN skill_agent_grants ag ON ag.skill_id = s.id AND ag.agent_id = %(agent)s
                LEFT JOIN skill_user_grants ug ON ug.skill_id = s.id AND ug.user_id = ANY(%(users)s)
                JOIN skill_versions v ON v.skill_id = s.id
                     AND v.version = coalesce(ag.pinned_version, s.version)
                WHERE s.status = 'active' AND (
                      s.visibility = 'public'
                   OR (s.visibility = 'private' AND s.owner_id = ANY(%(users)s))
                   OR (s.visibility = 'internal'
                       AND (ag.skill_id IS NOT NULL OR ug.skill_id IS NOT NULL)))
                ORDER BY s.slug
                """, {"agent": aid, "users": users}).fetchall()

        return [
            ManagedSkill(id=r[0], slug=r[1], name=r[2], description=r[3], visibility=r[4],
                         owner_id=r[5], version=int(r[6]), latest_version=int(r[7]), content=r[8],
                         files=dict(r[9] or {}), digest=r[10], pinned=bool(r[11]))
            for r in self.db.run(go, what="listing accessible skills")
        ]

    def grants(self, slug: str) -> dict[str, list[dict[str, Any]]]:
        def go(conn: Any) -> dict[str, list[dict[str, Any]]]:
            sid, _ = self._skill(conn, slug)
            agents = conn.execute(
                "SELECT a.key, g.pinned_version, g.granted_by FROM skill_agent_grants g "
                "JOIN agents a ON a.id = g.agent_id WHERE g.skill_id = %s ORDER BY a.key",
                (sid,)).fetchall()
            users = conn.execute(
                "SELECT user_id, granted_by FROM skill_user_grants WHERE skill_id = %s "
                "ORDER BY user_id", (sid,)).fetchall()
            return {
                "agents": [{"agent": a, "pinned_version": p, "granted_by": b} for a, p, b in agents],
                "users": [{"user": u, "granted_by": b} for u, b in users],
            }

        return self.db.run(go, what=f"listing grants of {slug}")

    # ------------------------------------------------------------------ embeddings

    def missing_embeddings(self, model: str) -> list[tuple[uuid.UUID, str]]:
        rows = self.db.run(lambda conn: conn.execute(
            "SELECT id, name || ': ' || description FROM skills WHERE status = 'active' AND "
            "(embedding IS NULL OR embedding_model IS DISTINCT FROM %s)", (model,)).fetchall(),
            what="listing skills to embed")
        return [(r[0], r[1]) for r in rows]

    def set_embeddings(self, model: str, items: Sequence[tuple[uuid.UUID, Any]]) -> None:
        if not items:
            return
        for d in {len(v) for _, v in items}:
            build_vector_index(self.db, "skills", d, min_rows=1000)

        def go(conn: Any) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE skills SET embedding = %b, dims = %s, embedding_model = %s WHERE id = %s",
                    [(v, len(v), model, sid) for sid, v in items])

        self.db.run(go, what="writing skill embeddings")

    def backfill_embeddings(self, embedder: Any) -> int:
        """Embed every active skill lacking a vector of ``embedder``'s model (seed 000 §11
        "auto-backfill"). Returns how many were embedded."""
        model = str(embedder.model_id or embedder.name)
        todo = self.missing_embeddings(model)
        if not todo:
            return 0
        vectors = embedder.embed_documents([t for _, t in todo])
        self.set_embeddings(model, [(sid, vectors[i]) for i, (sid, _) in enumerate(todo)])
        return len(todo)

    def search_vector(self, vector: Any, agent_id: str | None, user_id: str | None,
                      k: int = 5) -> list[tuple[str, float]]:
        """``(slug, cosine)`` of the accessible skills nearest ``vector`` (pgvector)."""
        import numpy as np

        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        dims = int(q.shape[0])
        expr, _ = vector_expr(dims, "s.embedding")
        allowed = {s.slug for s in self.list_accessible(agent_id, user_id)}
        if not allowed:
            return []

        def go(conn: Any) -> Any:
            return conn.execute(
                f"SELECT s.slug, 1 - ({expr} <=> %b::{query_cast(dims)}) FROM skills s "
                f"WHERE s.dims = {dims} AND s.slug = ANY(%s) "
                f"ORDER BY {expr} <=> %b::{query_cast(dims)} LIMIT %s",
                (q, list(allowed), q, k)).fetchall()

        return [(r[0], float(r[1])) for r in self.db.run(go, what="skill vector search")]


# --------------------------------------------------------------------------- tier 4


def _write_private(path: Path, text: str) -> None:
    from soulframe.kit import atomic_write, ensure_private_dir

    ensure_private_dir(path.parent)
    if path.exists() and path.read_text(encoding="utf-8", errors="replace") == text:
        return
    atomic_write(path, text)


def materialise(skill: ManagedSkill, cache_dir: Path) -> Path:
    """Write a skill version's files under ``cache_dir`` (0700/0600); return its SKILL.md."""
    base = cache_dir / _cache_name(skill.slug) / f"v{skill.version}"
    for rel, text in skill.files.items():
        target = (base / rel)
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            continue  # never written outside the skill's directory
        _write_private(target, text)
    skill_md = base / SKILL_FILE
    _write_private(skill_md, skill.content)
    return skill_md


@runtime_checkable
class ManagedSkillsStore(Protocol):
    """What managed skills need of the agent's store (the PostgreSQL store is one)."""

    agent_id: uuid.UUID

    def skills(self) -> PostgresSkills: ...


def managed_skill_source(agent: AgentLike) -> SkillSource:
    """Tier 4 in managed mode: the skills the agent may use, from the ``skills`` table.

    Without a user, "accessible" means to the agent: public skills, internal ones granted to
    it, and those private to, or granted to, one of its ``owner_ids``. A user's sessions get
    ``load_user(user)``: public skills, those granted to the agent (at its pinned version),
    and those private to or granted to that user — never another user's. The source
    replaces the filesystem global tier rather than sitting beside it (seed 000 §12).
    """
    cache_dir = Path(str(agent.config.get("state_dir"))).expanduser() / "managed-skills"

    def postgres_store() -> ManagedSkillsStore:
        # the source is registered only when store.backend is postgres; anything else here
        # is a configuration the hook did not expect, said plainly rather than as an
        # AttributeError deep in a prompt build
        store = agent.store
        if not isinstance(store, ManagedSkillsStore):
            raise SoulframeError(
                f"managed skills need the PostgreSQL store; this agent's store is {type(store).__name__}"
            )
        return store

    def load() -> list[Skill]:
        return load_for(list(agent.spec.owner_ids))

    def load_user(user_id: str) -> list[Skill]:
        return load_for([user_id])

    def load_for(users: list[str]) -> list[Skill]:
        from soulframe.kit import SkillProblem, parse_skill_text

        store = postgres_store()
        out: list[Skill] = []
        for ms in store.skills().list_accessible(store.agent_id, users):
            path = materialise(ms, cache_dir)
            parsed = parse_skill_text(ms.content, path, tier=4, tier_name="managed", digest=ms.digest)
            if isinstance(parsed, SkillProblem):
                continue
            meta = dict(parsed.metadata) | {"managed": {
                "slug": ms.slug, "version": ms.version, "latest_version": ms.latest_version,
                "visibility": ms.visibility, "pinned": ms.pinned}}
            out.append(attrs.evolve(parsed, metadata=meta))
        return out

    def version() -> object:
        return postgres_store().skills().generation()

    return SkillSource(name="managed", tier=4, load=load, version=version, load_user=load_user,
                       replaces_filesystem_tier=True)
