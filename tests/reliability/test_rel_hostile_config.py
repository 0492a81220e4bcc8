"""Hostile configuration: wrong types, negative budgets and huge limits never crash.

Whatever a user writes, `load_config` returns a config whose every checked leaf has the
right type and lies within its bounds, and each value it did not keep as written is
named in a warning. The resulting config then drives capture and assembly without errors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
import rel_support as rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_adapter.envelope.capture import capture_batch
from lcm_core.config import DEFAULTS, LIMITS, Config, Limit, budget_tokens, load_config
from lcm_store_sqlite import SQLiteMemoryStore

EXAMPLES = rs.scaled(300, 3_000)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([-1, 0, -(2**63), 2**63, 10**100, -(10**100)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _valid_value(limit: Limit) -> st.SearchStrategy[Any]:
    if limit.choices is not None:
        return st.sampled_from(limit.choices)
    if limit.kind is bool:
        return st.booleans()
    if limit.kind is int:
        return st.integers(min_value=int(limit.low or 0), max_value=int(limit.high or 10**6))
    if limit.kind is list:
        return st.lists(st.text(max_size=8), max_size=3)
    if limit.kind is str:
        return st.text(max_size=12)
    return st.floats(min_value=limit.low or 0.0, max_value=limit.high or 1e6)


@st.composite
def overrides(draw: st.DrawFn) -> dict[str, Any]:
    """A config object: for a random subset of known leaves a valid or hostile value,
    sometimes a whole section replaced by a non-object, sometimes unknown keys."""
    result: dict[str, Any] = {}
    for path in draw(st.lists(st.sampled_from(sorted(LIMITS)), max_size=8, unique=True)):
        value = draw(st.one_of(_valid_value(LIMITS[path]), JSON))
        section, _, leaf = path.rpartition(".")
        if section:
            target = result.setdefault(section, {})
            if isinstance(target, dict):
                target[leaf] = value
        else:
            result[leaf] = value
    if draw(st.booleans()):
        section = draw(
            st.sampled_from(sorted(k for k, v in DEFAULTS.items() if isinstance(v, dict)))
        )
        result[section] = draw(SCALARS)
    result.update(draw(st.dictionaries(st.text(max_size=8), JSON, max_size=2)))
    return result


def leaf(values: Any, path: str) -> tuple[bool, Any]:
    """(present, value) of a dotted path inside a plain nested mapping."""
    node = values
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def check_leaf(config: Config, path: str, limit: Limit) -> Any:
    value = config.get(path)
    if limit.kind is bool or limit.kind is list or limit.kind is str:
        assert type(value) is limit.kind, (path, value)
    else:
        assert not isinstance(value, bool), (path, value)
        assert isinstance(value, limit.kind), (path, value)
        assert not (isinstance(value, float) and math.isnan(value)), (path, value)
        if limit.low is not None:
            assert value >= limit.low, (path, value)
        if limit.high is not None:
            assert value <= limit.high, (path, value)
    if limit.choices is not None:
        assert value in limit.choices, (path, value)
    return value


@SETTINGS
@given(user=st.one_of(overrides(), JSON))
def test_any_overrides_give_a_checked_config_and_warn_for_each_change(user: Any) -> None:
    """Every leaf is valid after loading; a leaf not kept as written is named in a warning."""
    rs.bump("hypothesis.config_overrides.examples")
    config = load_config(user)
    for path, limit in LIMITS.items():
        value = check_leaf(config, path, limit)
        present, given_value = leaf(user, path) if isinstance(user, dict) else (False, None)
        kept = present and type(given_value) is type(value) and given_value == value
        if present and not kept:
            section = path.rpartition(".")[0]
            named = any(w.startswith((path, section + ":")) for w in config.warnings)
            assert named, (path, given_value, config.warnings)
    assert 50 <= budget_tokens(config) <= 200_000
    json.loads(config.to_json())


@pytest.fixture(scope="module")
def store() -> Iterator[SQLiteMemoryStore]:
    handle = SQLiteMemoryStore(":memory:")
    capture_batch(handle, "cfg", list(rs.stream(0, 60)), load_config())
    yield handle
    handle.close()


@settings(SETTINGS, max_examples=rs.scaled(100, 1_000))
@given(user=overrides())
def test_any_config_drives_capture_and_assembly_without_errors(
    store: SQLiteMemoryStore, user: dict[str, Any]
) -> None:
    """Capture and assembly under any loaded config report no errors."""
    assembly = pytest.importorskip("lcm_core.assembly.assemble")
    rs.bump("hypothesis.config_drives_runtime.examples")
    config = load_config(user)
    report = capture_batch(store, "cfg", list(rs.stream(60, 70)), config)
    assert report.error_count == 0
    result = assembly.assemble(store, "cfg", (), config, query="预算 p95 PostgreSQL")
    assert result.errors == ()
    assert result.used_tokens <= result.budget_tokens
