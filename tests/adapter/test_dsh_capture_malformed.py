"""Malformed host input: every event is either stored (repaired) or rejected with a counted error.

Capture runs inside the host's event listener, so nothing here may raise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_core.config import load_config
from lcm_core.store.errors import StorageFullError
from lcm_core.store.models import MAX_EVENT_TEXT, Event
from lcm_store_sqlite import SQLiteMemoryStore

SID = "s-malformed"
CONFIG = load_config()


@pytest.fixture
def store() -> Iterator[SQLiteMemoryStore]:
    handle = SQLiteMemoryStore(":memory:")
    yield handle
    handle.close()


def msg(seq: Any, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user/message",
        "seq": seq,
        "data": {"role": "user", "content": content, **extra},
    }


def deep_list(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def circular() -> dict[str, Any]:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    return loop


# (case id, event, expected outcome, text the stored row must have or None to skip the check)
STORED: list[tuple[str, Any, str | None]] = [
    ("missing data", {"type": "user/message", "seq": 1}, ""),
    ("data is a string", {"type": "user/message", "seq": 1, "data": "裸字符串"}, "裸字符串"),
    ("data is a list", {"type": "tool/result", "seq": 1, "data": [1, "two"]}, "1\ntwo"),
    ("data is null", {"type": "turn/start", "seq": 1, "data": None}, ""),
    ("text is a number", msg(1, [{"type": "text", "text": 42}]), "42"),
    ("text is null", msg(1, [{"type": "text", "text": None}]), ""),
    ("text is an object", msg(1, [{"type": "text", "text": {"text": "内层"}}]), "内层"),
    ("content is a bare string", msg(1, "just text"), "just text"),
    ("content is an object", msg(1, {"type": "text", "text": "one block"}), "one block"),
    ("NUL bytes", msg(1, [{"type": "text", "text": "a\x00b\x00预算"}]), "ab预算"),
    ("lone surrogates", msg(1, [{"type": "text", "text": "x\ud800y\udfffz"}]), "x\ufffdy\ufffdz"),
    ("deeply nested content", msg(1, deep_list(5000)), ""),
    ("circular content", msg(1, [circular()]), None),
    ("bytes in content", msg(1, [b"raw bytes", "ok"]), "ok"),
    ("role and source of wrong types", msg(1, "t", role=7, source="user"), "t"),
    ("source kind is a list", msg(1, "t", source={"kind": ["user"]}), "t"),
    (
        "time is NaN",
        {"type": "user/message", "seq": 1, "time": float("nan"), "data": {"content": "t"}},
        "t",
    ),
    (
        "time is a dict",
        {"type": "user/message", "seq": 1, "time": {"ms": 1}, "data": {"content": "t"}},
        "t",
    ),
    ("turn is a string", {"type": "step/start", "seq": 1, "data": {"turn": "1", "step": True}}, ""),
    (
        "tool call args not JSON",
        {"type": "tool/call", "seq": 1, "data": {"name": "x", "arguments": "{oops"}},
        "{oops",
    ),
    ("unknown type with circular data", {"type": "x/y", "seq": 1, "data": circular()}, None),
    (
        "unknown type with deep data",
        {"type": "x/y", "seq": 1, "data": {"v": deep_list(100_000)}},
        None,
    ),
    (
        "type with control characters",
        {"type": "user/\x00message", "seq": 1, "data": {"content": "t"}},
        "t",
    ),
    (
        "packed row with non-string member",
        {"type": "text-chunks", "seq0": 1, "time0": 5, "data": {"texts": [7], "dt": []}},
        "7",
    ),
    (
        "packed row with bad dt",
        {"type": "text-chunks", "seq0": 1, "time0": 5, "data": {"texts": ["a"], "dt": "x"}},
        "a",
    ),
]
REJECTED: list[tuple[str, Any]] = [
    ("event is null", None),
    ("event is a number", 42),
    ("event is a string", "user/message"),
    ("event is a list", [{"type": "user/message", "seq": 1}]),
    ("event is a bool", True),
    ("seq missing", {"type": "user/message", "data": {"content": "t"}}),
    ("seq negative", msg(-1, "t")),
    ("seq is a float", msg(1.0, "t")),
    ("seq is a string", msg("1", "t")),
    ("seq is a bool", msg(True, "t")),
    ("seq beyond 64 bits", msg(2**70, "t")),
    ("type missing", {"seq": 1, "data": {}}),
    ("type is a number", {"type": 5, "seq": 1, "data": {}}),
    ("type is empty", {"type": "  ", "seq": 1, "data": {}}),
    ("packed row without members", {"type": "text-chunks", "seq0": 1, "data": {"texts": []}}),
    ("packed row without seq0", {"type": "reasoning-chunks", "data": {"texts": ["a"]}}),
    (
        "packed row with negative seq0",
        {"type": "tool-call-chunks", "seq0": -3, "data": {"args": ["a"]}},
    ),
]


@pytest.mark.parametrize(("case", "event", "text"), STORED, ids=[c[0] for c in STORED])
def test_repairable_event_is_stored_clean(
    store: SQLiteMemoryStore, case: str, event: Any, text: str | None
) -> None:
    """Odd but identifiable events are kept (seq-aligned with the host log), with clean text."""
    report = capture_event(store, SID, event, CONFIG)
    assert report.error_count == 0, report.errors
    assert report.inserted == 1
    row = store.get_event(SID, 1)
    assert row is not None
    assert "\x00" not in row.text and not any("\ud800" <= ch <= "\udfff" for ch in row.text)
    if text is not None:
        assert row.text == text


@pytest.mark.parametrize(("case", "event"), REJECTED, ids=[c[0] for c in REJECTED])
def test_unidentifiable_event_is_rejected_with_a_counted_error(
    store: SQLiteMemoryStore, case: str, event: Any
) -> None:
    """Events without a usable seq or type are refused, counted with a reason, and nothing is written."""
    report = capture_event(store, SID, event, CONFIG)
    assert report.inserted == 0 and report.error_count == 1
    assert report.errors[0].reason
    assert store.stats(SID)["events"] == 0


def test_five_megabyte_text_is_cut_not_raised(store: SQLiteMemoryStore) -> None:
    """A 5 MB message is stored cut to the event limit and archived up to the archive limit."""
    huge = "数据" * 1_250_000 + "x" * 2_500_000  # 5 000 000 characters
    report = capture_event(store, SID, msg(1, [{"type": "text", "text": huge}]), CONFIG)
    assert (report.inserted, report.error_count) == (1, 0)
    row = store.get_event(SID, 1)
    assert row is not None and row.truncated and len(row.text) == MAX_EVENT_TEXT
    archived = store.get_archive(SID, "seq:1")
    assert archived is not None and len(archived.text) == CONFIG.get("archive.maxCharsPerEvent")


def test_one_batch_of_everything_counts_each_problem_and_keeps_the_good_rows(
    store: SQLiteMemoryStore,
) -> None:
    """A batch mixing good, repairable and hopeless events stores the first two kinds, counts the third."""
    good = msg(999, "正常的消息 normal message")
    events: list[Any] = [good]
    for offset, (_, event, _) in enumerate(STORED):
        # Give each repairable event its own seq so they do not collide.
        if isinstance(event, dict) and "seq0" in event:
            events.append({**event, "seq0": 100 + offset})
        else:
            events.append({**event, "seq": 100 + offset})
    events.extend(event for _, event in REJECTED)
    report = capture_batch(store, SID, events, CONFIG)
    assert report.received == len(events)
    assert report.error_count == len(REJECTED)
    assert report.inserted == 1 + len(STORED)
    assert sorted(issue.index for issue in report.errors) == list(
        range(1 + len(STORED), len(events))
    )
    assert len(report.repaired) >= 5, "repairs are reported, not silent"
    assert store.get_event(SID, 999) is not None
    assert report.unknown_types == 2


@pytest.mark.parametrize("session_id", [None, "", " padded ", "a\x00b", 12, "x" * 600])
def test_bad_session_id_is_reported_and_nothing_is_written(
    store: SQLiteMemoryStore, session_id: Any
) -> None:
    """A session id that cannot be stored is refused as a whole, never raised."""
    report = capture_batch(store, session_id, [msg(1, "t")], CONFIG)
    assert report.inserted == 0 and report.error_count == 1
    assert store.list_sessions() == []


def test_events_that_are_not_iterable_are_reported() -> None:
    """Passing something that is not a list of events is an error in the report, not an exception."""
    with SQLiteMemoryStore(":memory:") as handle:
        report = capture_batch(handle, SID, 42, CONFIG)  # type: ignore[arg-type]
    assert report.error_count == 1 and report.inserted == 0


class FailingStore:
    """Delegates to a real store but fails the bulk insert, as a full disk would."""

    def __init__(self, inner: SQLiteMemoryStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def transaction(self) -> AbstractContextManager[None]:
        return self.inner.transaction()

    def insert_events(self, events: Iterable[Event]) -> int:
        self.inner.insert_events(events)
        raise StorageFullError("disk full")


def test_store_failure_rolls_back_and_is_reported(store: SQLiteMemoryStore) -> None:
    """A store error mid-batch leaves no partial rows and comes back as a counted error."""
    report = capture_batch(FailingStore(store), SID, [msg(1, "a"), msg(2, "b")], CONFIG)  # type: ignore[arg-type]
    assert report.inserted == 0 and report.error_count == 1
    assert "disk full" in report.errors[0].reason
    assert store.stats(SID)["events"] == 0
    assert store.get_session(SID) is None
    assert store.get_checkpoint(SID).last_event_seq == -1
