"""Configuration never crashes: wrong types fall back, numbers are clamped, all with warnings."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from lcm_core.config import DEFAULTS, LIMITS, Config, budget_tokens, json_schema, load_config


def test_defaults_match_the_spec() -> None:
    config = load_config()
    assert config.warnings == ()
    assert config.get("assembly.softBudgetTokens") == 3000
    assert config.get("assembly.minBudgetTokens") == 600
    assert config.get("retrieval.minScore") == 0.5
    assert config.get("retrieval.limit") == 24
    assert config.get("assembly.evidenceTypes") == ["user/message"]
    assert budget_tokens(config) == 3000


def test_overrides_merge_deeply_and_leave_siblings() -> None:
    config = load_config({"assembly": {"softBudgetTokens": 800}})
    assert config.get("assembly.softBudgetTokens") == 800
    assert config.get("assembly.skipWhenEmpty") is True
    assert budget_tokens(load_config({"assembly": {"softBudgetTokens": 100}})) == 600


def test_bad_values_fall_back_or_clamp_with_one_warning_each() -> None:
    config = load_config(
        {
            "assembly": {"softBudgetTokens": -5, "skipWhenEmpty": 1},
            "retrieval": {"limit": 10_000, "minScore": "high"},
            "compatibility": {"compactionPolicy": "sometimes"},
            "validation": "all",
            "mystery": True,
        }
    )
    assert config.get("assembly.softBudgetTokens") == 50
    assert config.get("assembly.skipWhenEmpty") is True
    assert config.get("retrieval.limit") == 100
    assert config.get("retrieval.minScore") == 0.5
    assert config.get("compatibility.compactionPolicy") == "auto"
    assert config.get("validation.maxRepairAttempts") == 2
    assert len(config.warnings) == 7
    assert all("\n" not in warning for warning in config.warnings)


def test_a_non_object_config_gives_the_defaults() -> None:
    config = load_config(["not", "a", "mapping"])  # type: ignore[arg-type]
    assert config.values == load_config().values
    assert config.warnings


def test_reading_a_list_returns_a_copy() -> None:
    config = load_config()
    config.get("assembly.evidenceTypes").append("tool/result")
    assert config.get("assembly.evidenceTypes") == ["user/message"]
    assert DEFAULTS["assembly"]["evidenceTypes"] == ["user/message"]


def test_json_schema_covers_every_section_and_is_serialisable() -> None:
    schema = json_schema()
    assert set(schema["properties"]) >= {"assembly", "retrieval", "validation", "dataDir"}
    assert schema["properties"]["retrieval"]["properties"]["limit"]["maximum"] == 100
    json.dumps(schema)


def _default(path: str) -> object:
    node: Any = DEFAULTS
    for part in path.split("."):
        node = node[part]
    return node


def _typed(config: Config, path: str) -> object:
    """The typed attribute of a file path: `retrieval.minScore` is `config.retrieval.min_score`."""
    section, _, leaf = path.rpartition(".")
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), leaf)
    return getattr(getattr(config, section), snake) if section else getattr(config, snake)


@pytest.mark.parametrize(
    "overrides",
    [
        None,
        {"retrieval": {"minScore": 2, "limit": 500}, "assembly": {"softBudgetTokens": 10}},
        {"skills": {"include": ["技能/**/SKILL.md"]}, "validation": {"checks": [{"type": "x"}]}},
        {"capture": {"enabled": "yes"}, "host": {"preStepDeadlineMs": -1}},
    ],
)
def test_every_setting_has_a_typed_field_equal_to_its_checked_value(overrides: Any) -> None:
    """Typed sections carry exactly the checked (clamped, defaulted) values of the file."""
    config = load_config(overrides)
    for path in LIMITS:
        value = config.get(path)
        typed = _typed(config, path)
        assert (list(typed) if isinstance(typed, tuple) else typed) == value, path
        assert type(typed) is (tuple if isinstance(value, list) else type(_default(path))), path


def test_typed_lists_are_copies_the_caller_cannot_change() -> None:
    """A typed list setting is a tuple, so no reader can change the config under others."""
    config = load_config({"validation": {"checks": [{"type": "regex"}]}})
    assert isinstance(config.validation.checks, tuple)
    assert config.validation.checks == ({"type": "regex"},)
    assert config.assembly.evidence_types == ("user/message",)
