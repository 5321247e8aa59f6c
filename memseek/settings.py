"""Deployment settings, read once from the environment by `Settings.from_env()`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from dataclasses import replace
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from memseek.errors import ConfigError
from memseek.paths import reference_catalog


def _default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memseek"


def _parse_bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}")


POSTGRESQL_SCHEMES = frozenset({"postgres", "postgresql", "postgresql+psycopg", "postgresql+psycopg2"})
"""URL schemes `DATABASE_URL` may use: PostgreSQL, through psycopg 3 whichever driver it names."""


def _parse_database_url(name: str, raw: str) -> str:
    # the URL is never echoed: it may hold a password
    try:
        scheme = make_url(raw).drivername
    except ArgumentError:
        raise ConfigError(f"{name} must be a PostgreSQL URL (postgresql://user@host/database)") from None
    if scheme not in POSTGRESQL_SCHEMES:
        raise ConfigError(f"{name} must be a PostgreSQL URL (postgresql://...), got a {scheme}:// URL")
    return raw


def _parse_int(name: str, raw: str, minimum: int = 1) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    """Every deployment setting (design §4); field names match the environment variables."""

    database_url: str | None = None
    memseek_home: Path = field(default_factory=_default_home)
    memseek_catalog: Path = field(default_factory=reference_catalog)
    memseek_package: str | None = None
    max_query_chars: int = 8192
    max_graph_depth: int = 16
    max_graph_paths: int = 500
    search_render_tokens: int = 16000
    max_response_bytes: int = 4 * 1024 * 1024
    search_max_concurrency: int = 4
    search_timeout_ms: int = 30_000
    touch_on_read: bool = True
    max_record_chars: int = 32768
    max_request_bytes: int = 64 * 1024 * 1024  # a full batch: 1,000 records of MAX_RECORD_CHARS each
    db_pool_size: int = 8
    run_worker: bool = True
    workspace_max_requests: int | None = None
    """Requests one workspace runs at once while another has requests (its others wait in its
    queue); default: an eighth of the threads. Alone, a workspace may use every thread."""
    workspace_max_queued: int | None = None
    """Requests one workspace may have waiting for a thread (one more is `429`); default: 8 per thread."""
    max_queue_wait_ms: int = 10_000
    """Milliseconds a request may wait for a thread (past it: `429`)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build settings from `environ` (default: the process environment)."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = env.get(f.name.upper())
            if raw is None or raw == "":
                continue
            values[f.name] = _convert(f.name.upper(), f.type, raw)
        return cls(**values)  # type: ignore[arg-type]

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def _convert(name: str, annotation: object, raw: str) -> object:
    kind = str(annotation)
    if kind == "bool":
        return _parse_bool(name, raw)
    if kind in ("int", "int | None"):
        return _parse_int(name, raw)
    if kind == "Path":
        return Path(raw).expanduser()
    if name == "DATABASE_URL":
        return _parse_database_url(name, raw)
    return raw
