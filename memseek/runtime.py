"""The running service's resources as one frozen value: settings, engine, catalog, models, touches.

`memseek.boot.build_runtime` builds it (for the app factory and the CLI) and the services receive
it; this module only names what they may use, so no service imports the code that starts the
process. Every field's type comes from a layer below the services (or is a protocol here): the
services import this module, so it must import none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from uuid import UUID

from sqlalchemy.engine import Engine

from memseek.catalog.catalog import Catalog
from memseek.models.registry import ModelRegistry
from memseek.search_state import SearchState
from memseek.settings import Settings


class Touches(Protocol):
    """Touch-on-read's background writer (`memseek.write.touch.TouchQueue`)."""

    def add(self, workspace_id: UUID, ids: Sequence[UUID]) -> None:
        """Queue `ids` of a workspace to be touched; returns at once."""
        ...

    def queued(self, workspace_id: UUID) -> Mapping[UUID, datetime]:
        """The workspace's touches not yet committed, each id with the time it will be written with."""
        ...

    def settle(self, workspace_id: UUID, timeout: float = ...) -> bool:
        """Wait until no touch of this workspace is queued or being written; False on timeout."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued is written; False on timeout."""
        ...


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the services of one process use, built once at start-up. Frozen, so that a service
    cannot swap a resource under the others (tests derive variants with `dataclasses.replace`)."""

    settings: Settings
    engine: Engine
    catalog: Catalog
    models: ModelRegistry
    """The catalog's model aliases; also holds this runtime's recent query vectors."""
    touches: Touches
    """Touch-on-read of this process's searches, written in the background (`memseek.write.touch`)."""
    search: SearchState
    """What this runtime's searches share and learn (threads, plan choices, large workspaces)."""

    def close(self) -> None:
        """Release what the runtime holds, at shutdown: the queued touches are written first
        (they need the engine), cached query vectors dropped, then the pool's connections closed.
        The engine stays usable (SQLAlchemy opens a new pool on next use), so closing a runtime
        that shares its engine with others cannot break them."""
        self.touches.flush()
        self.search.close()
        self.models.close()
        self.engine.dispose()
