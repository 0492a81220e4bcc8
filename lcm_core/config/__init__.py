"""Configuration: the declared settings' defaults, deep merge of user overrides, type checks
and clamps.

Each setting is declared once, in `lcm_core.config.sections` (typed field, default, bounds or
choices, help); `DEFAULTS`, `LIMITS`, the typed sections of a `Config` and `json_schema`
are derived here from those declarations. Keys use the spec's camelCase names
(`assembly.softBudgetTokens`) because users write them in DSH patch files. A value of the
wrong type or out of range never raises: it falls back to the default (or the nearest
bound) and a warning says so.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.config.declare import Limit, Setting
from lcm_core.config.sections import (
    SECTIONS,
    ArchiveSettings,
    AssemblySettings,
    CaptureSettings,
    CompatibilitySettings,
    DiagnosticsSettings,
    ExtractionSettings,
    HooksSettings,
    HostSettings,
    MemorySettings,
    RetrievalSettings,
    SkillsSettings,
    TopSettings,
    ValidationSettings,
    all_settings,
)
from lcm_core.text.private import compile_patterns

__all__ = [
    "DEFAULTS",
    "LIMITS",
    "SETTINGS",
    "Config",
    "Limit",
    "Setting",
    "budget_tokens",
    "deep_merge",
    "json_schema",
    "load_config",
]


def _nested(settings: Iterable[Setting]) -> dict[str, Any]:
    """The defaults in the file's shape: `{"retrieval": {"minScore": 0.5, ...}, ...}`."""
    tree: dict[str, Any] = {}
    for entry in settings:
        section, _, leaf = entry.path.rpartition(".")
        (tree.setdefault(section, {}) if section else tree)[leaf] = entry.default
    return tree


# Derived from the declarations, in their order: every setting, its limit, the defaults.
SETTINGS: Final[tuple[Setting, ...]] = tuple(all_settings())
LIMITS: Final[dict[str, Limit]] = {entry.path: entry.limit for entry in SETTINGS}
DEFAULTS: Final[dict[str, Any]] = _nested(SETTINGS)


@dataclass(frozen=True, slots=True)
class Config:
    """A checked configuration, read as typed sections: `config.assembly.soft_budget_tokens`.

    `values` keeps the file's shape (camelCase keys) for `to_json` and for deriving a
    changed config; the sections are built from it once, when the config is made.
    """

    values: Mapping[str, Any]
    warnings: tuple[str, ...] = field(default=())
    data_dir: str = field(init=False, compare=False, repr=False)
    capture: CaptureSettings = field(init=False, compare=False, repr=False)
    archive: ArchiveSettings = field(init=False, compare=False, repr=False)
    extraction: ExtractionSettings = field(init=False, compare=False, repr=False)
    retrieval: RetrievalSettings = field(init=False, compare=False, repr=False)
    assembly: AssemblySettings = field(init=False, compare=False, repr=False)
    diagnostics: DiagnosticsSettings = field(init=False, compare=False, repr=False)
    compatibility: CompatibilitySettings = field(init=False, compare=False, repr=False)
    skills: SkillsSettings = field(init=False, compare=False, repr=False)
    validation: ValidationSettings = field(init=False, compare=False, repr=False)
    host: HostSettings = field(init=False, compare=False, repr=False)
    memory: MemorySettings = field(init=False, compare=False, repr=False)
    hooks: HooksSettings = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Each section's file key is its attribute here; the top level's keys are flat.
        object.__setattr__(self, "data_dir", TopSettings.of(self.values).data_dir)
        for key, section in SECTIONS.items():
            if key:
                object.__setattr__(self, key, section.of(self.values[key]))

    def get(self, dotted: str) -> Any:
        """One leaf by its file path (`"assembly.softBudgetTokens"`), for tools and tests."""
        node: Any = self.values
        for part in dotted.split("."):
            node = node[part]
        return copy.deepcopy(node) if isinstance(node, list | dict) else node

    def section(self, name: str) -> dict[str, Any]:
        return copy.deepcopy(dict(self.values[name]))

    def to_json(self) -> str:
        return json.dumps(self.values, ensure_ascii=False, sort_keys=True, indent=2)


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: `override` wins leaf by leaf, nested mappings merge."""
    merged: dict[str, Any] = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _check(path: str, value: Any, default: Any, limit: Limit, warnings: list[str]) -> Any:
    # bool is an int in Python; a flag given as a number (or a number as a flag) is wrong.
    wrong_bool = isinstance(value, bool) != (limit.kind is bool)
    if wrong_bool or not isinstance(value, limit.kind):
        warnings.append(
            f"{path}: expected {_kind_name(limit.kind)}, got {value!r}; using {default!r}"
        )
        return default
    if limit.choices is not None and value not in limit.choices:
        warnings.append(
            f"{path}: {value!r} is not one of {', '.join(limit.choices)}; using {default!r}"
        )
        return default
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value != value:  # NaN
            warnings.append(f"{path}: NaN is not a number; using {default!r}")
            return default
        if limit.low is not None and value < limit.low:
            clamped = type(default)(limit.low)
            warnings.append(f"{path}: {value!r} is below {limit.low:g}; clamped to {clamped!r}")
            return clamped
        if limit.high is not None and value > limit.high:
            clamped = type(default)(limit.high)
            warnings.append(f"{path}: {value!r} is above {limit.high:g}; clamped to {clamped!r}")
            return clamped
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return "a number"
    return {bool: "true/false", int: "an integer", str: "a string", list: "a list"}.get(
        kind, kind.__name__
    )


def load_config(overrides: Mapping[str, Any] | None = None) -> Config:
    """Merge `overrides` over the defaults and check every leaf; unknown keys are kept but warned."""
    warnings: list[str] = []
    if overrides is not None and not isinstance(overrides, Mapping):
        warnings.append(
            f"config: expected an object, got {type(overrides).__name__}; using defaults"
        )
        overrides = None
    merged = deep_merge(DEFAULTS, overrides or {})
    for path, limit in LIMITS.items():
        section, _, leaf = path.rpartition(".")
        parent = merged if not section else merged.get(section)
        default_parent = DEFAULTS if not section else DEFAULTS[section]
        if not isinstance(parent, dict):
            warnings.append(f"{section}: expected an object, got {parent!r}; using defaults")
            merged[section] = copy.deepcopy(DEFAULTS[section])
            parent = merged[section]
        parent[leaf] = _check(path, parent.get(leaf), default_parent[leaf], limit, warnings)
    merged["capture"]["privatePatterns"] = _usable_patterns(
        merged["capture"]["privatePatterns"], warnings
    )
    for key in sorted(set(merged) - set(DEFAULTS)):
        warnings.append(f"{key}: unknown setting, ignored")
    return Config(values=merged, warnings=tuple(warnings))


def _usable_patterns(patterns: list[Any], warnings: list[str]) -> list[str]:
    """The private patterns that compile; each one left out is a warning, never an error."""
    usable, problems = compile_patterns(patterns)
    warnings.extend(f"capture.privatePatterns: {problem}; ignored" for problem in problems)
    return [regex.pattern for regex in usable]


def budget_tokens(config: Config) -> int:
    """The assembly budget: the larger of the soft and the minimum budget."""
    return max(config.assembly.min_budget_tokens, config.assembly.soft_budget_tokens)


def json_schema() -> dict[str, Any]:
    """A JSON Schema of the settings, for hosts that validate plugin configuration."""
    properties: dict[str, Any] = {}
    for entry in SETTINGS:
        section, _, leaf = entry.path.rpartition(".")
        target = properties
        if section:
            target = properties.setdefault(section, {"type": "object", "properties": {}})[
                "properties"
            ]
        target[leaf] = _leaf_schema(entry)
    return {"type": "object", "properties": properties}


def _leaf_schema(entry: Setting) -> dict[str, Any]:
    names = {bool: "boolean", int: "integer", str: "string", list: "array"}
    limit = entry.limit
    kind = "number" if isinstance(limit.kind, tuple) else names[limit.kind]
    schema: dict[str, Any] = {
        "type": kind,
        "default": copy.deepcopy(entry.default),
        "description": entry.help,
    }
    if limit.low is not None:
        schema["minimum"] = limit.low
    if limit.high is not None:
        schema["maximum"] = limit.high
    if limit.choices is not None:
        schema["enum"] = list(limit.choices)
    return schema
