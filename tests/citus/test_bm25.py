"""`[bm25]` on a Citus cluster (docs/search.md, "BM25"; docs/scaling.md).

The same workspace history — records written, a keyed value superseded, one retracted, one
erased, another workspace's records beside them — through the service on the cluster and on a
plain PostgreSQL database of the same binaries: the statistics triggers and the erasure's fold
run on the workers, the counts equal a recount of the workspace's records, and a `[bm25]`
search gives the same hits and scores as on one node, before and after compaction. Each of its
statements, and the erasure's and compaction's, is planned by Citus for one shard.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek import db
from memseek import migrate
from memseek.boot import build_runtime
from memseek.settings import Settings
from memseek.write import text_stats
from tests.citus import routes
from tests.citus_cluster import Cluster
from tests.conftest import client_for
from tests.conftest import make_tenant
from tests.conftest import migrated_engine
from tests.helpers import MINIMAL_CATALOG
from tests.helpers import ok
from tests.helpers import written_ids
from tests.integration.test_bm25 import assert_counts_exact

TEXTS = [
    "the river stone river and the cloud",
    "a cat watches the river",
    "cat cat cat cat dog",
    "stone tree stone bird",
    "the fish in the river river river",
    "bird cloud tree",
    "dog walks by the river with a cat",
]
OTHER = ["river river river river", "cat river fish", "stone"]
QUERIES = ["river cat", "stone bird cloud", "dog fish tree"]
RANKS: list[Any] = [["bm25"], ["bm25", {"k1": 0.9, "b": 0.4}]]

Searched = dict[tuple[str, str], list[tuple[str, float]]]


def note(text: str, **values: Any) -> dict[str, Any]:
    return {"collection": "plain", "entity": "e", "type": "note", "text": text, **values}


def thing(text: str) -> dict[str, Any]:
    return {"collection": "things", "entity": "e", "type": "thing", "key": "slot", "text": text}


def searched(client: Any) -> Searched:
    """Each query under each ranking: the hits' texts and scores, best first."""
    found: Searched = {}
    for query in QUERIES:
        for rank in RANKS:
            body = {"q": query, "mode": "text", "rank": rank, "include": ["text"], "k": 20}
            hits = ok(client.post("/search", json=body))["hits"]
            found[query, str(rank)] = [(hit["text"], hit["score"]) for hit in hits]
    return found


def history(url: str) -> tuple[Searched, Searched]:
    """The workspace history on the database at `url`: searches after it and after compaction."""
    settings = Settings(
        database_url=url, memseek_catalog=MINIMAL_CATALOG, run_worker=False, touch_on_read=False
    )
    with migrated_engine(settings) as engine:
        runtime = build_runtime(settings, engine=engine)
        try:
            mine = client_for(runtime, make_tenant(engine, "bm25-mine"))
            other = client_for(runtime, make_tenant(engine, "bm25-other"))
            written_ids(other, *(note(text) for text in OTHER))
            ids = written_ids(mine, *(note(text) for text in TEXTS))
            written_ids(mine, thing("stone cloud slot"))
            written_ids(mine, thing("river slot now"))  # the first stays in the corpus, superseded
            ok(mine.post(f"/records/{ids[1]}/retract", json={"reason": "wrong"}))
            assert mine.request("DELETE", f"/records/{ids[4]}", json={"reason": "erase"}).status_code == 200
            assert_counts_exact(engine, mine.tenant.id)
            before = searched(mine)
            with engine.begin() as conn:
                text_stats.compact(conn, mine.tenant.id)
            assert_counts_exact(engine, mine.tenant.id)
            return before, searched(mine)
        finally:
            runtime.close()


@pytest.fixture(scope="module")
def on_both(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The history on one node (a database of the coordinator's server without the extension)
    and on the cluster, every statement on the cluster explained (`routes.Recorder`)."""
    with cluster.coordinator.connect() as conn:
        conn.execute('DROP DATABASE IF EXISTS "memseek_bm25_single" WITH (FORCE)')
        conn.execute('CREATE DATABASE "memseek_bm25_single"')
    single = history(cluster.url("memseek_bm25_single"))
    report = tmp_path_factory.mktemp("bm25-on-citus") / "routes.jsonl"
    recorder = routes.Recorder(str(report))
    sa.event.listen(Engine, "before_cursor_execute", recorder)
    try:
        distributed = history(cluster.create_database("memseek_bm25"))
    finally:
        sa.event.remove(Engine, "before_cursor_execute", recorder)
    yield single, distributed, routes.read(str(report))


def same(found: Searched, expected: Searched) -> None:
    """The same hits with the same scores (to 1e-9), best first."""
    assert found.keys() == expected.keys()
    for key, hits in expected.items():
        assert dict(found[key]) == pytest.approx(dict(hits), abs=1e-9), key
        scores = [score for _, score in found[key]]
        assert scores == sorted(scores, reverse=True) and scores[0] > 0, key


def test_bm25_scores_on_the_cluster_equal_one_nodes(on_both: Any) -> None:
    (single, single_compacted), (distributed, distributed_compacted), _ = on_both
    same(distributed, single)
    same(distributed_compacted, single_compacted)
    same(single_compacted, single)


def test_bm25_statements_are_single_shard(on_both: Any) -> None:
    """The searches, and the folds of the erasure and of compaction (their deletes and inserts)."""
    _, _, sent = on_both
    searches = [r for r in sent if r.service and r.sql.startswith("WITH bm25_corpus")]
    folds = [r for r in sent if r.service and re.search(r"\b(gone|folded)\b", r.sql)]
    assert searches and len(folds) >= 4
    fanned = [route for route in searches + folds if not route.single_shard]
    assert not fanned, "\n\n".join(f"{r.error} {r.tasks} {r.sql[:600]}" for r in fanned)


def test_migration_fills_the_statistics_of_a_distributed_schema(cluster: Cluster) -> None:
    """Migration 0014 over a cluster that already holds records (down to 0013 and up again):
    the new columns and counts are computed on the shards, and `memseek migrate` distributes
    the statistics tables beside `records` with their counts."""
    url = cluster.create_database("memseek_bm25_upgrade")
    history(url)
    engine = db.create_db_engine(Settings(database_url=url))
    try:
        with engine.connect() as conn:
            workspaces = conn.execute(sa.text("SELECT id FROM workspaces")).scalars().all()
        migrate.downgrade(engine, "0013")
        assert migrate.upgrade(engine) == [
            f"distributed table {name} on workspace_id" for name in ("text_corpus", "text_lexemes")
        ]
        assert len(workspaces) == 2
        for workspace_id in workspaces:
            assert_counts_exact(engine, workspace_id)
    finally:
        engine.dispose()
