"""Hostile input to capture: any JSON value, any envelope, any session id never raises.

Each property also checks that the report's counts add up against the store: every
input is either an error or became rows, inserted plus duplicates equals rows, and the
events table grew by exactly the number reported inserted.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
import rel_support as rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_core.capture.events import CaptureReport
from lcm_core.config import load_config
from lcm_store_sqlite import SQLiteMemoryStore

EXAMPLES = rs.scaled(200, 2_000)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CONFIG = load_config()
_SESSIONS = itertools.count()

# Every character, lone surrogates and NUL included.
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
ANY_TEXT = st.text(ANY_CHAR, max_size=60)
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    ANY_TEXT,
)
ANY_JSON = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=12,
)
EVENT_TYPES = st.sampled_from(
    [
        "user/message",
        "assistant/message",
        "assistant/chunk",
        "tool/call",
        "tool/result",
        "compaction/summary",
        "text-chunks",
        "reasoning-chunks",
        "tool-call-chunks",
        "turn/start",
        "session/title",
        "todo/write",
        "agent/inbox/spliced",
        "x-unknown/type",
    ]
)
SEQS = st.one_of(
    st.integers(min_value=-5, max_value=60),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
)
CONTENT = st.one_of(
    ANY_JSON,
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": ANY_TEXT}), max_size=3),
)
ENVELOPE = st.fixed_dictionaries(
    {"type": st.one_of(EVENT_TYPES, ANY_JSON), "seq": SEQS},
    optional={
        "time": st.one_of(st.integers(), st.floats(), ANY_TEXT, st.none()),
        "data": st.one_of(
            ANY_JSON,
            st.fixed_dictionaries(
                {},
                optional={
                    "content": CONTENT,
                    "role": ANY_JSON,
                    "source": ANY_JSON,
                    "message": ANY_JSON,
                    "turn": ANY_JSON,
                    "step": ANY_JSON,
                    "seq0": SEQS,
                    "texts": st.lists(ANY_JSON, max_size=4),
                    "dt": st.lists(ANY_JSON, max_size=4),
                    "summary": CONTENT,
                    "arguments": ANY_JSON,
                },
            ),
        ),
        "ignorable": ANY_JSON,
        "sourceEventSeqs": ANY_JSON,
    },
)


@pytest.fixture(scope="module")
def store() -> Iterator[SQLiteMemoryStore]:
    handle = SQLiteMemoryStore(":memory:")
    yield handle
    handle.close()


def new_session() -> str:
    return f"hostile-{next(_SESSIONS)}"


def check_counts(store: SQLiteMemoryStore, session: str, report: CaptureReport, n: int) -> None:
    """The report's numbers agree with each other and with the store."""
    assert report.received == n
    assert report.inserted + report.duplicates == report.rows
    failed = {issue.index for issue in report.errors if issue.index >= 0}
    assert failed <= set(range(n))
    # An input that is not an error became at least one row (packed chunks become several).
    assert report.rows >= n - len(failed)
    assert store.stats(session)["events"] == report.inserted
    if report.inserted:
        assert store.get_checkpoint(session).last_event_seq == report.last_event_seq


@SETTINGS
@given(value=ANY_JSON)
def test_any_json_value_as_one_event_never_raises(store: SQLiteMemoryStore, value: Any) -> None:
    """Capture of any JSON value returns a report whose counts agree with the store."""
    rs.bump("hypothesis.capture_any_json.examples")
    session = new_session()
    report = capture_event(store, session, value, CONFIG)
    check_counts(store, session, report, 1)
    if not isinstance(value, dict):
        assert report.error_count == 1 and report.rows == 0


@SETTINGS
@given(events=st.lists(ENVELOPE, max_size=5))
def test_hostile_envelopes_in_one_batch_never_raise(
    store: SQLiteMemoryStore, events: list[dict[str, Any]]
) -> None:
    """A batch of malformed envelopes stores what it can and counts the rest as errors."""
    rs.bump("hypothesis.capture_envelopes.examples")
    session = new_session()
    report = capture_batch(store, session, events, CONFIG)
    check_counts(store, session, report, len(events))
    again = capture_batch(store, session, events, CONFIG)
    assert again.inserted == 0, "a replay of the same batch inserted rows"
    assert store.stats(session)["events"] == report.inserted


@SETTINGS
@given(session=st.one_of(ANY_TEXT, ANY_JSON), event=ENVELOPE)
def test_any_session_id_never_raises(store: SQLiteMemoryStore, session: Any, event: Any) -> None:
    """A session id of any type or text is stored as given or refused with an error."""
    rs.bump("hypothesis.capture_session_ids.examples")
    report = capture_event(store, session, event, CONFIG)
    assert report.received in (0, 1)
    assert report.inserted + report.duplicates == report.rows
    if report.received == 0:
        assert report.error_count == 1 and report.rows == 0


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"type": "text", "content": [value]}
    return value


def _circular() -> dict[str, Any]:
    data: dict[str, Any] = {"role": "user", "content": []}
    data["content"].append({"type": "text", "text": "loop", "self": data})
    data["source"] = data
    return data


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"content": "界" * 5_000_000}, id="5M-chars"),
        pytest.param({"content": [{"type": "text", "text": "x\x00" * 300_000}]}, id="NUL-run"),
        pytest.param({"content": "\ud800\udfff\ud83d" * 1000}, id="surrogates"),
        pytest.param({"content": _deep(50_000)}, id="nested-50k"),
        pytest.param(_circular(), id="circular"),
        pytest.param({"content": b"bytes", "role": object()}, id="non-json-objects"),
        pytest.param({"content": float("nan"), "turn": float("inf")}, id="nan-inf"),
    ],
)
def test_extreme_payloads_are_stored_or_refused_without_raising(
    store: SQLiteMemoryStore, data: Any
) -> None:
    """Huge, deep, circular or non-JSON payloads give a report, and counts still add up."""
    rs.bump("capture_extreme_payloads.cases")
    session = new_session()
    event = {"type": "user/message", "seq": 1, "time": 0, "data": data}
    report = capture_event(store, session, event, CONFIG)
    check_counts(store, session, report, 1)
    stored = store.get_event(session, 1)
    if stored is not None:
        assert len(stored.text) <= 20_000
        assert "\x00" not in stored.text
