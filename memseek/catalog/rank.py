"""Rank expressions: a closed set of frozen nodes parsed from `[operator, argument, ...]` trees.

The grammar is part of the definitions' language (a catalog's `rank_default.yaml` and its search
views hold formulas), so it lives with the catalog; searches read it from here.

Every node class is registered by its operator name in `OPERATORS`; `from_args` places the
positional arguments onto typed fields and records every problem with its JSON path. The
16-node and 5-level limits are counted in the same walk. Nodes are frozen and hashable, so a
parsed tree can be a cache key; `to_tree` turns it back into the list form for echoing and hashing.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated
from typing import Any
from typing import ClassVar
from typing import Literal
from typing import NoReturn
from typing import get_args

import yaml
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import PlainSerializer
from pydantic import PlainValidator
from pydantic import StrictInt
from pydantic import ValidationError
from pydantic import WithJsonSchema
from pydantic import model_validator
from pydantic_core import InitErrorDetails
from pydantic_core import PydanticCustomError

from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.errors import details_from_pydantic
from memseek.paths import resource

Mode = Literal["vector", "text", "hybrid", "recent", "structured"]
RankedMode = Literal["hybrid", "vector", "text", "recent"]
"""The modes that rank with a formula; structured mode orders by `order_by` instead."""
AgeField = Literal["created_at", "occurred_at", "last_accessed"]

MAX_NODES = 16
MAX_LEVELS = 5
SCORE_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"
SHIPPED_RANK_DEFAULT = resource("conf") / "rank_default.yaml"
"""The spec's default formulas; a catalog's own `conf/rank_default.yaml` replaces them."""


ArgKind = Literal["node", "nodes", "number", "score_name", "age_field", "curve", "bm25"]
"""How one positional argument is read: a child, a list of children, a finite number, a score
name, a timestamp name, the `{midpoint, exponent}` options of a curve, or the optional
`{k1, b}` options of `bm25`."""
FieldNames = str | tuple[str, ...]


class RankNode:
    """Base of every rank-expression node: one operator, its typed arguments, its children.

    `signature` lists the positional arguments after the operator name, in order, as
    (dataclass field name(s), argument kind); `from_args`, `args_tree` and `parts` follow it.
    """

    __slots__ = ()
    op: ClassVar[str]
    kind: ClassVar[Literal["signal", "shaper"]]
    syntax: ClassVar[str]
    description: ClassVar[str]
    signature: ClassVar[tuple[tuple[FieldNames, ArgKind], ...]] = ()
    optional: ClassVar[int] = 0
    """How many of the last arguments may be left out (their fields keep their defaults)."""

    @classmethod
    def from_args(cls, args: Sequence[Any], loc: Loc, parser: _Parser) -> RankNode | None:
        """Build the node from the items after the operator name; `None` if a problem was recorded."""
        count = len(cls.signature)
        if not count - cls.optional <= len(args) <= count:
            least = f"{count - cls.optional} to " if cls.optional else ""
            parser.problem(loc, f"{cls.op} takes {least}{count} argument{'s' * (count != 1)}: {cls.syntax}")
            return None
        values: dict[str, Any] = {}
        for position, ((names, kind), arg) in enumerate(
            zip(cls.signature, args, strict=False), start=1
        ):  # optional ones may be left out
            parsed = _READERS[kind](parser, arg, loc + (position,))
            values |= dict(zip(names, parsed, strict=True)) if isinstance(names, tuple) else {names: parsed}
        return None if any(v is None for v in values.values()) else cls(**values)

    def args_tree(self) -> list[Any]:
        """The positional arguments in list form (inverse of `from_args`)."""
        return [_WRITERS[kind](_field_values(self, names)) for names, kind in self.signature]

    def parts(self) -> tuple[tuple[Loc, RankNode], ...]:
        """Each child with its position relative to this node's list."""
        found: list[tuple[Loc, RankNode]] = []
        for position, (names, kind) in enumerate(self.signature, start=1):
            value = _field_values(self, names)
            if kind == "node":
                found.append(((position,), value))
            elif kind == "nodes":
                found += [((position, i), child) for i, child in enumerate(value)]
        return tuple(found)


def _field_values(node: RankNode, names: FieldNames) -> Any:
    return tuple(getattr(node, n) for n in names) if isinstance(names, tuple) else getattr(node, names)


class Signal(RankNode):
    """A leaf: reads one number off a candidate record (missing values read as 0)."""

    __slots__ = ()
    kind = "signal"


class Shaper(RankNode):
    """An inner node: combines or reshapes its children."""

    __slots__ = ()
    kind = "shaper"


class _Parser:
    """One parse: records every problem, counts nodes and levels as it walks."""

    def __init__(self) -> None:
        self.details: list[Detail] = []
        self.nodes = 0
        self.level = 0
        self._limits_hit: set[str] = set()

    def problem(self, loc: Loc, msg: str) -> None:
        self.details.append(Detail(loc, msg))

    def node(self, tree: Any, loc: Loc) -> RankNode | None:
        """Parse one `[operator, ...]` list at `loc`."""
        if not isinstance(tree, list | tuple) or not tree:
            self.problem(loc, "expected an expression: a list whose first item is an operator name")
            return None
        head = tree[0]
        cls = OPERATORS.get(head) if isinstance(head, str) else None
        if cls is None:
            self.problem(loc + (0,), f"unknown operator {head!r}; expected one of: {', '.join(OPERATORS)}")
            return None
        self.nodes += 1
        self.level += 1
        try:
            # a limit stops the walk where it is passed: nothing below it is read, so no tree,
            # however deep or wide, costs more than the limits' worth of work (or recursion)
            if self._past_limits(loc):
                return None
            return cls.from_args(tree[1:], loc, self)
        finally:
            self.level -= 1

    def _past_limits(self, loc: Loc) -> bool:
        self._limit("nodes", self.nodes > MAX_NODES, loc, f"at most {MAX_NODES} nodes in a rank expression")
        self._limit("levels", self.level > MAX_LEVELS, loc, f"at most {MAX_LEVELS} levels of nesting")
        return self.nodes > MAX_NODES or self.level > MAX_LEVELS

    def _limit(self, name: str, exceeded: bool, loc: Loc, msg: str) -> None:
        # Reported once, at the first node past the limit; more copies would say nothing new.
        if exceeded and name not in self._limits_hit:
            self._limits_hit.add(name)
            self.problem(loc, msg)

    def nodes_list(self, value: Any, loc: Loc) -> tuple[RankNode, ...] | None:
        if not isinstance(value, list | tuple) or not value:
            self.problem(loc, "must be a non-empty list of expressions: [a, b, ...]")
            return None
        children = []
        for i, item in enumerate(value):
            children.append(self.node(item, loc + (i,)))
            if self.nodes > MAX_NODES:  # the rest of a long list is past the limit too
                return None
        return None if any(c is None for c in children) else tuple(children)  # type: ignore[arg-type]

    def number(self, value: Any, loc: Loc, positive: bool = False) -> float | None:
        """A finite number (booleans are not numbers); `positive` also requires > 0."""
        number = _finite(value)
        if number is None:
            self.problem(loc, "must be a finite number")
        elif positive and number <= 0:
            self.problem(loc, "must be greater than 0")
            return None
        return number

    def matching(self, value: Any, pattern: str, loc: Loc, msg: str) -> str | None:
        if isinstance(value, str) and re.fullmatch(pattern, value):
            return value
        self.problem(loc, msg)
        return None

    def curve(self, value: Any, loc: Loc) -> tuple[float | None, float | None]:
        """The `{midpoint, exponent}` options: both required and positive, nothing else."""
        return self._options(value, loc, CURVE_OPTIONS, "{midpoint: m, exponent: e}", self._option)

    def bm25_options(self, value: Any, loc: Loc) -> tuple[float | None, float | None]:
        """The `{k1, b}` options of `bm25`: each optional (`BM25_DEFAULTS`), k1 ≥ 0, 0 ≤ b ≤ 1."""
        return self._options(value, loc, tuple(BM25_DEFAULTS), "{k1: 1.2, b: 0.75}", self._bounded)

    def _options(
        self, value: Any, loc: Loc, names: tuple[str, ...], example: str, read: OptionReader
    ) -> tuple[float | None, float | None]:
        """An object of the two options `names`, each read by `read`; any other key is a problem
        of its own, and every option is still read, so that one pass reports them all."""
        if not isinstance(value, dict):
            self.problem(loc, f"options must be an object {example}")
            return None, None
        unknown = sorted(str(key) for key in value.keys() - set(names))
        for key in unknown:
            self.problem(loc + (key,), f"unknown option; expected {' and '.join(names)}")
        first, second = (read(value, key, loc) for key in names)
        return (None, None) if unknown else (first, second)

    def _bounded(self, options: dict[Any, Any], key: str, loc: Loc) -> float | None:
        if key not in options:
            return BM25_DEFAULTS[key]
        low, high = BM25_BOUNDS[key]
        number = self.number(options[key], loc + (key,))
        if number is not None and not low <= number <= high:
            self.problem(
                loc + (key,),
                f"must be at least {low:g}" + (f" and at most {high:g}" if high < math.inf else ""),
            )
            return None
        return number

    def _option(self, options: dict[Any, Any], key: str, loc: Loc) -> float | None:
        if key not in options:
            self.problem(loc, f"{key} is required")
            return None
        return self.number(options[key], loc + (key,), positive=True)


OptionReader = Callable[[dict[Any, Any], str, Loc], float | None]
"""How one option of an options object is read: (the object, the option's name, its loc)."""


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


CURVE_OPTIONS = ("midpoint", "exponent")
BM25_DEFAULTS = {"k1": 1.2, "b": 0.75}
"""`bm25`'s options and their defaults (Lucene's, and the bench's BM25 baseline's)."""
BM25_BOUNDS = {"k1": (0.0, math.inf), "b": (0.0, 1.0)}
"""Each option's allowed range: term-frequency saturation k1 ≥ 0 (0 counts presence only), length
normalisation b from 0 (none) to 1 (full)."""
AGE_FIELDS: tuple[str, ...] = get_args(AgeField)

_READERS: dict[ArgKind, Callable[[_Parser, Any, Loc], Any]] = {
    "node": _Parser.node,
    "nodes": _Parser.nodes_list,
    "number": _Parser.number,
    "score_name": lambda p, v, loc: p.matching(
        v, SCORE_NAME_PATTERN, loc, "must be a score name (letters, digits and _, at most 63 characters)"
    ),
    "age_field": lambda p, v, loc: p.matching(
        v, "|".join(AGE_FIELDS), loc, f"must be one of: {', '.join(AGE_FIELDS)}"
    ),
    "curve": _Parser.curve,
    "bm25": _Parser.bm25_options,
}
_WRITERS: dict[ArgKind, Callable[[Any], Any]] = {
    "node": lambda child: to_tree(child),
    "nodes": lambda children: [to_tree(child) for child in children],
    "number": lambda number: number,
    "score_name": lambda name: name,
    "age_field": lambda name: name,
    "curve": lambda options: dict(zip(CURVE_OPTIONS, options, strict=True)),
    "bm25": lambda options: dict(zip(BM25_DEFAULTS, options, strict=True)),
}


@dataclass(frozen=True, slots=True)
class Similarity(Signal):
    """`1 - cosine_distance(query, record)`; vector and hybrid searches only."""

    op = "similarity"
    syntax = "[similarity]"
    description = "1 - cosine distance between the query and the record embedding (vector, hybrid)."


@dataclass(frozen=True, slots=True)
class TextMatch(Signal):
    """PostgreSQL `ts_rank_cd` over English full-text search; text and hybrid searches only."""

    op = "text_match"
    syntax = "[text_match]"
    description = "ts_rank_cd keyword-match strength of the record for the query (text, hybrid)."


@dataclass(frozen=True, slots=True)
class Bm25(Signal):
    """Okapi BM25 of the record's lexemes for the query's, with the workspace's own statistics."""

    k1: float = BM25_DEFAULTS["k1"]
    b: float = BM25_DEFAULTS["b"]
    op = "bm25"
    syntax = "[bm25, {k1: 1.2, b: 0.75}]"
    description = (
        "Okapi BM25 of the record for the query's lexemes, IDF and average length from the "
        "workspace's records; options optional (text, hybrid; 0 in other modes)."
    )
    signature = ((("k1", "b"), "bm25"),)
    optional = 1

    def args_tree(self) -> list[Any]:
        # The defaults are written as `[bm25]`, so both spellings echo and hash alike.
        return [] if (self.k1, self.b) == tuple(BM25_DEFAULTS.values()) else super(Bm25, self).args_tree()


@dataclass(frozen=True, slots=True)
class Score(Signal):
    """The number stored in the record's `scores[name]`."""

    name: str
    op = "score"
    syntax = "[score, name]"
    description = "The record's stored score of that name (an enrichment or client score)."
    signature = (("name", "score_name"),)


@dataclass(frozen=True, slots=True)
class AgeHours(Signal):
    """Hours since one of the record's timestamps; a future timestamp counts as 0."""

    field: AgeField
    op = "age_hours"
    syntax = "[age_hours, created_at | occurred_at | last_accessed]"
    description = "Hours since created_at, occurred_at or last_accessed (0 for a future timestamp)."
    signature = (("field", "age_field"),)


@dataclass(frozen=True, slots=True)
class Const(Signal):
    """A fixed number."""

    value: float
    op = "const"
    syntax = "[const, n]"
    description = "A fixed number."
    signature = (("value", "number"),)


@dataclass(frozen=True, slots=True)
class _Combine(Shaper):
    """Shared shape of `sum` and `max`: one non-empty list of children."""

    children: tuple[RankNode, ...]
    signature = (("children", "nodes"),)


@dataclass(frozen=True, slots=True)
class Sum(_Combine):
    """Adds its children."""

    op = "sum"
    syntax = "[sum, [a, b, ...]]"
    description = "Adds the children; how several signals are combined."


@dataclass(frozen=True, slots=True)
class Max(_Combine):
    """The largest of its children."""

    op = "max"
    syntax = "[max, [a, b, ...]]"
    description = "The largest child: whichever of these is stronger."


@dataclass(frozen=True, slots=True)
class Product(Shaper):
    """Multiplies its child by a fixed factor (negative makes a penalty)."""

    factor: float
    child: RankNode
    op = "product"
    syntax = "[product, factor, a]"
    description = "Multiplies the child by a fixed number: a weight, or a penalty when negative."
    signature = (("factor", "number"), ("child", "node"))


@dataclass(frozen=True, slots=True)
class Normalize(Shaper):
    """Min-max rescaling of the child across the current candidates (all ties become 0)."""

    child: RankNode
    op = "normalize"
    syntax = "[normalize, a]"
    description = "(x - min) / (max - min) across the current candidates, 0-1; all ties become 0."
    signature = (("child", "node"),)


@dataclass(frozen=True, slots=True)
class _Curve(Shaper):
    """Shared shape of `saturate` and `decay`: a child (clamped at 0) and positive options."""

    child: RankNode
    midpoint: float
    exponent: float
    signature = (("child", "node"), (CURVE_OPTIONS, "curve"))


@dataclass(frozen=True, slots=True)
class Saturate(_Curve):
    """`x^e / (x^e + m^e)`: 0 up to 1, 0.5 at the midpoint — diminishing returns."""

    op = "saturate"
    syntax = "[saturate, a, {midpoint: m, exponent: e}]"
    description = "x^e / (x^e + m^e) with x clamped at 0: rises 0 to 1, 0.5 at x = midpoint."


@dataclass(frozen=True, slots=True)
class Decay(_Curve):
    """`1 / (1 + x^e / m^e)`: 1 down to 0, 0.5 at the midpoint — fades as x grows."""

    op = "decay"
    syntax = "[decay, a, {midpoint: m, exponent: e}]"
    description = "1 / (1 + x^e / m^e) with x clamped at 0: falls 1 to 0, 0.5 at x = midpoint."


OPERATORS: dict[str, type[RankNode]] = {
    cls.op: cls
    for cls in (
        Similarity,
        TextMatch,
        Bm25,
        Score,
        AgeHours,
        Const,
        Sum,
        Max,
        Product,
        Normalize,
        Saturate,
        Decay,
    )
}
"""Operator name → node class: the closed grammar (also what `GET /rank/schema` lists)."""

QUERY_SIGNALS: dict[type[RankNode], frozenset[str]] = {
    Similarity: frozenset({"vector", "hybrid"}),
    TextMatch: frozenset({"text", "hybrid"}),
    Bm25: frozenset({"text", "hybrid"}),
}
"""Signals computed from the query text, and the modes that compute them (a boost, applied after
sources merge, may read none of them)."""
ZERO_ELSEWHERE: frozenset[type[RankNode]] = frozenset({Bm25})
"""Query signals accepted in every scored mode: outside the modes that compute them they read 0,
like any missing signal. The spec's own signals are refused there instead, as its table says."""


def parse_rank(tree: Any, loc: Loc = ("rank",)) -> RankNode:
    """Parse a rank tree; raise `RequestInvalid` listing every problem with its path."""
    parser = _Parser()
    node = parser.node(tree, loc)
    if node is None or parser.details:
        raise RequestInvalid("the rank expression is invalid", parser.details)
    return node


def to_tree(node: RankNode) -> list[Any]:
    """The list form of a parsed node: `parse_rank(to_tree(n)) == n`."""
    return [node.op, *node.args_tree()]


def iter_nodes(node: RankNode, loc: Loc = ()) -> Iterator[tuple[Loc, RankNode]]:
    """Every node of the tree, depth first, with its path in the list form."""
    yield loc, node
    for suffix, child in node.parts():
        yield from iter_nodes(child, loc + suffix)


def signals(node: RankNode) -> frozenset[type[RankNode]]:
    """The signal classes the tree reads."""
    return frozenset(type(n) for _, n in iter_nodes(node) if isinstance(n, Signal))


def age_fields(node: RankNode) -> frozenset[str]:
    """The timestamp fields the tree ages (`age_hours`)."""
    return frozenset(n.field for _, n in iter_nodes(node) if isinstance(n, AgeHours))


def score_names(node: RankNode) -> frozenset[str]:
    """The stored score names the tree reads (checked against the catalog at load)."""
    return frozenset(n.name for _, n in iter_nodes(node) if isinstance(n, Score))


def check_rank_for_mode(node: RankNode, mode: Mode, loc: Loc = ("rank",)) -> list[Detail]:
    """Problems using this formula in `mode`: query signals the mode does not compute."""
    if mode == "structured":
        return [Detail(loc, "structured mode takes no rank; its order_by is authoritative")]
    return [
        Detail(at, f"{n.op} is only available in {' or '.join(sorted(QUERY_SIGNALS[type(n)]))} mode")
        for at, n in iter_nodes(node, loc)
        if type(n) in QUERY_SIGNALS and mode not in QUERY_SIGNALS[type(n)] and type(n) not in ZERO_ELSEWHERE
    ]


def raise_details(title: str, details: Sequence[Detail]) -> NoReturn:
    """Raise `details` as a pydantic `ValidationError` so they keep their paths inside a model."""
    raise ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(
                type=PydanticCustomError("invalid", "{msg}", {"msg": d.msg}), loc=d.loc, input=None
            )
            for d in details
        ],
    )


def _validate_tree(value: Any) -> RankNode:
    if isinstance(value, RankNode):
        return value
    try:
        return parse_rank(value, loc=())
    except RequestInvalid as exc:
        raise_details("rank", exc.details)


RankTree = Annotated[
    RankNode,
    PlainValidator(_validate_tree),
    PlainSerializer(to_tree, return_type=list),
    WithJsonSchema(
        {
            "type": "array",
            "description": "A rank expression: [operator, argument, ...]; see GET /rank/schema.",
            "minItems": 1,
        }
    ),
]
"""A rank tree field inside a pydantic model: parsed to nodes, serialised back to lists."""


def canonical_json(value: Any) -> str:
    """The one JSON form that is hashed: sorted keys, no whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


class RankDefault(BaseModel):
    """The deployment's default formula per scored mode (`conf/rank_default.yaml`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    candidates: StrictInt = Field(ge=1, le=1000, description="Default candidates proposed per search.")
    variants: dict[RankedMode, RankTree] = Field(
        description="One formula per scored mode: hybrid, vector, text and recent are all required."
    )

    @model_validator(mode="after")
    def _complete_and_valid(self) -> RankDefault:
        details = [
            Detail(("variants", mode), "Field required")
            for mode in get_args(RankedMode)
            if mode not in self.variants
        ]
        for mode, node in self.variants.items():
            details += check_rank_for_mode(node, mode, ("variants", mode))
        if details:
            raise_details("RankDefault", details)
        return self

    def to_json(self) -> dict[str, Any]:
        """The YAML/JSON form with trees as lists."""
        return self.model_dump(mode="json")


def rank_hash(value: RankDefault | RankNode) -> str:
    """`sha256:` + hex digest of the canonical JSON form of a default or of one tree."""
    data = value.to_json() if isinstance(value, RankDefault) else to_tree(value)
    return "sha256:" + hashlib.sha256(canonical_json(data).encode()).hexdigest()


def load_rank_default(path: Path) -> RankDefault:
    """Load and validate a rank default file; `RequestInvalid` lists every problem by YAML path."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RequestInvalid(f"{path}: not valid YAML", [Detail((), str(exc))]) from exc
    try:
        return RankDefault.model_validate(data)
    except ValidationError as exc:
        raise RequestInvalid(f"{path}: invalid rank default", details_from_pydantic(exc.errors())) from exc
