"""View and write templates: `{{placeholder}}` checks, filling, sample values and call-time
arguments.

A placeholder that is a whole string value (`"{{entity}}"`) becomes the parameter's typed value:
a `string_array` fills a list, an `integer` a number, a `datetime` its timestamp string. A
placeholder inside a longer string is string interpolation (non-strings are written as JSON).
An optional parameter that was omitted and has no default removes the value it would fill —
the key of a mapping or the item of a list — and a mapping or list left empty by that removal
goes too, so `channel: {in: "{{channels}}"}` disappears whole: the query reads as if it had not
been written.
Placeholders may appear only in values, never in mapping keys: keys are the query language.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

from memseek.catalog.catalog import Contract
from memseek.catalog.models import View
from memseek.catalog.parameters import Parameter
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import RequestInvalid

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ABSENT: Any = object()
SAMPLE_MOMENT = datetime(2001, 1, 1, tzinfo=UTC)


def placeholder_problems(template: Any, parameters: Mapping[str, Parameter], loc: Loc = ()) -> list[Detail]:
    """Malformed placeholders, placeholders in keys, and placeholders naming no declared parameter."""
    if isinstance(template, dict):
        details = [
            Detail(loc + (key,), "placeholders are not allowed in keys")
            for key in template
            if isinstance(key, str) and ("{{" in key or "}}" in key)
        ]
        for key, value in template.items():
            details += placeholder_problems(value, parameters, loc + (key,))
        return details
    if isinstance(template, list):
        return [
            detail
            for i, item in enumerate(template)
            for detail in placeholder_problems(item, parameters, loc + (i,))
        ]
    if not isinstance(template, str):
        return []
    details = [
        Detail(loc, f"{{{{{name}}}}} names no declared parameter")
        for name in PLACEHOLDER.findall(template)
        if name not in parameters
    ]
    rest = PLACEHOLDER.sub("", template)
    if "{{" in rest or "}}" in rest:
        details.append(Detail(loc, "malformed placeholder: write {{name}} with a declared parameter name"))
    return details


def fill_template(template: Any, parameter_values: Mapping[str, Any]) -> Any:
    """The template with every placeholder replaced (see the module docstring for the rules)."""
    filled = _fill(template, parameter_values)
    return type(template)() if filled is _ABSENT else filled


def _fill(template: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(template, dict):
        filled = {key: _fill(value, values) for key, value in template.items()}
        return _kept(template, {key: value for key, value in filled.items() if value is not _ABSENT})
    if isinstance(template, list):
        items = [_fill(item, values) for item in template]
        return _kept(template, [item for item in items if item is not _ABSENT])
    if isinstance(template, str):
        return _fill_string(template, values)
    return template


def _kept(template: dict[str, Any] | list[Any], filled: Any) -> Any:
    """A container emptied by removed values is removed too (one written empty stays)."""
    return _ABSENT if template and not filled else filled


def _fill_string(text: str, values: Mapping[str, Any]) -> Any:
    whole = PLACEHOLDER.fullmatch(text)
    if whole is not None:
        name = whole.group(1)
        return copy.deepcopy(values[name]) if name in values else _ABSENT
    names = PLACEHOLDER.findall(text)
    if any(name not in values for name in names):
        return _ABSENT
    return PLACEHOLDER.sub(lambda m: _as_text(values[m.group(1)]), text)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def placeholders_at(template: Any, loc: Loc) -> list[str] | None:
    """The parameters whose placeholders filled the value at `loc` of the filled template, sorted:
    those inside the template's value at `loc`, or in the string on the way there (a placeholder
    may fill a whole list); None when `loc` is not in the template at all. A problem found in the
    filled value is then reported at the parameter(s) that supplied it."""
    node = template
    for part in loc:
        if isinstance(node, str):
            break
        if not (isinstance(node, dict) and part in node) and not _is_index(node, part):
            return None
        node = node[part]
    return sorted(placeholder_names(node))


def placeholder_names(template: Any) -> set[str]:
    """Every parameter name the placeholders anywhere in `template` name."""
    if isinstance(template, dict):
        return set().union(*(placeholder_names(value) for value in template.values()))
    if isinstance(template, list):
        return set().union(*(placeholder_names(item) for item in template))
    return set(PLACEHOLDER.findall(template)) if isinstance(template, str) else set()


def _is_index(node: Any, part: str | int) -> bool:
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def validate_arguments(contract: Contract, arguments: Any) -> dict[str, Any]:
    """The caller's arguments checked against the parameters of `contract` (a view or a write
    contract), with defaults applied.

    Unknown, missing, wrongly typed and out-of-range values are all reported at once as a 422
    with `loc` `("parameters", name)`. Optional parameters omitted without a default stay absent.
    The result lists parameters in declaration order.
    """
    if not isinstance(arguments, dict):
        raise RequestInvalid("parameters must be an object", [Detail(("parameters",), "expected an object")])
    parameters = contract.parameters
    details = [
        Detail(("parameters", name), f"unknown parameter; {_expected(parameters)}")
        for name in arguments
        if name not in parameters
    ]
    values: dict[str, Any] = {}
    for name, parameter in parameters.items():
        problem = _argument(parameter, name, arguments, values)
        if problem is not None:
            details.append(Detail(("parameters", name), problem))
    if details:
        raise RequestInvalid(f"the parameters of {_noun(contract)} {contract.name!r} are invalid", details)
    return values


def _noun(contract: Contract) -> str:
    return "view" if isinstance(contract, View) else "write contract"


def _argument(
    parameter: Parameter, name: str, arguments: Mapping[str, Any], out: dict[str, Any]
) -> str | None:
    if name in arguments:
        problem = parameter.problem(arguments[name])
        if problem is None:
            out[name] = arguments[name]
        return problem
    if parameter.required:
        return "required"
    if parameter.has_default:
        out[name] = copy.deepcopy(parameter.default)
    return None


def _expected(parameters: Mapping[str, Parameter]) -> str:
    return f"expected one of: {', '.join(parameters)}" if parameters else "it takes no parameters"


def sample_sets(parameters: Mapping[str, Parameter]) -> list[dict[str, Any]]:
    """Valid values per parameter for checking a template at load time: one set, or two when
    two or more datetime parameters take samples.

    Each parameter takes its default when declared, else its first enum entry, else the simplest
    value meeting every constraint. Datetime samples are a day apart, rising in declaration order
    in the first set and falling in the second, so a template using two of them as a range
    (`after`/`before`) is a valid range in one set whichever it declares first.
    """
    datetimes = [name for name, parameter in parameters.items() if parameter.type == "datetime"]
    orders = [datetimes, datetimes[::-1]] if len(datetimes) > 1 else [datetimes]
    return [_samples(parameters, order) for order in orders]


def _samples(parameters: Mapping[str, Parameter], datetimes: list[str]) -> dict[str, Any]:
    """One sample per parameter; the datetime parameters a day apart in the order `datetimes`."""
    offsets = {name: timedelta(days=i) for i, name in enumerate(datetimes)}
    return {
        name: _sample(parameter, SAMPLE_MOMENT + offsets.get(name, timedelta()))
        for name, parameter in parameters.items()
    }


def _sample(parameter: Parameter, moment: datetime) -> Any:
    if parameter.has_default:
        return copy.deepcopy(parameter.default)
    if parameter.enum is not None:
        return copy.deepcopy(parameter.enum[0])
    if parameter.type == "string":
        text = "sample".ljust(parameter.min_length or 0, "x")
        return text if parameter.max_length is None else text[: parameter.max_length]
    if parameter.type == "string_array":
        return _sample_list(parameter)
    if parameter.type in ("number", "integer"):
        return _clamp(1, parameter.minimum, parameter.maximum)
    if parameter.type == "boolean":
        return False
    return moment.isoformat().replace("+00:00", "Z")


def _sample_list(parameter: Parameter) -> list[str]:
    count = max(1, parameter.min_items or 0)
    if parameter.max_items is not None:
        count = min(count, parameter.max_items)
    pool = list(parameter.item_enum) if parameter.item_enum else [f"sample{i + 1}" for i in range(count)]
    return [pool[i % len(pool)] for i in range(count)]


def _clamp(value: float, low: float | None, high: float | None) -> float:
    if low is not None:
        value = max(value, low)
    if high is not None:
        value = min(value, high)
    return value
