"""Automatic links of node collections (design §1 "Graph links"): one link per value, one level
deeper than the node, live only while the node is current, and links that need processing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.cli import main
from memseek.runtime import Runtime
from memseek.write.worker import BackgroundWorker
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import fixture_catalog
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import write_files
from tests.helpers import written
from tests.helpers import written_ids

# --- automatic links ------------------------------------------------------------------------------


def test_writing_a_node_writes_one_link_per_value(bw: Client) -> None:
    (node,) = written_ids(
        bw, rec("bw_nodes", key="api", text="the api", content={"depends_on": ["db", "cache"]})
    )
    result = walk(bw, "api")
    assert result["nodes"] == ["api", "cache", "db"]
    links = {(h["subject"], h["predicate"], h["object"]): h for h in result["hits"]}
    assert set(links) == {("api", "depends_on", "db"), ("api", "depends_on", "cache")}
    node_record = fetch(bw, node)
    for hit in links.values():
        link = fetch(bw, hit["id"])
        assert link["collection"] == "bw_edges" and link["key"] is None
        assert link["derived_from"] == [node]
        assert link["depth"] == node_record["depth"] + 1
        assert link["content"]["src"] == "api" and link["content"]["rel"] == "depends_on"
        assert link["content"]["dst"] in ("db", "cache")


def test_a_derived_nodes_links_are_one_deeper(bw: Client) -> None:
    (evidence,) = written_ids(bw, rec(text="evidence"))
    (node,) = written_ids(
        bw, rec("bw_nodes", key="svc", derived_from=[evidence], content={"depends_on": ["x"]})
    )
    (hit,) = walk(bw, "svc")["hits"]
    assert (fetch(bw, node)["depth"], fetch(bw, hit["id"])["depth"]) == (1, 2)


def test_a_nodes_links_are_live_only_while_it_is_current(bw: Client) -> None:
    (v1,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    (v2,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    assert walk(bw, "api")["nodes"] == ["api", "queue"]
    assert retract(bw, v2).status_code == 200
    assert walk(bw, "api")["nodes"] == ["api", "db"]
    assert current_flags(bw, v1) == [True]


def test_a_link_written_directly_is_live_at_once(bw: Client) -> None:
    written_ids(bw, rec("bw_edges", text="a uses b", content={"src": "a", "dst": "b", "rel": "uses"}))
    result = walk(bw, "a")
    assert result["nodes"] == ["a", "b"]
    assert [(h["subject"], h["object"], h["predicate"]) for h in result["hits"]] == [("a", "b", "uses")]


def edges_of(client: Client) -> list[dict[str, Any]]:
    return [fetch(client, h["id"]) for h in recent(client, "bw_edges")]


def test_a_node_writes_one_link_per_value(bw: Client) -> None:
    """§1 graph data: "Writing a node writes one link record per value (subject = node key,
    object = value, `derived_from: [node id]`, `depth: node depth + 1`)." """
    node = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db", "cache"]}))
    links = edges_of(bw)
    assert len(links) == 2
    assert all(link["derived_from"] == [node] and link["depth"] == 1 for link in links)
    assert all(link["collection"] == "bw_edges" for link in links)
    objects = walk(bw, "api", predicates=["depends_on"])
    assert sorted(json.dumps(objects).count(name) > 0 for name in ("db", "cache")) == [True, True]


def test_a_derived_node_links_one_deeper(bw: Client) -> None:
    """§1: "`depth: node depth + 1`"."""
    source = one_id(bw, rec())
    node = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}, derived_from=[source]))
    (link,) = edges_of(bw)
    assert fetch(bw, node)["depth"] == 1
    assert link["depth"] == 2 and link["derived_from"] == [node]


def test_a_node_without_values_writes_no_link(bw: Client) -> None:
    """§1: "one link record per value" — no value, no link."""
    written(bw, rec("bw_nodes", key="a", content={"depends_on": []}), rec("bw_nodes", key="b"))
    assert recent(bw, "bw_edges") == []


def test_links_of_a_superseded_node_are_not_live(bw: Client) -> None:
    """§1: "Such a link is live only while that exact node record is current"."""
    one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    text = json.dumps(walk(bw, "api"))
    assert "queue" in text and '"db"' not in text


def test_links_of_a_retracted_node_are_not_live(bw: Client) -> None:
    """§1: "Such a link is live only while that exact node record is current"."""
    node = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    assert "db" in json.dumps(walk(bw, "api"))
    ok(retract(bw, node))
    assert '"db"' not in json.dumps(walk(bw, "api"))


def test_a_link_written_directly_is_live(bw: Client) -> None:
    """§1: "a link written directly is live as soon as it is processed"."""
    content = {"src": "api", "dst": "db", "rel": "depends_on"}
    one_id(bw, rec("bw_edges", text="api depends on db", content=content, entity="api"))
    assert "db" in json.dumps(walk(bw, "api"))


def test_a_restored_node_makes_its_links_live_again(bw: Client) -> None:
    """§1: "Such a link is live only while that exact node record is current" — retracting the
    newer node makes the older one current again, and with it its links."""
    one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    newer = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    ok(retract(bw, newer))
    text = json.dumps(walk(bw, "api"))
    assert '"db"' in text and "queue" not in text


def test_a_replayed_node_writes_no_second_set_of_links(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: a repeated `idempotency_key` "returns the original record instead of writing again"."""
    node = rec("bw_nodes", key="api", content={"depends_on": ["db", "cache"]}, idempotency_key="n")
    first = one_id(bw, node)
    assert count_records(bw_db, bw_ws) == 3
    assert one_id(bw, node) == first
    assert count_records(bw_db, bw_ws) == 3


def test_an_invalid_record_after_a_node_writes_no_automatic_link(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "any invalid record → `422` ... and nothing is written" (automatic links included)."""
    node = rec("bw_nodes", key="n1", content={"depends_on": ["a", "b"]})
    error(post_records(bw, node, rec(entity="")), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_links_of_a_draft_node_go_live_when_it_is_approved(bw: Client) -> None:
    """§1: automatic links are "live only while that exact node record is current" (spec: nodes
    count when "current, active"); an approved draft node becomes the current active value."""
    node = one_id(bw, rec("bw_nodes", key="api", status="draft", content={"depends_on": ["db"]}))
    assert walk(bw, "api")["hits"] == []
    ok(bw.post(f"/records/{node}/approve"))
    assert "db" in json.dumps(walk(bw, "api")["hits"])


def test_an_approved_draft_nodes_links_become_live(bw: Client) -> None:
    """§1 Graph data: a link "is live only while that exact node record is current"; Drafts:
    approval moves the draft "into the active lane, where it becomes the current active value"."""
    (live,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["db"]}))
    (draft,) = written_ids(bw, rec("bw_nodes", key="svc", status="draft", content={"depends_on": ["queue"]}))
    assert walk(bw, "svc")["nodes"] == ["db", "svc"]
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    result = walk(bw, "svc")
    assert result["nodes"] == ["queue", "svc"]
    (hit,) = result["hits"]
    link = fetch(bw, hit["id"])
    assert (link["derived_from"], link["status"], link["current"]) == ([draft], "active", True)
    assert current_flags(bw, live) == [False]


def test_of_two_values_of_a_node_in_one_request_only_the_later_ones_links_are_live(bw: Client) -> None:
    """§1: "The newest record written into a slot is its current value"; a node's link "is live
    only while that exact node record is current"."""
    first, second = written(
        bw,
        rec("bw_nodes", key="api", content={"depends_on": ["db"]}),
        rec("bw_nodes", key="api", content={"depends_on": ["cache"]}),
    )
    assert (first["current"], second["current"]) == (False, True)
    assert walk(bw, "api")["nodes"] == ["api", "cache"]


def test_retracting_the_only_value_of_a_node_takes_its_links_with_it(bw: Client) -> None:
    """§1: a node's link "is live only while that exact node record is current"."""
    (node,) = written_ids(bw, rec("bw_nodes", key="lone", content={"depends_on": ["x", "y"]}))
    assert walk(bw, "lone")["nodes"] == ["lone", "x", "y"]
    assert retract(bw, node).status_code == 200
    assert walk(bw, "lone")["hits"] == []


def test_a_node_without_link_values_writes_only_itself(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§1: "Writing a node writes one link record per value" — no value, no link."""
    written_ids(bw, rec("bw_nodes", key="bare", content={"other": 1}))
    written_ids(bw, rec("bw_nodes", key="empty", content={"depends_on": []}))
    assert count_records(bw_db, bw_ws) == 2


def test_a_restored_node_brings_back_its_links_but_not_one_retracted_on_its_own(bw: Client) -> None:
    """§1: a link "is live only while that exact node record is current"; "Retracting the current
    value makes the newest non-retracted earlier value current again"; "a retracted record is
    never returned by any read"."""
    (v1,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["db", "cache"]}))
    links = {h["object"]: h["id"] for h in walk(bw, "api")["hits"]}
    assert retract(bw, links["cache"]).status_code == 200
    assert walk(bw, "api")["nodes"] == ["api", "db"]
    (v2,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    assert walk(bw, "api")["nodes"] == ["api", "queue"]
    assert retract(bw, v2).status_code == 200
    assert walk(bw, "api")["nodes"] == ["api", "db"]
    assert current_flags(bw, v1, links["db"], links["cache"]) == [True, True, False]


def test_a_superseded_retracted_node_is_never_restored(bw: Client) -> None:
    """§1: retracting the current value makes "the newest non-retracted earlier value" current —
    skipping a retracted one in between, together with its links."""
    (v1,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["one"]}))
    (v2,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["two"]}))
    (v3,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["three"]}))
    assert retract(bw, v2).status_code == 200
    assert walk(bw, "svc")["nodes"] == ["svc", "three"]
    assert retract(bw, v3).status_code == 200
    assert walk(bw, "svc")["nodes"] == ["one", "svc"]
    assert current_flags(bw, v1, v2, v3) == [True, False, False]


# --- declared paths, links that need processing, keyed edges --------------------------------------


def bz_walk(client: Client, seed: str) -> list[tuple[str, str, str]]:
    hits = ok(view_query(client, "bz_walk", {"seed": seed}))["hits"]
    return [(h["subject"], h["predicate"], h["object"]) for h in hits]


@pytest.fixture(scope="module")
def bz_runtime(bw_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """The `bw` catalog plus a string-valued link field and an edges collection that embeds."""
    return runtime_for(bw_runtime, fixture_catalog(tmp_path_factory.mktemp("bz-catalog"), "bw", "bz"))


@pytest.fixture
def bz(bz_runtime: Runtime, bw_ws: Tenant) -> Client:
    return client_for(bz_runtime, bw_ws)


def test_a_string_link_field_read_by_its_fallback_path_writes_a_link_at_the_declared_paths(
    bz: Client, bz_runtime: Runtime
) -> None:
    """§1 Graph data: `field` is "a declared string or string_array field of the node"; "Writing a
    node writes one link record per value (subject = node key, object = value …)"; the graph
    block maps subject, object and predicate "onto *declared fields*" of the edges collection —
    which live at their declared paths; a field is found "via its path or a fallback path"."""
    (node,) = written_ids(bz, rec("bz_people", type="person", key="ann", content={"boss": "bob"}))
    process(bz_runtime)
    assert bz_walk(bz, "ann") == [("ann", "reports_to", "bob")]
    (hit,) = ok(view_query(bz, "bz_walk", {"seed": "ann"}))["hits"]
    link = fetch(bz, hit["id"])
    assert link["content"] == {"edge": {"from": "ann", "to": "bob", "kind": "reports_to"}}
    assert (link["collection"], link["derived_from"], link["depth"]) == ("bz_rel", [node], 1)


def test_links_that_need_processing_are_live_once_processed(bz: Client, bz_runtime: Runtime) -> None:
    """§1 Graph data: "a link written directly is live as soon as it is processed"; "only `ready`
    records are searchable" — automatic links of an edges collection that embeds included."""
    direct = rec(
        "bz_rel",
        type="link",
        text="cy reports to dee",
        content={"edge": {"from": "cy", "to": "dee", "kind": "reports_to"}},
    )
    (link,) = written(bz, direct)
    (node,) = written(bz, rec("bz_people", type="person", key="eve", content={"org": {"manager": "fay"}}))
    assert (link["processing"], node["processing"]) == ("pending", "ready")
    assert bz_walk(bz, "cy") == [] and bz_walk(bz, "eve") == []
    process(bz_runtime)
    assert bz_walk(bz, "cy") == [("cy", "reports_to", "dee")]
    assert bz_walk(bz, "eve") == [("eve", "reports_to", "fay")]


def test_wait_returns_once_the_automatic_links_are_processed_too(bz: Client, bz_runtime: Runtime) -> None:
    """Issue: "`?wait=true` with a bounded timeout"; design §1: writing a node writes its links,
    and only `ready` records are searchable. A node that needs no processing itself still waits
    for its links, so the graph read right after the wait sees them."""
    worker = BackgroundWorker(bz_runtime, idle_seconds=60).start()
    try:
        node = rec("bz_people", type="person", key="gus", content={"org": {"manager": "hal"}})
        (result,) = written(bz, node, query="?wait=true&timeout=30")
    finally:
        worker.stop()
    assert result["processing"] == "ready"
    assert bz_walk(bz, "gus") == [("gus", "reports_to", "hal")]


KEYED_EDGES = """\
collections:
  - name: nodes
    version: 1
    active: true
    types: [node]
    keyed: true
    fields: {d: {type: string_array}}
    links: [{field: d, predicate: p, edges: edges}]
  - {name: edges, version: 1, active: true, types: [link], keyed: true}
"""


def test_links_into_a_keyed_edges_collection_are_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """§1 Collections: "`keyed: true`: key required"; Graph data: a link is written with "subject =
    node key, object = value" and no key of its own, so an edges collection that requires a key
    cannot hold the links; §2: "an invalid catalog refuses to start and every error names the
    file, the definition …, the YAML path and the problem"."""
    code = main(["catalog", "check", str(write_files(tmp_path, {"collections/c.yaml": KEYED_EDGES}))])
    out = "".join(capsys.readouterr())
    assert code != 0, out
    assert "collections[0].links[0].edges" in out, out
