"""Load a catalog directory: YAML → strict models → cross-checks → one frozen `Catalog`.

Layout (design §2):

    catalog/
      conf/rank_default.yaml      optional: replaces the shipped formula of each mode it defines
      conf/search_profiles.yaml   optional: MERGED over the shipped profiles (catalog wins per name)
      conf/models.yaml            optional: MERGED over the shipped model aliases
      conf/enrichments.yaml       optional: MERGED over the shipped enrichments
      collections/*.yaml          `collections:` lists
      views/*.yaml                `views:` lists
      writes/*.yaml               `writes:` lists (write contracts)
      packages/*.yaml             one `package:` mapping each

Every problem found is collected — YAML syntax, shapes, references, templates, searches — and
raised together as one `CatalogError`, each naming the file, the definition, the YAML path and
the problem. YAML is read with `safe_load` semantics, except that timestamps stay the strings
they were written as (the search request reads them, with their timezone rules) and a repeated
mapping key is an error rather than silently keeping the last value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic import ValidationError

from memseek.catalog.base import NAME_PATTERN
from memseek.catalog.catalog import Catalog
from memseek.catalog.checks import ViewChecks
from memseek.catalog.checks import check_catalog
from memseek.catalog.conf import ClientEnrichment
from memseek.catalog.conf import LlmLabel
from memseek.catalog.conf import LlmScore
from memseek.catalog.conf import PgProfile
from memseek.catalog.conf import TurbopufferProfile
from memseek.catalog.hashing import finish
from memseek.catalog.models import Collection
from memseek.catalog.models import Package
from memseek.catalog.models import View
from memseek.catalog.models import WriteContract
from memseek.catalog.problems import CatalogError
from memseek.catalog.problems import Found
from memseek.catalog.problems import Problem
from memseek.catalog.problems import check_pruned
from memseek.catalog.rank import RankDefault
from memseek.errors import VALUE_ERROR
from memseek.errors import Loc
from memseek.models.config import ModelDecl
from memseek.paths import resource

_UNREADABLE: Any = object()
PROFILE_BACKENDS: dict[str, type[BaseModel]] = {"pg": PgProfile, "turbopuffer": TurbopufferProfile}
ENRICHMENT_KINDS: dict[str, type[BaseModel]] = {
    "llm_score": LlmScore,
    "llm_label": LlmLabel,
    "client": ClientEnrichment,
}


class _YamlLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` without timestamp conversion and with duplicate-key detection."""

    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):  # `{{name}}` unquoted in a flow mapping is a mapping
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    'a mapping or list cannot be a key (quote placeholders: "{{name}}")',
                    key_node.start_mark,
                )
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"repeated key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True, slots=True)
class Entry:
    """One definition as read: where it is, what it is, its raw YAML and its validated model."""

    kind: str
    name: str
    version: int
    file: str
    loc: Loc
    raw: Any
    model: Any

    @property
    def label(self) -> str:
        """`kind name vN` as problems name it."""
        return f"{self.kind} {self.name} v{self.version}"

    def problem(self, loc: Loc, msg: str) -> Problem:
        """A problem at `loc`, relative to this definition."""
        return Problem(self.file, self.loc + loc, msg, self.label)


@dataclass(frozen=True, slots=True)
class _ConfFile:
    name: str
    top: str
    kind: str
    validate: Callable[[Any], Any]


def _validate_by(field: str, classes: dict[str, type[BaseModel]]) -> Callable[[Any], Any]:
    def validate(raw: Any) -> Any:
        kind = raw.get(field) if isinstance(raw, dict) else None
        cls = classes.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise ValueError(f"{field} must be one of: {', '.join(classes)}")
        return cls.model_validate(raw)

    return validate


CONF_FILES = (
    _ConfFile(
        "search_profiles.yaml", "profiles", "search_profile", _validate_by("backend", PROFILE_BACKENDS)
    ),
    _ConfFile("models.yaml", "models", "model", ModelDecl.model_validate),
    _ConfFile("enrichments.yaml", "enrichments", "enrichment", _validate_by("kind", ENRICHMENT_KINDS)),
)
RANK_DEFAULT = "rank_default.yaml"
FOLDERS: dict[str, tuple[str, str, type[BaseModel]]] = {
    "collections": ("collections", "collection", Collection),
    "views": ("views", "view", View),
    "writes": ("writes", "write", WriteContract),
}


def load_catalog(path: Path, package: str | None = None, *, view_checks: ViewChecks) -> Catalog:
    """Load and validate the catalog in `path`; `package` selects a deployment package.

    `view_checks` checks the views of kinds the catalog cannot check alone (search views run
    searches): required, so that no caller loads a catalog less checked than the service does
    by forgetting them; `{}` loads the definitions alone. Raises `CatalogError` listing every
    problem when anything is wrong.
    """
    reader = Reader(Path(path))
    entries = reader.read_all()
    problems = list(reader.problems)
    catalog, check_problems = check_catalog(entries, package, view_checks)
    problems += check_problems
    if problems:
        problems.sort(key=lambda problem: problem.file)  # stable: by file, then as found
        raise CatalogError(f"catalog {path} is invalid", problems)
    return finish(catalog, entries)


class Reader:
    """Reads every file of one catalog directory, collecting problems instead of stopping."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []

    def read_all(self) -> list[Entry]:
        """Every definition of the catalog and of the shipped conf it merges over."""
        if not self.root.is_dir():
            self.problems.append(Problem(str(self.root), (), "not a catalog directory"))
            return []
        entries = self._conf()
        for folder, (top, kind, model) in FOLDERS.items():
            for file in self._files(folder):
                entries += self._list_file(file, top, kind, model)
        for file in self._files("packages"):
            entries += self._package_file(file)
        return entries

    def _problem(self, file: Path, loc: Loc, msg: str) -> None:
        self.problems.append(Problem(self._display(file), loc, msg))

    def _display(self, file: Path) -> str:
        try:
            return str(file.relative_to(self.root))
        except ValueError:
            return f"(shipped) conf/{file.name}"

    def _files(self, folder: str) -> list[Path]:
        directory = self.root / folder
        for stray in sorted(directory.glob("*.yml")):
            self._problem(stray, (), "catalog files must end in .yaml")
        return sorted(directory.glob("*.yaml"))

    def _yaml(self, file: Path) -> Any:
        """The file's YAML data, or `_UNREADABLE` (problem recorded)."""
        try:
            return yaml.load(file.read_text(encoding="utf-8"), Loader=_YamlLoader)  # noqa: S506 (safe loader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            self._problem(file, (), f"cannot be read as YAML: {exc}")
            return _UNREADABLE

    def _read(self, file: Path, top: str, shape: type) -> Any:
        """The value under the file's one top-level key `top`, or None (problem recorded)."""
        data = self._yaml(file)
        if data is _UNREADABLE:
            return None
        if not isinstance(data, dict) or set(data) != {top}:
            self._problem(file, (), f"must hold exactly one top-level key: {top}")
            return None
        if not isinstance(data[top], shape):
            wanted = "a list" if shape is list else "a mapping"
            self._problem(file, (top,), f"must be {wanted}")
            return None
        return data[top]

    def _list_file(self, file: Path, top: str, kind: str, model: type[BaseModel]) -> list[Entry]:
        items = self._read(file, top, list) or []
        return [e for i, raw in enumerate(items) if (e := self._versioned(file, (top, i), kind, raw, model))]

    def _versioned(self, file: Path, loc: Loc, kind: str, raw: Any, model: type[BaseModel]) -> Entry | None:
        default = model.model_fields["version"].default  # packages default to 1; the others have none
        fallback = default if isinstance(default, int) else "?"
        name = raw.get("name", "?") if isinstance(raw, dict) else "?"
        version = raw.get("version", fallback) if isinstance(raw, dict) else fallback
        return self._entry(file, loc, kind, name, version, raw, model.model_validate)

    def _package_file(self, file: Path) -> list[Entry]:
        raw = self._read(file, "package", dict)
        if raw is None:
            return []
        entry = self._versioned(file, ("package",), "package", raw, Package)
        return [entry] if entry else []

    def _entry(
        self,
        file: Path,
        loc: Loc,
        kind: str,
        name: Any,
        version: Any,
        raw: Any,
        validate: Callable[[Any], Any],
    ) -> Entry | None:
        """Validate one definition; its name and version come from the model once it is valid."""
        label = f"{kind} {name} v{version}"

        def attempt(data: Any) -> tuple[Any, Found]:
            try:
                return validate(data), []
            except ValidationError as exc:
                return None, [
                    (tuple(e["loc"]), e["msg"].removeprefix(VALUE_ERROR))
                    for e in exc.errors(include_url=False)
                ]
            except ValueError as exc:
                return None, [((), str(exc))]

        model, problems = check_pruned(raw, attempt, _parameter_constraints)
        self.problems += [Problem(self._display(file), loc + at, msg, label) for at, msg in problems]
        if model is None:
            return None
        name, version = getattr(model, "name", name), getattr(model, "version", version)
        return Entry(kind, name, version, self._display(file), loc, raw, model)

    def _conf(self) -> list[Entry]:
        shipped, own = resource("conf"), self.root / "conf"
        known = {spec.name for spec in CONF_FILES} | {RANK_DEFAULT}
        for file in sorted(own.glob("*.y*ml")):
            if file.name not in known:
                expected = ", ".join(sorted(known))
                self._problem(file, (), f"unknown conf file; expected: {expected}")
        entries: list[Entry] = []
        for spec in CONF_FILES:
            merged = {e.name: e for e in self._conf_file(shipped / spec.name, spec)}
            merged |= {e.name: e for e in self._conf_file(own / spec.name, spec)}
            entries += merged.values()
        return entries + self._rank_default(shipped / RANK_DEFAULT, own / RANK_DEFAULT)

    def _conf_file(self, file: Path, spec: _ConfFile) -> list[Entry]:
        if not file.is_file():
            return []
        mapping = self._read(file, spec.top, dict) or {}
        entries = []
        for name, raw in mapping.items():
            if not isinstance(name, str) or re.fullmatch(NAME_PATTERN, name) is None:
                self._problem(file, (spec.top, str(name)), "must be a name")
                continue
            entry = self._entry(file, (spec.top, name), spec.kind, name, 1, raw, spec.validate)
            entries += [entry] if entry else []
        return entries

    def _rank_default(self, shipped: Path, own: Path) -> list[Entry]:
        """The one rank default: the catalog's own file replaces the shipped formula of every
        mode it defines (and `candidates` if given); modes it leaves out keep the shipped one."""
        data = self._yaml(shipped)
        file = shipped
        if own.is_file():
            file, mine = own, self._yaml(own)
            if mine is _UNREADABLE:
                return []
            data = _overlay(data, mine)
        entry = self._entry(file, (), "rank_default", "rank_default", 1, data, RankDefault.model_validate)
        return [entry] if entry else []


def _overlay(shipped: Any, own: Any) -> Any:
    """`own` over `shipped`, per key and per mode under `variants`; anything malformed is left
    to validation, which then reports it against the catalog's own file."""
    if not isinstance(own, dict) or not isinstance(shipped, dict):
        return own
    variants = own.get("variants")
    if isinstance(variants, dict):
        variants = {**shipped.get("variants", {}), **variants}
    return {**shipped, **own, **({"variants": variants} if variants is not None else {})}


def _parameter_constraints(locs: list[Loc]) -> bool:
    """Whether every problem is a parameter's constraint (`parameters.<name>.<key>…`): without
    them the definition is checked on (the parameters stay declared, with their types); a
    problem anywhere else stops it."""
    return all(len(loc) >= 3 and loc[0] == "parameters" for loc in locs)
