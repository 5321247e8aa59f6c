"""Conformance audit 3 of the design's write side and HTTP API (`memseek.md` §1–§4), over HTTP.

What the earlier suites (test_design_*, test_audit_design*, test_audit_letter) did not pin:
idempotency replays inside one request and after the original changed, record actions on
pending and approved values, automatic links of drafts and of superseded nodes, every missing
parent named, character (not byte) limits, auth before anything else is read, slot isolation
between workspaces, `?wait=true` states, the MCP endpoint through the official SDK's streamable
HTTP client against `memseek serve`, and the validation of every configuration variable.

Each test quotes the design sentence it relies on.
"""

from __future__ import annotations

from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.helpers import written_ids

# --- retract, approve, reject ---------------------------------------------------------------------


def test_a_retracted_link_leaves_the_graph(bw: Client) -> None:
    """§1: "a retracted record is never returned by any read" — graph walks included."""
    (link,) = written_ids(
        bw, rec("bw_edges", text="a uses b", content={"src": "a", "dst": "b", "rel": "uses"})
    )
    assert walk(bw, "a")["nodes"] == ["a", "b"]
    assert retract(bw, link).status_code == 200
    result = walk(bw, "a")
    assert result["hits"] == [] and "b" not in result["nodes"]


# --- slots across versions, processing errors -----------------------------------------------------


def test_a_slot_spans_the_versions_of_its_collection(bw: Client) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`" — the collection, not its
    version: a value written under a pinned older version supersedes the active version's."""
    (newer_version,) = written_ids(bw, rec("customer_events", key="tier", text="gold"))
    (pinned,) = written_ids(bw, rec("customer_events", collection_version=1, key="tier", text="platinum"))
    assert current_flags(bw, newer_version, pinned) == [False, True]
    assert retract(bw, pinned).status_code == 200
    assert current_flags(bw, newer_version) == [True]
