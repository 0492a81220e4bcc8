"""How a setting is declared: `setting(...)` on a field of a section dataclass, and reading
the declarations back as `Setting` records (path, default, limit, help).

A setting is one field of a section, e.g.

    min_score: float = setting(0.5, low=0.0, high=10.0, help="the least score ...")

Its file key is the field's name in camelCase (`retrieval.minScore`); its type is the
annotation (`float` accepts any number, a `tuple` field is a list in the file).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Final, NamedTuple

_DECLARED: Final = "lcm.setting"


@dataclass(frozen=True, slots=True)
class Limit:
    """The type a leaf must have and, for numbers, its allowed range."""

    kind: type | tuple[type, ...]
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None


class Setting(NamedTuple):
    """One declared setting: its file path, its default as the file holds it, limit and help.

    A NamedTuple and the declaration's extras a plain tuple, not dataclasses: every
    process (a hook too) builds these classes at import, and a dataclass costs ~0.6 ms.
    """

    path: str
    attribute: str
    default: Any
    limit: Limit
    help: str


def setting(
    default: Any,
    *,
    help: str,
    low: float | None = None,
    high: float | None = None,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """Declare a section field as a setting: its default, bounds or choices, and help."""
    return field(default=default, metadata={_DECLARED: (help, low, high, choices)})


def camel(name: str) -> str:
    """The file's key for a field: `max_chars_per_event` is `maxCharsPerEvent`."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


# A field's annotation (a string under `from __future__`) -> the type its leaf must have.
_KINDS: Final[dict[str, type | tuple[type, ...]]] = {
    "bool": bool,
    "int": int,
    "float": (int, float),
    "str": str,
}
_CASTS: Final[dict[str, Any]] = {"int": int, "float": float, "bool": bool, "str": str}


class Section:
    """Builds a typed section from its checked mapping (leaves already type-checked)."""

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Any:
        kwargs: dict[str, Any] = {}
        for item in fields(cls):  # type: ignore[arg-type]
            raw = values[camel(item.name)]
            kind = str(item.type)  # annotations are strings under `from __future__`
            if kind.startswith("tuple"):
                kwargs[item.name] = tuple(copy.deepcopy(raw))  # lists are the caller's own
            else:
                kwargs[item.name] = _CASTS[kind](raw)
        return cls(**kwargs)


def declared(key: str, section: type[Section]) -> list[Setting]:
    """The settings of one section, in field order; a field not declared with `setting()`,
    or whose default breaks its own limit, is a TypeError naming it."""
    found: list[Setting] = []
    for item in fields(section):  # type: ignore[arg-type]
        path = f"{key}.{camel(item.name)}" if key else camel(item.name)
        meta = item.metadata.get(_DECLARED)
        if meta is None or item.default is MISSING:
            raise TypeError(f"{section.__name__}.{item.name}: declare it with setting(...)")
        annotation = str(item.type)
        kind = list if annotation.startswith("tuple") else _KINDS.get(annotation)
        if kind is None:
            raise TypeError(f"{path}: no setting type for {annotation!r}")
        text, low, high, choices = meta
        limit = Limit(kind, low, high, choices)
        default = list(item.default) if kind is list else item.default
        problem = _default_problem(default, limit)
        if problem:
            raise TypeError(f"{path}: the default {default!r} {problem}")
        found.append(Setting(path, item.name, default, limit, text))
    return found


def _default_problem(value: Any, limit: Limit) -> str:
    """Why a declared default breaks its own limit ("" when it does not)."""
    if isinstance(value, bool) != (limit.kind is bool) or not isinstance(value, limit.kind):
        return "is not of the field's type"
    if isinstance(limit.kind, tuple) and not isinstance(value, float):
        return "of a float field must be a float"  # a clamped value keeps the default's type
    if limit.choices is not None and value not in limit.choices:
        return "is not one of its choices"
    bounded = limit.low is not None or limit.high is not None
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "has bounds, which only a number takes" if bounded else ""
    if limit.low is not None and float(value) < limit.low:
        return "is below its bound"
    if limit.high is not None and float(value) > limit.high:
        return "is above its bound"
    return ""
