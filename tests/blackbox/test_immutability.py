"""Definitions are immutable per (kind, name, version) (design §2, spec "Changing a view"): a
changed version is refused naming it, reformatting is not a change, and a new version is how a
definition changes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memseek.catalog.problems import CatalogError
from memseek.errors import StartupError
from memseek.runtime import Runtime
from tests.blackbox.catalog_support import NEW
from tests.blackbox.catalog_support import av6_catalog
from tests.blackbox.catalog_support import bv_catalog
from tests.blackbox.catalog_support import collections_file
from tests.blackbox.catalog_support import view_entry
from tests.blackbox.support import sx_catalog
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import catalog_text
from tests.helpers import cli_env
from tests.helpers import fixture_catalog
from tests.helpers import listed_views
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import write_files

# --- collections and views ------------------------------------------------------------------------


DESIGN_COLLECTION_FILE = "collections/customer_events.yaml"
DESIGN_COLLECTION = catalog_text("bw", DESIGN_COLLECTION_FILE)
"""The design's `customer_events` v2 example, as the `bw` test catalog holds it."""


def test_changing_a_loaded_version_is_refused(bw_runtime: Runtime, tmp_path: Path) -> None:
    changed = DESIGN_COLLECTION.replace(
        "types: [event, note, reflection]", "types: [event, note, reflection, call]"
    )
    with pytest.raises(StartupError) as raised:
        runtime_for(bw_runtime, fixture_catalog(tmp_path, "bw", files={DESIGN_COLLECTION_FILE: changed}))
    message = str(raised.value)
    assert "customer_events" in message and "v2" in message
    assert "new version" in message


def test_comments_order_and_active_flags_are_not_changes(bw_runtime: Runtime, tmp_path: Path) -> None:
    views = catalog_text("bw", "views/views.yaml")
    swapped = views.replace(
        "    active: true\n    parameters:\n      entity: {type: string, required: true}\n      start:",
        "    parameters:\n      entity: {type: string, required: true}\n      start:",
        1,
    )
    swapped = swapped.replace(
        "  - name: upcoming_calendar\n    version: 2\n",
        "  - name: upcoming_calendar\n    version: 2\n    active: true\n",
    )
    assert swapped != views
    files = {"views/views.yaml": "# reordered and re-commented\n" + swapped}
    runtime = runtime_for(bw_runtime, fixture_catalog(tmp_path, "bw", files=files))
    assert runtime.catalog.view("upcoming_calendar").version == 2


def test_an_invalid_catalog_refuses_to_start(bw_url: str, tmp_path: Path) -> None:
    root = write_files(tmp_path, collections_file("  - {name: c, version: 1, types: [x], keyed: maybe}\n"))
    result = memseek(
        cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(root)), "serve", "--port", "1", timeout=120
    )
    assert result.returncode != 0
    assert "collections/c.yaml: collection c v1: collections[0].keyed" in result.stderr
    assert "Traceback" not in result.stderr


def test_changing_a_field_path_of_a_loaded_version_is_refused(
    av6_new_runtime: Runtime, tmp_path: Path
) -> None:
    """Design §2: "Definitions are immutable … loading a catalog that changes an existing version's
    content is refused ("publish a new version")", and "every error names the file, the definition
    (kind, name, version), the YAML path and the problem"."""
    changed = NEW.replace("path: meta.channel", "path: meta.medium", 1)
    assert changed != NEW
    with pytest.raises(StartupError) as raised:
        runtime_for(av6_new_runtime, av6_catalog(tmp_path, changed))
    message = str(raised.value)
    assert "collections/av6.yaml" in message and "collection av6_ev v2" in message, message
    assert "new version" in message, message


@pytest.mark.parametrize(
    ("old_text", "new_text"),
    [
        pytest.param("fallback_paths: [when]", "fallback_paths: [when, time]", id="fallback-added"),
        pytest.param(
            "kind: {type: integer, path: kind, filterable: true",
            "kind: {type: number, path: kind, filterable: true",
            id="type",
        ),
        pytest.param(
            "tier: {type: string, filterable: true, sortable: true",
            "tier: {type: string, filterable: true, sortable: false",
            id="sortable-flag",
        ),
        pytest.param("importance: {display: false}", "importance: {display: true}", id="score-display"),
    ],
)
def test_every_declared_field_change_needs_a_new_version(
    av6_new_runtime: Runtime, tmp_path: Path, old_text: str, new_text: str
) -> None:
    """Design §2: "loading a catalog that changes an existing version's content is refused"."""
    assert NEW.count(old_text) == 1
    with pytest.raises(StartupError) as raised:
        runtime_for(av6_new_runtime, av6_catalog(tmp_path, NEW.replace(old_text, new_text)))
    assert "av6_ev v2" in str(raised.value) and "new version" in str(raised.value)


def test_every_changed_version_is_reported_at_once(av6_new_runtime: Runtime, tmp_path: Path) -> None:
    """Design §2: "every error names … the definition (kind, name, version) … — all errors at once,
    not just the first"."""
    changed = NEW.replace("path: meta.channel", "path: meta.medium").replace("path: value", "path: val")
    with pytest.raises(StartupError) as raised:
        runtime_for(av6_new_runtime, av6_catalog(tmp_path, changed))
    message = str(raised.value)
    assert "av6_ev v2" in message and "av6_slot v2" in message, message


def test_a_refused_catalog_publishes_none_of_its_definitions(
    av6_new_runtime: Runtime, tmp_path: Path
) -> None:
    """Design §2: a catalog changing a loaded version "is refused" — its other definitions were never
    loaded, so a later catalog may still define them differently."""
    fresh = "  - {name: av6_fresh, version: 1, active: true, types: [first]}\n"
    refused = NEW.replace("path: meta.channel", "path: meta.medium") + fresh
    with pytest.raises(StartupError):
        runtime_for(av6_new_runtime, av6_catalog(tmp_path / "refused", refused))
    loaded = runtime_for(
        av6_new_runtime, av6_catalog(tmp_path / "loaded", NEW + fresh.replace("first", "second"))
    )
    assert loaded.catalog.collection("av6_fresh", 1).types == ("second",)


def test_a_version_left_out_of_a_catalog_stays_immutable(av6_new_runtime: Runtime, tmp_path: Path) -> None:
    """Design §2: "each loaded `(kind, name, version)` is stored with its content hash; loading a
    catalog that changes an existing version's content is refused" — also after a catalog that did
    not hold it."""
    gone = "  - {name: av6_gone, version: 1, types: [first]}\n"
    runtime_for(av6_new_runtime, av6_catalog(tmp_path / "with", NEW + gone))
    runtime_for(av6_new_runtime, av6_catalog(tmp_path / "without", NEW))
    with pytest.raises(StartupError) as raised:
        runtime_for(av6_new_runtime, av6_catalog(tmp_path / "changed", NEW + gone.replace("first", "second")))
    assert "av6_gone v1" in str(raised.value) and "new version" in str(raised.value)


def test_reordering_a_loaded_versions_keys_is_not_a_change(av6_new_runtime: Runtime, tmp_path: Path) -> None:
    """Design §2: definitions are stored with their content hash; the content of v1 is the same
    whatever order its keys and fields are written in (docs/catalog.md: key order does not count)."""
    reordered = NEW.replace(
        "      channel: {type: string, path: channel, filterable: true, sortable: true, returnable: true}\n"
        "      when: {type: datetime, path: when, filterable: true, sortable: true, returnable: true}\n",
        "      when: {returnable: true, sortable: true, filterable: true, path: when, type: datetime}\n"
        "      channel: {type: string, path: channel, filterable: true, sortable: true, returnable: true}\n",
    )
    assert reordered != NEW
    loaded = runtime_for(av6_new_runtime, av6_catalog(tmp_path, "# comment\n" + reordered))
    assert loaded.catalog.collection("av6_ev", 1).fields["when"].type == "datetime"


# --- changing a view ------------------------------------------------------------------------------


VIEWS = catalog_text("bv10", "views/bv10.yaml")
"""The `bv10_` views (test catalog `bv10`, with its package `bv10_pkg`)."""


def test_changing_a_loaded_view_version_is_refused(
    sx_runtime: Runtime, bv_runtime: Runtime, tmp_path: Path
) -> None:
    """ "A view definition is immutable"; design: "loading a catalog that changes an existing version's
    content is refused ("publish a new version")"."""
    changed = VIEWS.replace(
        "query: {mode: recent, scope: {collections: [sx_notes]}, k: 3}",
        "query: {mode: recent, scope: {collections: [sx_notes]}, k: 4}",
    )
    assert changed != VIEWS
    with pytest.raises(Exception, match="new version"):  # noqa: B017, PT011
        runtime_for(sx_runtime, bv_catalog(tmp_path, changed))


def test_publishing_a_new_version_is_accepted(bv_runtime: Runtime, tmp_path: Path, tenant: Tenant) -> None:
    """ "publish a new version rather than editing the old one, and switch which version is active"."""
    added = VIEWS.replace(
        "  - name: bv10_bare\n    version: 1\n    active: true\n",
        "  - name: bv10_bare\n    version: 1\n",
    ) + (
        "  - name: bv10_bare\n    version: 2\n    active: true\n"
        "    query: {mode: recent, scope: {collections: [sx_notes]}, k: 1}\n"
    )
    root = tmp_path / "cat"
    root.mkdir()
    bv_catalog(root, added)
    client = client_for(runtime_for(bv_runtime, root), tenant)
    views = listed_views(client)
    assert views[("bv10_bare", 1)]["active"] is False and views[("bv10_bare", 2)]["active"] is True
    assert ok(view_query(client, "bv10_bare", {}))["view"]["version"] == 2


def test_reformatting_a_loaded_version_is_not_a_change(
    sx_runtime: Runtime, bv: Client, tmp_path: Path, tenant: Tenant
) -> None:
    """Design: "loading a catalog that changes an existing version's content is refused" — the same
    content written in another YAML style is not a change, and keeps its hash."""
    before = "    query: {mode: recent, scope: {collections: [sx_notes]}, k: 3}\n"
    after = (
        "    # the same query, block style\n"
        "    query:\n      mode: recent\n      k: 3\n"
        "      scope:\n        collections:\n          - sx_notes\n"
    )
    assert before in VIEWS
    client = client_for(
        runtime_for(sx_runtime, bv_catalog(tmp_path, VIEWS.replace(before, after, 1))), tenant
    )
    assert view_entry(client, "bv10_bare", 1)["hash"] == view_entry(bv, "bv10_bare", 1)["hash"]


def sx_catalog_with(tmp_path: Path, old: str, new: str) -> Path:
    """The `sx_` catalog with the first `old` of its views file replaced by `new`."""
    root = sx_catalog(tmp_path, "sx-views")
    views = root / "views" / "sx.yaml"
    text = views.read_text()
    assert old in text
    views.write_text(text.replace(old, new, 1))
    return root


def test_switching_the_active_version_keeps_each_definition(
    sx: Client, sx_runtime: Runtime, tenant: Tenant, tmp_path: Path
) -> None:
    """Spec, Changing a view: "publish a new version rather than editing the old one, and switch
    which version is active"; "hash identifies the exact definition that is loaded"."""
    root = sx_catalog_with(
        tmp_path,
        "  - name: sx_context\n    version: 1\n    active: true\n",
        "  - name: sx_context\n    version: 1\n",
    )
    views = root / "views" / "sx.yaml"
    views.write_text(
        views.read_text().replace(
            "  - name: sx_context\n    version: 2\n",
            "  - name: sx_context\n    version: 2\n    active: true\n",
        )
    )
    switched = client_for(runtime_for(sx_runtime, root), tenant)
    before, after = listed_views(sx), listed_views(switched)
    for version in (1, 2):
        assert after[("sx_context", version)]["hash"] == before[("sx_context", version)]["hash"]
    assert (after[("sx_context", 1)]["active"], after[("sx_context", 2)]["active"]) == (False, True)
    assert ok(view_query(switched, "sx_context", {"entity": "e"}))["view"]["version"] == 2


def test_editing_a_loaded_view_version_is_refused(sx_runtime: Runtime, tmp_path: Path) -> None:
    """Spec, Changing a view: "A view definition is immutable. When a change alters the contract
    callers depend on, publish a new version rather than editing the old one"."""
    root = sx_catalog_with(tmp_path, "      k: 20\n      render: true\n", "      k: 21\n      render: true\n")
    with pytest.raises(CatalogError) as raised:
        runtime_for(sx_runtime, root)
    message = str(raised.value)
    assert "sx_context v1" in message and "new version" in message, message
