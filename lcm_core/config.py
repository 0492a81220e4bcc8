"""Configuration: defaults, deep merge of user overrides, type checks and clamps.

Keys use the spec's camelCase names (`assembly.softBudgetTokens`) because users write
them in DSH patch files. A value of the wrong type or out of range never raises: it
falls back to the default (or the nearest bound) and a warning says so.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final

from lcm_core.text.private import compile_patterns


@dataclass(frozen=True, slots=True)
class Limit:
    """The type a leaf must have and, for numbers, its allowed range."""

    kind: type | tuple[type, ...]
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None


DEFAULTS: Final[dict[str, Any]] = {
    "dataDir": "",
    "capture": {"enabled": True, "privatePatterns": [], "redact": False},
    "archive": {"maxCharsPerEvent": 100_000},
    "extraction": {"enabled": True, "maxAttempts": 3},
    "retrieval": {
        "minScore": 0.5,
        "limit": 24,
        "exactMatchBoost": 0.5,
        "recencyBoost": 0.05,
        "priorShare": 0.1,
        "contextWeight": 0.3,
        "episodeWeight": 0.5,
        "speakerWeight": 1.0,
        "dayWeight": 1.0,
        "intentBoost": 0.5,
        "relativeMinScore": 0.1,
        "recencyWindow": 40,
        "evidenceLimit": 80,
        "neighbourShare": 0.6,
        "neighbourRadius": 3,
        "ablate": [],
    },
    "assembly": {
        "softBudgetTokens": 3000,
        "minBudgetTokens": 600,
        "skipWhenEmpty": True,
        "evidenceTypes": ["user/message"],
        "maxEvidenceChars": 600,
        "snippetChars": 120,
        "language": "auto",
        "residentShare": 0.5,
        "rulesShare": 0.25,
    },
    "diagnostics": {"assemblyLogRetention": 200},
    "compatibility": {"compactionPolicy": "auto", "reinjectAfterCompaction": True},
    "skills": {"include": [], "exclude": [], "coreLinesPerSkill": 6, "ruleLimit": 8},
    "validation": {
        "checks": [],
        "preconditions": [],
        "blockOnViolation": False,
        "maxRepairAttempts": 2,
        "scriptDir": "",
    },
    "host": {"preStepDeadlineMs": 1500},
    "memory": {"scope": "session", "project": ""},
    # Claude Code is reported to cut a long additionalContext to a short preview (~10 KB).
    "hooks": {"maxContextChars": 8000},
}

LIMITS: Final[dict[str, Limit]] = {
    "dataDir": Limit(str),
    "capture.enabled": Limit(bool),
    "capture.privatePatterns": Limit(list),
    "capture.redact": Limit(bool),
    "archive.maxCharsPerEvent": Limit(int, 1_000, 5_000_000),
    "extraction.enabled": Limit(bool),
    "extraction.maxAttempts": Limit(int, 1, 100),
    "retrieval.minScore": Limit((int, float), 0.0, 10.0),
    "retrieval.limit": Limit(int, 1, 100),
    "retrieval.exactMatchBoost": Limit((int, float), 0.0, 5.0),
    "retrieval.recencyBoost": Limit((int, float), 0.0, 1.0),
    "retrieval.priorShare": Limit((int, float), 0.0, 0.5),
    "retrieval.contextWeight": Limit((int, float), 0.0, 1.0),
    "retrieval.episodeWeight": Limit((int, float), 0.0, 2.0),
    "retrieval.speakerWeight": Limit((int, float), 0.0, 2.0),
    "retrieval.dayWeight": Limit((int, float), 0.0, 2.0),
    "retrieval.intentBoost": Limit((int, float), 0.0, 1.0),
    "retrieval.relativeMinScore": Limit((int, float), 0.0, 1.0),
    "retrieval.recencyWindow": Limit(int, 0, 100_000),
    "retrieval.evidenceLimit": Limit(int, 0, 100),
    "retrieval.neighbourShare": Limit((int, float), 0.0, 1.0),
    "retrieval.neighbourRadius": Limit(int, 0, 5),
    "retrieval.ablate": Limit(list),
    "assembly.softBudgetTokens": Limit(int, 50, 200_000),
    "assembly.minBudgetTokens": Limit(int, 50, 200_000),
    "assembly.skipWhenEmpty": Limit(bool),
    "assembly.evidenceTypes": Limit(list),
    "assembly.maxEvidenceChars": Limit(int, 40, 100_000),
    "assembly.snippetChars": Limit(int, 0, 100_000),
    "assembly.language": Limit(str, choices=("auto", "zh", "en")),
    "assembly.residentShare": Limit((int, float), 0.0, 1.0),
    "assembly.rulesShare": Limit((int, float), 0.0, 1.0),
    "diagnostics.assemblyLogRetention": Limit(int, 1, 100_000),
    "compatibility.compactionPolicy": Limit(
        str, choices=("auto", "compaction-basic", "billion-context", "none")
    ),
    "compatibility.reinjectAfterCompaction": Limit(bool),
    "skills.include": Limit(list),
    "skills.exclude": Limit(list),
    "skills.coreLinesPerSkill": Limit(int, 0, 50),
    "skills.ruleLimit": Limit(int, 0, 100),
    "validation.checks": Limit(list),
    "validation.preconditions": Limit(list),
    "validation.blockOnViolation": Limit(bool),
    "validation.maxRepairAttempts": Limit(int, 0, 20),
    "validation.scriptDir": Limit(str),
    "host.preStepDeadlineMs": Limit(int, 50, 60_000),
    "memory.scope": Limit(str, choices=("session", "project")),
    "memory.project": Limit(str),
    "hooks.maxContextChars": Limit(int, 500, 1_000_000),
}


def _camel(name: str) -> str:
    """The file's key for a field: `max_chars_per_event` is `maxCharsPerEvent`."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class _Section:
    """Builds a typed section from its checked mapping (leaves already type-checked)."""

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Any:
        kwargs: dict[str, Any] = {}
        for item in fields(cls):  # type: ignore[arg-type]
            raw = values[_camel(item.name)]
            kind = str(item.type)  # annotations are strings under `from __future__`
            if kind.startswith("tuple"):
                kwargs[item.name] = tuple(copy.deepcopy(raw))  # lists are the caller's own
            else:
                kwargs[item.name] = _CASTS[kind](raw)
        return cls(**kwargs)


_CASTS: Final[dict[str, Any]] = {"int": int, "float": float, "bool": bool, "str": str}


@dataclass(frozen=True, slots=True)
class CaptureSettings(_Section):
    """`capture.*`: whether host events are stored, and what text is withheld from the store.

    `private_patterns` are regular expressions whose matches are stored as `[private]`
    (beside the `<private>...</private>` spans, always hidden); `redact` replaces
    secret-shaped strings as `lcm export --redact` does, before they are stored.
    """

    enabled: bool
    private_patterns: tuple[str, ...]
    redact: bool


@dataclass(frozen=True, slots=True)
class ArchiveSettings(_Section):
    """`archive.*`: how much text one event may keep before the rest goes to the archive."""

    max_chars_per_event: int


@dataclass(frozen=True, slots=True)
class ExtractionSettings(_Section):
    """`extraction.*`: whether memory is derived, and how often a failed event is retried."""

    enabled: bool
    max_attempts: int


@dataclass(frozen=True, slots=True)
class RetrievalSettings(_Section):
    """`retrieval.*`: the weights and limits of ranking and raw evidence."""

    min_score: float
    limit: int
    exact_match_boost: float
    recency_boost: float
    recency_window: int
    evidence_limit: int
    prior_share: float
    context_weight: float
    episode_weight: float
    speaker_weight: float
    day_weight: float
    intent_boost: float
    relative_min_score: float
    neighbour_share: float
    neighbour_radius: int
    ablate: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AssemblySettings(_Section):
    """`assembly.*`: the budget and what the block may quote."""

    soft_budget_tokens: int
    min_budget_tokens: int
    skip_when_empty: bool
    evidence_types: tuple[Any, ...]
    max_evidence_chars: int
    snippet_chars: int
    language: str
    resident_share: float
    rules_share: float


@dataclass(frozen=True, slots=True)
class DiagnosticsSettings(_Section):
    """`diagnostics.*`: how many assembly log rows a session keeps."""

    assembly_log_retention: int


@dataclass(frozen=True, slots=True)
class CompatibilitySettings(_Section):
    """`compatibility.*`: the host's compaction policy and re-injection after it."""

    compaction_policy: str
    reinject_after_compaction: bool


@dataclass(frozen=True, slots=True)
class SkillsSettings(_Section):
    """`skills.*`: which SKILL.md files are read and how much of them assembly uses."""

    include: tuple[Any, ...]
    exclude: tuple[Any, ...]
    core_lines_per_skill: int
    rule_limit: int


@dataclass(frozen=True, slots=True)
class ValidationSettings(_Section):
    """`validation.*`: post-step checks, tool preconditions and repair attempts."""

    checks: tuple[Any, ...]
    preconditions: tuple[Any, ...]
    block_on_violation: bool
    max_repair_attempts: int
    script_dir: str


@dataclass(frozen=True, slots=True)
class HostSettings(_Section):
    """`host.*`: how long a pre-step may take before the step goes on without memory."""

    pre_step_deadline_ms: int


@dataclass(frozen=True, slots=True)
class MemorySettings(_Section):
    """`memory.*`: whether a pre-step draws on the project's other sessions, and the project id.

    `scope` is `session` (this session only, the default) or `project` (also the durable
    items of the other sessions of the same project); `project` names the project when
    the user sets it, else it is the git top-level of the working directory, else the
    directory itself (`lcm_core.capture.project`).
    """

    scope: str
    project: str


@dataclass(frozen=True, slots=True)
class HooksSettings(_Section):
    """`hooks.*`: how long a hook's `additionalContext` may be (whole entries are cut)."""

    max_context_chars: int


# Config attribute -> (file key, typed section).
_SECTIONS: Final[dict[str, tuple[str, type[_Section]]]] = {
    "capture": ("capture", CaptureSettings),
    "archive": ("archive", ArchiveSettings),
    "extraction": ("extraction", ExtractionSettings),
    "retrieval": ("retrieval", RetrievalSettings),
    "assembly": ("assembly", AssemblySettings),
    "diagnostics": ("diagnostics", DiagnosticsSettings),
    "compatibility": ("compatibility", CompatibilitySettings),
    "skills": ("skills", SkillsSettings),
    "validation": ("validation", ValidationSettings),
    "host": ("host", HostSettings),
    "memory": ("memory", MemorySettings),
    "hooks": ("hooks", HooksSettings),
}


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
        object.__setattr__(self, "data_dir", str(self.values["dataDir"]))
        for name, (key, section) in _SECTIONS.items():
            object.__setattr__(self, name, section.of(self.values[key]))

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
    for path, limit in LIMITS.items():
        section, _, leaf = path.rpartition(".")
        target = properties
        if section:
            target = properties.setdefault(section, {"type": "object", "properties": {}})[
                "properties"
            ]
        target[leaf] = _leaf_schema(limit, DEFAULTS if not section else DEFAULTS[section], leaf)
    return {"type": "object", "properties": properties}


def _leaf_schema(limit: Limit, parent: Mapping[str, Any], leaf: str) -> dict[str, Any]:
    names = {bool: "boolean", int: "integer", str: "string", list: "array"}
    kind = "number" if isinstance(limit.kind, tuple) else names[limit.kind]
    schema: dict[str, Any] = {"type": kind, "default": parent[leaf]}
    if limit.low is not None:
        schema["minimum"] = limit.low
    if limit.high is not None:
        schema["maximum"] = limit.high
    if limit.choices is not None:
        schema["enum"] = list(limit.choices)
    return schema
