"""Third conformance audit of the read side against the letter of `views-and-search.md`.

Each test quotes the spec sentence it relies on, with expected values taken from that sentence, on
points the earlier suites (test_spec_*, test_audit_spec, test_audit_letter, test_design_catalog)
leave open. Load-time checks run `memseek catalog check` over the `sx_` catalog plus one `s3_case`
view; call-time contracts the `sx_` views do not declare use a small catalog of `s3_` views over
the `sx_` collections; the spec's own examples are replayed on the reference catalog.
"""

from __future__ import annotations

from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.view_support import SPEC_GRAPH_CONTENT
from tests.integration.view_support import SPEC_GRAPH_PARAMETERS
from tests.integration.view_support import spec_graph_response

# --- call-time contracts: the `s3_` views ---------------------------------------------------------


def test_a_graph_view_may_narrow_predicates_and_depth(s3: Client) -> None:
    """Spec: predicates — "you can restrict the allowed set with the parameter's item_enum"; the
    input schema carries "allowed values, numeric and length limits"."""
    write(s3, link("a", "owns", "b"), link("a", "advises", "c"))
    body = ok(view_query(s3, "s3_walk", {"seed": "a", "predicates": ["owns"]}))
    assert body["nodes"] == ["a", "b"]
    invalid(view_query(s3, "s3_walk", {"seed": "a", "predicates": ["advises"]}), "parameters", "predicates")
    invalid(view_query(s3, "s3_walk", {"seed": "a", "depth": 4}), "parameters", "depth")
    props = listed_views(s3)[("s3_walk", 1)]["input_schema"]["properties"]
    assert props["predicates"]["items"] == {"type": "string", "enum": ["uses", "owns"]}
    assert (props["depth"]["minimum"], props["depth"]["maximum"]) == (1, 3)
    assert props["seed"]["description"] == "Where the walk starts."
    assert (props["seed"]["minLength"], props["seed"]["maxLength"]) == (1, 128)


# --- the spec's own examples on the reference catalog ---------------------------------------------


def test_get_views_lists_customer_context_as_the_spec_shows(client: Client, sx: Client) -> None:
    """Spec, "Discovering views with GET /views": the customer_context entry. `sx_context` v1
    declares the same contract over `sx_notes` (test_spec_views pins its entry key by key)."""
    entry = listed_views(client)[("customer_context", 1)]
    same_contract = listed_views(sx)[("sx_context", 1)]
    assert entry["hash"].startswith("sha256-") and entry["hash"] != same_contract["hash"]
    renamed = {"name": "customer_context", "hash": entry["hash"], "collections": ["customer_events"]}
    assert entry == {**same_contract, **renamed}


def test_graph_query_reproduces_the_spec_example(client: Client) -> None:
    """Spec, "Graph views": the `graph_query` request and response, field for field."""
    text = SPEC_GRAPH_CONTENT["text"]
    record = {"collection": "dependencies", "entity": "people/maya", "type": "link", "text": text}
    (edge,) = written_ids(client, {**record, "content": SPEC_GRAPH_CONTENT}, query="?wait=true")
    body = ok(view_query(client, "graph_query", SPEC_GRAPH_PARAMETERS))
    view = listed_views(client)[("graph_query", 1)]
    assert body == spec_graph_response({"name": "graph_query", "version": 1, "hash": view["hash"]}, edge)
