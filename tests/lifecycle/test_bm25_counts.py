"""The BM25 statistics (sql/0014_bm25.sql) through the service's own write and erase paths:
supersession of a keyed fact, retraction, forgetting an entity and the retention sweep each
leave the workspace's counts equal to a recount of its records, and none of another
workspace's; an erased record's words leave no row behind."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta

from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.conftest import Client
from tests.helpers import ok
from tests.helpers import written_ids
from tests.integration.test_bm25 import assert_counts_exact
from tests.lifecycle.support import delete
from tests.lifecycle.support import event
from tests.lifecycle.support import fact
from tests.lifecycle.support import holding
from tests.lifecycle.support import note
from tests.lifecycle.support import processed


def ago(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).isoformat()


def test_counts_stay_exact_through_every_lifecycle_step(
    lc: Client, lc_other: Client, lc_runtime: Runtime, db: Engine
) -> None:
    written_ids(lc_other, note("ann", "ann walks the xylophonic dog"))
    written_ids(lc, fact("ann", "city", "ann lives in Faro"), note("ann", "ann walks the dog dog dog"))
    written_ids(lc, fact("ann", "city", "ann lives in Lisbon now"))  # supersedes Faro
    retracted = written_ids(lc, note("bob", "bob retracts this sentence"))[0]
    ok(lc.post(f"/records/{retracted}/retract", json={"reason": "wrong"}))
    written_ids(lc, note("cyd", "cyd says xylophonic words"), note("cyd", "cyd again"))
    written_ids(lc, event("lc_expiring", "dan", "dan expired zanzibarish event", occurred_at=ago(40)))
    processed(lc_runtime)
    for tenant in (lc.tenant, lc_other.tenant):
        assert_counts_exact(db, tenant.id)

    ok(delete(lc, "/entities/cyd", {"reason": "erasure request"}))
    processed(lc_runtime)  # retention erases dan's event
    assert_counts_exact(db, lc.tenant.id)
    assert_counts_exact(db, lc_other.tenant.id)
    assert holding(db, ["zanzibarish"]) == {}
    # Another workspace still holds "xylophon", so its row there stays; this workspace's went.
    assert holding(db, ["xylophon"]) == {"records": 1, "record_postings": 1, "text_lexemes": 1}
