"""`text_match` weighs a query's lexemes by how many of the workspace's records hold them.

The query's lexemes are labelled A/B/C/D by document frequency in the workspace
(`compile.RARITY_CLASSES`) and ranked by `ts_rank_cd` with PostgreSQL's default weights; in a
workspace smaller than `compile.RARITY_MIN_RECORDS` every lexeme keeps label D (plain
`ts_rank_cd`).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from memseek.search.compile import RARITY_MIN_RECORDS
from memseek.search.compile import RARITY_SCALE
from memseek.search.prepare import prepare
from memseek.search.request import parse_search
from memseek.search.service import run_search
from tests.conftest import Tenant
from tests.integration.searchdata import Rec
from tests.integration.test_search_execute import given
from tests.integration.test_search_execute import ids
from tests.integration.test_search_execute import run
from tests.integration.test_search_execute import values

COMMON_HEAVY = "budget budget budget note"
"""Three occurrences of `budget`, which most records of a big workspace hold."""
RARE_ONE = "zebra note"
"""One occurrence of `zebra`, which one record holds."""
QUERY = "budget zebra"


def plain_and_labelled(db: Engine, text: str, labels: dict[str, list[str]]) -> tuple[float, float]:
    """`ts_rank_cd(tsv, q)` of `text` for QUERY: as stored, and with `labels` applied."""
    stored = "memseek_rank_positions(to_tsvector('english', :t))"
    labelled = stored
    for label in labels:
        labelled = f"setweight({labelled}, '{label}', CAST(:{label} AS text[]))"
    q = "memseek_any_lexeme('english', :q)"
    sql = sa.text(f"SELECT ts_rank_cd({stored}, {q}), ts_rank_cd({labelled}, {q})")
    with db.connect() as conn:
        row = conn.execute(sql, {"t": text, "q": QUERY, **labels}).one()
    return float(row[0]), float(row[1])


def fill(db: Engine, tenant: Tenant, count: int, text: str) -> None:
    given(db, tenant, *(Rec(text=f"{text} {i}") for i in range(count)))


def text_search(db: Engine, tenant: Tenant, **extra: Any) -> tuple[list[UUID], list[float | None]]:
    result = run(db, tenant, {"mode": "text", "q": QUERY, "rank": ["text_match"], **extra})
    return ids(result), values(result)


def test_a_rare_lexeme_outranks_a_common_one_in_a_big_workspace(db: Engine, tenant: Tenant) -> None:
    fill(db, tenant, RARITY_MIN_RECORDS, "budget")  # budget: in > 10 % of the records → D
    heavy, rare = given(db, tenant, Rec(text=COMMON_HEAVY), Rec(text=RARE_ONE))
    # zebra: 1 of 202 records → B (≤ 2 %: floor(4.04) = 4 records; A allows floor(0.404) = 0)
    found, found_values = text_search(db, tenant, k=2)
    assert found == [rare, heavy]
    _, rare_value = plain_and_labelled(db, RARE_ONE, {"B": ["zebra"]})
    _, heavy_value = plain_and_labelled(db, COMMON_HEAVY, {"B": ["zebra"]})
    assert found_values == pytest.approx([rare_value, heavy_value], rel=1e-6)


def test_a_small_workspace_ranks_with_plain_ts_rank_cd(db: Engine, tenant: Tenant) -> None:
    fill(db, tenant, RARITY_MIN_RECORDS - 3, "budget")
    heavy, rare = given(db, tenant, Rec(text=COMMON_HEAVY), Rec(text=RARE_ONE))
    found, found_values = text_search(db, tenant, k=2)
    assert found == [heavy, rare]  # three occurrences beat one: no lexeme is weighed up
    plain = [plain_and_labelled(db, text, {})[0] for text in (COMMON_HEAVY, RARE_ONE)]
    assert found_values == pytest.approx(plain, rel=1e-6)


def test_one_workspace_never_weighs_anothers_lexemes(
    db: Engine, tenant: Tenant, other_tenant: Tenant
) -> None:
    """`budget` is common in the other workspace only; here both query lexemes are equally rare
    (one record each of 202 → B), so the ranking is plain `ts_rank_cd`'s."""
    fill(db, other_tenant, RARITY_MIN_RECORDS + 50, "budget")
    fill(db, tenant, RARITY_MIN_RECORDS, "filler")
    heavy, rare = given(db, tenant, Rec(text=COMMON_HEAVY), Rec(text=RARE_ONE))
    found, found_values = text_search(db, tenant, k=2)
    assert found == [heavy, rare]
    both = {"B": ["budget", "zebra"]}
    assert found_values == pytest.approx(
        [plain_and_labelled(db, t, both)[1] for t in (COMMON_HEAVY, RARE_ONE)]
    )
    other_found, _ = text_search(db, other_tenant, k=2)
    assert len(other_found) == 2 and not set(other_found) & {heavy, rare}


def test_records_holding_only_common_lexemes_still_match(db: Engine, tenant: Tenant) -> None:
    fill(db, tenant, RARITY_MIN_RECORDS, "budget")
    (rare,) = given(db, tenant, Rec(text=RARE_ONE))
    found, found_values = text_search(db, tenant, k=3)
    assert found[0] == rare and len(found) == 3
    assert all(value is not None and value > 0 for value in found_values)


def test_a_workspace_known_to_be_large_is_not_counted(db: Engine, tenant: Tenant) -> None:
    """With `large_workspace` the labels take RARITY_SCALE records as given: of 5,000, one
    record is ≤ 0.2 % (zebra → A) and 201 are ≤ 10 % (budget → C); counted, the same workspace
    holds 202 records (zebra → B, budget → D)."""
    fill(db, tenant, RARITY_MIN_RECORDS, "budget")
    heavy, rare = given(db, tenant, Rec(text=COMMON_HEAVY), Rec(text=RARE_ONE))
    body = {"mode": "text", "q": QUERY, "rank": ["text_match"], "k": 2}
    counted, assumed = run(db, tenant, body), run(db, tenant, body, large_workspace=True)
    assert (counted.counted_records, assumed.counted_records) == (RARITY_MIN_RECORDS + 2, RARITY_SCALE)
    assert ids(counted) == ids(assumed) == [rare, heavy]
    assumed_labels = {"A": ["zebra"], "C": ["budget"]}
    expected = [plain_and_labelled(db, text, assumed_labels)[1] for text in (RARE_ONE, COMMON_HEAVY)]
    assert values(assumed) == pytest.approx(expected, rel=1e-6)
    assert values(counted) != pytest.approx(expected, rel=1e-6)


def test_a_search_that_counts_scale_records_marks_its_workspace_large(
    db: Engine, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    """The service remembers the count once it reaches RARITY_SCALE (for a while: an erasure can
    shrink a workspace): later statements of that workspace only carry the scale instead of
    counting."""
    fill(db, tenant, RARITY_SCALE - 1, "budget")
    spec = parse_search({"mode": "text", "q": QUERY, "k": 1})
    run_search(runtime, tenant.id, spec)
    assert tenant.id not in runtime.search.large_workspaces
    given(db, tenant, Rec(text=RARE_ONE))
    run_search(runtime, tenant.id, spec)
    large_workspaces = runtime.search.large_workspaces
    assert tenant.id in large_workspaces and other_tenant.id not in large_workspaces
    large, other = (str(prepare(runtime, t.id, spec).compiled[0].statement) for t in (tenant, other_tenant))
    assert "workspace_records" not in large and f"{RARITY_SCALE} AS n" in large  # carries the scale
    assert "workspace_records" in other  # counts its records
