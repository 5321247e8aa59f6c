"""Workspaces and their API keys. Keys are shown once and stored only as a SHA-256 digest."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek.errors import Conflict
from memseek.errors import NotFound
from memseek.errors import Unauthorized
from memseek.schema import api_keys
from memseek.schema import workspaces

KEY_PREFIX = "msk_"
PREFIX_CHARS = 12
"""How much of a key is stored in clear, to name it in `memseek key revoke`."""


def digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def new_key() -> str:
    """A fresh key: 32 random bytes (256 bits of entropy), URL-safe."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def create_workspace(conn: Connection, name: str) -> tuple[UUID, str]:
    """Create workspace `name` with one key; return its id and the key."""
    if not name.strip():
        raise Conflict("workspace name must not be blank")
    exists = conn.execute(sa.select(workspaces.c.id).where(workspaces.c.name == name)).first()
    if exists:
        raise Conflict(f"workspace {name!r} already exists")
    workspace_id = uuid.uuid4()
    conn.execute(sa.insert(workspaces).values(id=workspace_id, name=name))
    return workspace_id, _insert_key(conn, workspace_id)


def workspace_id(conn: Connection, name: str) -> UUID | None:
    return conn.execute(sa.select(workspaces.c.id).where(workspaces.c.name == name)).scalar()


def create_key(conn: Connection, workspace_name: str) -> str:
    """A new key for an existing workspace."""
    found = workspace_id(conn, workspace_name)
    if found is None:
        raise NotFound(f"no workspace named {workspace_name!r}")
    return _insert_key(conn, found)


def _insert_key(conn: Connection, workspace: UUID) -> str:
    key = new_key()
    conn.execute(
        sa.insert(api_keys).values(
            workspace_id=workspace, id=uuid.uuid4(), prefix=key[:PREFIX_CHARS], digest=digest(key)
        )
    )
    return key


def revoke_key(conn: Connection, prefix: str) -> int:
    """Revoke the live key starting with `prefix` (only its first 12 characters are stored;
    a whole key always names itself). An ambiguous or unknown prefix is refused."""
    if len(prefix) < len(KEY_PREFIX) + 4:
        raise Conflict(f"give at least {len(KEY_PREFIX) + 4} characters of the key")
    stored = prefix[:PREFIX_CHARS]
    live = api_keys.c.revoked_at.is_(None)
    rows = conn.execute(
        sa.select(api_keys.c.id, api_keys.c.digest).where(api_keys.c.prefix.startswith(stored), live)
    ).all()
    exact = [r for r in rows if r.digest == digest(prefix)]  # a whole key names itself
    rows = exact or rows
    if not rows:
        raise NotFound(f"no live key starts with {prefix!r}")
    if len(rows) > 1:
        raise Conflict(f"{len(rows)} keys start with {prefix!r}; give more characters")
    conn.execute(sa.update(api_keys).where(api_keys.c.id == rows[0].id).values(revoked_at=sa.func.now()))
    return 1


_LOOKUP = sa.select(api_keys.c.workspace_id).where(
    api_keys.c.digest == sa.bindparam("digest"), api_keys.c.revoked_at.is_(None)
)


def authenticate(conn: Connection, header: str | None) -> UUID:
    """The workspace of the bearer key in an `Authorization` header, or `Unauthorized`."""
    if not header:
        raise Unauthorized("missing Authorization header; send 'Authorization: Bearer <key>'")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("Authorization must be 'Bearer <key>'")
    found: UUID | None = conn.execute(_LOOKUP, {"digest": digest(key.strip())}).scalar()
    if found is None:
        raise Unauthorized("unknown or revoked API key")
    return found
