"""One resolved search → ONE SQLAlchemy Core statement (pure: no IO, no Flask).

The statement reads top to bottom like the spec's "How a search actually runs", and each step
is a function of the values the steps before it returned (`statement.build_statement`):

1. `query.Query` — the plan and the request values as parameters; `keywords.Keywords` — the
   query's lexemes labelled by rarity, when the statement matches keywords at all.
2. `candidates.propose` → `candidates.Proposal` — candidate generation per mode, at most
   `candidates` ids: nearest embeddings, keyword matches, newest first, or — hybrid — the three
   interleaved. Every list applies every rule while proposing (`rules.eligible`). Structured
   searches propose in their own `order_by` order (`structured.structured_top`).
3. `pool.pool` — the canonical re-check: the proposed rows are read again from `records` and
   every rule (workspace, readiness, retraction, scope, current version, typed filters) is
   applied; signals are recomputed from those rows (similarity, ts_rank_cd, stored scores,
   ages). A vector, text or recent search's one list already is that read (every rule, same
   snapshot): it carries the columns, and its pool computes from them.
4. `rank.rank_stages` — the rank expression, one compile rule per node class; each `normalize`
   is a window function over the pool, materialised in its own stage so windows never nest.
5. `pool.scored_top` → `final.Top` — the value, the pool's min and max (for the public score),
   the spec's order (value desc, occurred_at desc, seq desc, id) and `LIMIT k`.
6. `final.final_select` joins the top rows back to `records` for the values the response
   needs; one row with a NULL id (and the candidate count) means nothing survived. A statement
   whose lists may have been too short reports `short`, and the search runs the same shape with
   longer ones instead (`CompiledSearch.fallbacks`): a hybrid search's semantic and keyword
   lists at full length (`query.HYBRID_LIST_SHARE`), then every match of the scope ranked, when
   a bounded keyword list could not fill `k`.

Every value a request supplies is a bound parameter; identifiers come from `memseek.schema` and
catalog-validated names only. Catalog names the statement compares with (collections and their
versions, JSON keys) and fixed constants (`ready`, the scope's status, JSON type names) are
literals in its text (`schema.inline`): partial and expression indexes match them under generic
plans too (`reuses_plan`). The statement carries `/* memseek <route or view> */` for
pg_stat_statements.

Statements are templates: building one is far dearer than running a cached one's bookkeeping,
so each shape is built once and reused (`compile_search` keeps the last `TEMPLATE_CACHE`
shapes). The values that change from request to request — workspace, `now`, the query text and
vector, the embedding model, the scope's entities and time bounds, the touches this process has
not yet written (`Query.queued_touch`) — are required named parameters (`REQUEST_VALUES`)
supplied at execution (`CompiledSearch.params`); everything else a statement depends on is part
of its shape key.
"""

from memseek.search.compile.keywords import RARITY_MIN_RECORDS
from memseek.search.compile.keywords import RARITY_SCALE
from memseek.search.compile.query import CompilablePlan
from memseek.search.compile.query import Inputs
from memseek.search.compile.query import Lists
from memseek.search.compile.query import Output
from memseek.search.compile.query import PlanCollection
from memseek.search.compile.query import bounds_keywords
from memseek.search.compile.query import hybrid_list_size
from memseek.search.compile.query import learns_plan
from memseek.search.compile.query import reuses_plan
from memseek.search.compile.rank import RankContext
from memseek.search.compile.rank import UnsupportedNode
from memseek.search.compile.rank import compile_rank
from memseek.search.compile.rank import rank_inputs
from memseek.search.compile.rank import signal_column
from memseek.search.compile.rules import OPERATOR_RULES
from memseek.search.compile.rules import scope_rules
from memseek.search.compile.rules import typed_field
from memseek.search.compile.rules import where_rules
from memseek.search.compile.statement import REQUEST_VALUES
from memseek.search.compile.statement import TEMPLATE_CACHE
from memseek.search.compile.statement import CompiledSearch
from memseek.search.compile.statement import Explain
from memseek.search.compile.statement import build_statement
from memseek.search.compile.statement import compile_search
from memseek.search.compile.statement import request_values
from memseek.search.compile.statement import shape_key
from memseek.search.compile.statement import tag
from memseek.search.compile.structured import SORTED_LIST
from memseek.search.compile.structured import sort_key

__all__ = [
    "OPERATOR_RULES",
    "RARITY_MIN_RECORDS",
    "RARITY_SCALE",
    "REQUEST_VALUES",
    "SORTED_LIST",
    "TEMPLATE_CACHE",
    "CompilablePlan",
    "CompiledSearch",
    "Explain",
    "Inputs",
    "Lists",
    "Output",
    "PlanCollection",
    "RankContext",
    "UnsupportedNode",
    "bounds_keywords",
    "build_statement",
    "compile_rank",
    "compile_search",
    "hybrid_list_size",
    "learns_plan",
    "rank_inputs",
    "request_values",
    "reuses_plan",
    "scope_rules",
    "shape_key",
    "signal_column",
    "sort_key",
    "tag",
    "typed_field",
    "where_rules",
]
