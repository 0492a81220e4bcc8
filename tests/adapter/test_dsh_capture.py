"""Capture of DSH session events: each event type becomes the row a consumer relies on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_core.capture.events import GENERATED_SOURCE_KINDS, is_generated, is_user_input
from lcm_core.config import load_config
from lcm_core.store.models import MAX_EVENT_TEXT, Event
from lcm_core.text.tokens import normalize_text, sha256_hex
from lcm_store_sqlite import SQLiteMemoryStore

SID = "sess-捕获-1"
CONFIG = load_config()


def fixed_clock() -> str:
    return "2026-01-01T00:00:00.000+00:00"


@pytest.fixture
def store() -> Iterator[SQLiteMemoryStore]:
    handle = SQLiteMemoryStore(":memory:")
    yield handle
    handle.close()


def user(seq: int, text: str, kind: str | None = "user", **source: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": f"u{seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
    }
    if kind is not None:
        data["source"] = {"kind": kind, **source}
    return {"type": "user/message", "seq": seq, "time": 1796004637000 + seq, "data": data}


def stored(store: SQLiteMemoryStore, seq: int) -> Event:
    event = store.get_event(SID, seq)
    assert event is not None, f"seq {seq} was not stored"
    return event


def test_user_message_row_has_role_source_hash_time_and_text(store: SQLiteMemoryStore) -> None:
    """A user message keeps its text, role, source, epoch-ms time and a hash of the text."""
    report = capture_event(
        store, SID, user(5, "  Keep p95 under 200 ms\r\nwhen warm  "), CONFIG, clock=fixed_clock
    )
    assert (report.inserted, report.duplicates, report.error_count) == (1, 0, 0)
    event = stored(store, 5)
    assert event.text == "Keep p95 under 200 ms\nwhen warm"
    assert event.role == "user"
    assert event.source_kind == "user"
    assert event.time == "1796004637005"
    assert event.content_hash == sha256_hex(event.text)
    assert event.store == "host"
    assert event.ingested_at == fixed_clock()
    assert is_user_input(event) and not is_generated(event)


@pytest.mark.parametrize(
    "text",
    [
        "预算不超过3000元（含税），下周五之前交付。",
        "请把 cache TTL 改成 300s，不要超过 p95 200 ms 的目标",
        "日本語のテキストと한국어 mixed with English — ok?",
        "emoji 🙂 and combining e\u0301 → é",
    ],
)
def test_cjk_and_mixed_text_round_trips(store: SQLiteMemoryStore, text: str) -> None:
    """Chinese and mixed-language text comes back exactly as normalized, and is searchable."""
    capture_event(store, SID, user(1, text), CONFIG)
    event = stored(store, 1)
    assert event.text == normalize_text(text)
    term = "3000元" if "3000元" in text else event.text[:2]
    assert [hit.event.seq for hit in store.search_events(SID, [term])] == [1]


def test_source_kind_absent_counts_as_user_input(store: SQLiteMemoryStore) -> None:
    """A user message with no source is user input; a steer message is too."""
    capture_batch(
        store, SID, [user(1, "no source", kind=None), user(2, "steer", kind="steer")], CONFIG
    )
    assert stored(store, 1).source_kind is None
    assert is_user_input(stored(store, 1)) and is_user_input(stored(store, 2))


@pytest.mark.parametrize("kind", sorted(GENERATED_SOURCE_KINDS))
def test_every_generated_source_kind_is_captured_but_is_not_user_input(
    store: SQLiteMemoryStore, kind: str
) -> None:
    """Generated messages are stored for audit, flagged generated, never user input."""
    extra = {"plugin": "compact", "form": "snapshot"} if kind == "plugin" else {"form": "snapshot"}
    report = capture_event(
        store, SID, user(3, f"注入的上下文 from {kind}", kind=kind, **extra), CONFIG
    )
    assert report.inserted == 1
    event = stored(store, 3)
    assert event.source_kind == kind
    assert is_generated(event)
    assert not is_user_input(event)


def test_plugin_source_keeps_plugin_name_and_form(store: SQLiteMemoryStore) -> None:
    """DSH `plugin` sources record which plugin (and form) produced the text."""
    capture_batch(
        store,
        SID,
        [
            user(1, "summary", kind="plugin", plugin="compact", compactionId="c1"),
            user(2, "snap", kind="plugin", plugin="recall", form="recall"),
        ],
        CONFIG,
    )
    assert stored(store, 1).source_form == "compact"
    assert stored(store, 2).source_form == "recall/recall"


def test_assistant_message_and_tool_call(store: SQLiteMemoryStore) -> None:
    """Assistant text is flattened from blocks; tool-call arguments become compact JSON."""
    events = [
        {
            "type": "assistant/message",
            "seq": 12,
            "time": 1,
            "data": {
                "turn": 1,
                "step": 2,
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "reasoning", "text": "思考一下"},
                        {"type": "text", "text": "Hello."},
                        {
                            "type": "tool-call",
                            "id": "c1",
                            "name": "read",
                            "arguments": '{"path": "a.py"}',
                        },
                    ],
                    "source": {"kind": "model", "provider": "deepseek-official", "model": "v4"},
                },
                "usage": {"inputTokens": 11, "outputTokens": 5},
            },
        },
        {
            "type": "tool/call",
            "seq": 13,
            "data": {
                "turn": 1,
                "step": 2,
                "callId": "c1",
                "name": "read",
                "arguments": '{ "path" : "目录/a.py", "n": 3 }',
            },
        },
        {
            "type": "tool/call",
            "seq": 14,
            "data": {
                "turn": 1,
                "step": 2,
                "callId": "c2",
                "name": "bash",
                "arguments": {"cmd": "ls -la"},
            },
        },
    ]
    capture_batch(store, SID, events, CONFIG)
    message = stored(store, 12)
    assert message.text == '思考一下\nHello.\nread {"path":"a.py"}'
    assert (message.role, message.source_kind, message.turn, message.step) == (
        "assistant",
        "model",
        1,
        2,
    )
    call = stored(store, 13)
    assert call.text == '{"path":"目录/a.py","n":3}'
    assert (call.tool_name, call.call_id, call.role) == ("read", "c1", "assistant")
    assert json.loads(call.text) == {"path": "目录/a.py", "n": 3}
    assert stored(store, 14).text == '{"cmd":"ls -la"}'


def test_tool_results_with_block_lists_and_strings(store: SQLiteMemoryStore) -> None:
    """Tool results flatten nested block lists and plain string content, keeping the call id."""

    def result(seq: int, content: Any) -> dict[str, Any]:
        message = {
            "id": f"t{seq}",
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": f"call-{seq}",
                    "content": content,
                    "isError": False,
                }
            ],
            "source": {"kind": "tool", "callId": f"call-{seq}"},
        }
        return {
            "type": "tool/result",
            "seq": seq,
            "data": {"turn": 2, "step": 1, "message": message},
        }

    blocks = [{"type": "text", "text": "line one"}, {"type": "text", "text": "第二行：端口 8080"}]
    capture_batch(store, SID, [result(20, blocks), result(21, "plain output 输出")], CONFIG)
    first, second = stored(store, 20), stored(store, 21)
    assert first.text == "line one\n第二行：端口 8080"
    assert (first.role, first.source_kind, first.call_id) == ("tool", "tool", "call-20")
    assert second.text == "plain output 输出"
    assert [hit.event.seq for hit in store.search_events(SID, ["8080"])] == [20]


def test_compaction_summary_is_archived_and_marked_generated(store: SQLiteMemoryStore) -> None:
    """A compaction summary is stored, archived under seq:<n>, and never counts as user evidence."""
    summary = {
        "type": "compaction/summary",
        "seq": 30,
        "time": 9,
        "data": {
            "compactionId": "c1",
            "summary": [{"type": "text", "text": "用户要求预算不超过3000元；keep port 8080"}],
            "shadowedRange": {"start": 4, "end": 20},
        },
    }
    report = capture_event(store, SID, summary, CONFIG)
    assert report.archived == 1
    event = stored(store, 30)
    assert event.store == "archive"
    assert is_generated(event)
    archived = store.get_archive(SID, "seq:30")
    assert archived is not None and archived.text == event.text


def test_long_text_is_cut_flagged_and_archived_up_to_the_archive_limit(
    store: SQLiteMemoryStore,
) -> None:
    """Text past 20 000 chars is cut and flagged; the archive keeps up to archive.maxCharsPerEvent."""
    config = load_config({"archive": {"maxCharsPerEvent": 50_000}})
    text = "长文本 long text " * 8000  # ~112 000 characters
    capture_event(store, SID, user(1, text), config)
    event = stored(store, 1)
    assert event.truncated and len(event.text) == MAX_EVENT_TEXT
    assert event.text == normalize_text(text)[:MAX_EVENT_TEXT]
    assert event.store == "archive"
    archived = store.get_archive(SID, "seq:1")
    assert archived is not None and archived.text == normalize_text(text)[:50_000]


def test_short_text_is_not_archived(store: SQLiteMemoryStore) -> None:
    """Ordinary messages stay in the host log only: no archive row."""
    capture_event(store, SID, user(1, "short"), CONFIG)
    assert store.get_archive(SID, "seq:1") is None
    assert stored(store, 1).truncated is False


def test_markers_without_text_have_store_none(store: SQLiteMemoryStore) -> None:
    """Turn and step markers are stored with their numbers and store='none'."""
    events = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 2, "data": {"turn": 1, "step": 0}},
        {
            "type": "turn/end",
            "seq": 2,
            "time": 3,
            "data": {"turn": 1, "reason": {"kind": "completed"}},
        },
        {
            "type": "turn/end",
            "seq": 3,
            "data": {"turn": 2, "reason": {"kind": "error", "error": {"message": "429 限流"}}},
        },
    ]
    capture_batch(store, SID, events, CONFIG)
    assert (stored(store, 1).turn, stored(store, 1).step, stored(store, 1).store) == (1, 0, "none")
    assert stored(store, 2).text == "" and stored(store, 2).store == "none"
    assert stored(store, 3).text == "429 限流"


def test_bookkeeping_types_carry_their_readable_text(store: SQLiteMemoryStore) -> None:
    """Commands, titles, todos, plan mode and queued inbox messages keep their readable part."""
    events = [
        {
            "type": "command/run",
            "seq": 0,
            "data": {
                "commandId": "k",
                "name": "compact",
                "args": " now",
                "source": {"kind": "user"},
            },
        },
        {
            "type": "command/done",
            "seq": 1,
            "data": {"commandId": "k", "kind": "error", "text": "失败了"},
        },
        {
            "type": "session/title",
            "seq": 2,
            "data": {"title": "部署计划", "messageSeqs": [0], "source": {"kind": "fallback"}},
        },
        {
            "type": "todo/write",
            "seq": 3,
            "data": {"todos": [{"content": "写测试", "status": "in_progress"}]},
        },
        {"type": "plan/mode", "seq": 4, "data": {"active": True}},
        {
            "type": "agent/inbox/spliced",
            "seq": 5,
            "data": {
                "target": "next-turn",
                "start": 0,
                "inserted": [user(9, "排队的消息")["data"]],
            },
        },
        {
            "type": "request/header",
            "seq": 6,
            "data": {"header": {"system": "You are...", "tools": []}, "reason": "initial"},
        },
    ]
    report = capture_batch(store, SID, events, CONFIG)
    assert report.inserted == 7 and report.unknown_types == 0
    assert (stored(store, 0).text, stored(store, 0).role) == ("/compact now", "command")
    assert stored(store, 1).text == "失败了"
    assert stored(store, 2).text == "部署计划"
    assert stored(store, 3).text == "[in_progress] 写测试"
    assert stored(store, 4).text == "plan mode on"
    inbox = stored(store, 5)
    assert (inbox.text, inbox.source_kind) == ("排队的消息", "user")
    assert not is_user_input(inbox), "a queued copy must not be extracted twice"
    assert stored(store, 6).store == "none", "the system prompt is not conversation evidence"


def test_packed_chunk_rows_expand_to_one_row_per_seq_like_the_live_stream() -> None:
    """A packed row from a log and the same deltas delivered live give identical rows."""
    packed = [
        {
            "type": "text-chunks",
            "seq0": 4,
            "time0": 104,
            "data": {
                "turn": 1,
                "step": 1,
                "index": 0,
                "dt": [1, 2],
                "texts": ["你好", "wor", "ld"],
            },
        },
        {
            "type": "tool-call-chunks",
            "seq0": 7,
            "time0": 200,
            "data": {
                "turn": 1,
                "step": 1,
                "index": 1,
                "id": "c9",
                "name": "bash",
                "dt": [5],
                "args": ['{"cmd":', '"ls"}'],
            },
        },
        {
            "type": "reasoning-chunks",
            "seq0": 9,
            "time0": 300,
            "data": {"turn": 1, "step": 1, "index": 2, "dt": [], "texts": ["想"]},
        },
    ]

    def chunk(seq: int, time: int, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "assistant/chunk",
            "seq": seq,
            "time": time,
            "data": {"turn": 1, "step": 1, "chunk": body},
        }

    live = [
        chunk(4, 104, {"type": "text-delta", "index": 0, "text": "你好"}),
        chunk(5, 105, {"type": "text-delta", "index": 0, "text": "wor"}),
        chunk(6, 107, {"type": "text-delta", "index": 0, "text": "ld"}),
        chunk(
            7,
            200,
            {
                "type": "tool-call-delta",
                "index": 1,
                "id": "c9",
                "name": "bash",
                "argumentsDelta": '{"cmd":',
            },
        ),
        chunk(
            8,
            205,
            {
                "type": "tool-call-delta",
                "index": 1,
                "id": "c9",
                "name": "bash",
                "argumentsDelta": '"ls"}',
            },
        ),
        chunk(9, 300, {"type": "reasoning-delta", "index": 2, "text": "想"}),
    ]
    rows = []
    for events in (packed, live):
        with SQLiteMemoryStore(":memory:") as handle:
            report = capture_batch(handle, SID, events, CONFIG, clock=fixed_clock)
            assert (report.inserted, report.error_count) == (6, 0)
            rows.append(list(handle.export_rows("events")))
    assert rows[0] == rows[1]
    by_seq = {row["seq"]: row for row in rows[0]}
    assert [by_seq[seq]["time"] for seq in range(4, 10)] == [
        "104",
        "105",
        "107",
        "200",
        "205",
        "300",
    ]
    assert by_seq[8]["tool_name"] == "bash" and by_seq[8]["call_id"] == "c9"
    assert by_seq[9]["source_form"] == "reasoning-delta"


def test_unknown_types_are_stored_and_counted(store: SQLiteMemoryStore) -> None:
    """An unknown type is stored with its type and its data as stable JSON, and counted."""
    events = [
        {"type": "future/thing", "seq": 1, "data": {"b": "乙", "a": [1, 2]}, "ignorable": True},
        {"type": "future/thing", "seq": 2, "data": {}},
        {
            "type": "session-log-deepseek/delivery-accepted",
            "seq": 3,
            "data": {"sessionId": SID, "throughSeq": 2},
        },
    ]
    report = capture_batch(store, SID, events, CONFIG)
    assert report.inserted == 3
    assert report.unknown_types == 2 and report.unknown_by_type == (("future/thing", 2),)
    assert stored(store, 1).type == "future/thing"
    assert stored(store, 1).text == '{"a":[1,2],"b":"乙"}'


def test_checkpoint_advances_monotonically_and_session_is_created(store: SQLiteMemoryStore) -> None:
    """last_event_seq only moves forward, and the session row appears on first sight."""
    assert store.get_session(SID) is None
    capture_batch(store, SID, [user(10, "a"), user(12, "b")], CONFIG)
    assert store.get_checkpoint(SID).last_event_seq == 12
    assert store.get_session(SID) is not None
    report = capture_event(store, SID, user(3, "late arrival"), CONFIG)
    assert report.inserted == 1
    assert store.get_checkpoint(SID).last_event_seq == 12
    assert report.last_event_seq == 12


def test_capture_disabled_writes_nothing(store: SQLiteMemoryStore) -> None:
    """capture.enabled = false leaves the store untouched."""
    report = capture_event(store, SID, user(1, "x"), load_config({"capture": {"enabled": False}}))
    assert report.skipped and report.inserted == 0
    assert store.get_event(SID, 1) is None and store.get_session(SID) is None


def test_duplicate_seq_is_ignored_first_write_wins(store: SQLiteMemoryStore) -> None:
    """A seq already stored is never overwritten, whatever the new payload says."""
    capture_event(store, SID, user(1, "original"), CONFIG)
    report = capture_batch(store, SID, [user(1, "changed"), user(1, "again")], CONFIG)
    assert (report.inserted, report.duplicates) == (0, 2)
    assert stored(store, 1).text == "original"


def test_report_is_json_ready(store: SQLiteMemoryStore) -> None:
    """The report converts to plain JSON with every count, for `--json` output and logs."""
    report = capture_batch(
        store, SID, [user(1, "好"), {"seq": 2}, {"type": "x/y", "seq": 3, "data": {}}], CONFIG
    )
    data = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    assert (data["received"], data["inserted"], data["unknown_types"]) == (3, 2, 1)
    assert data["errors"] == [{"index": 1, "seq": 2, "reason": "type is missing"}]
    assert data["last_event_seq"] == 3


@pytest.mark.parametrize("kind", ["skill-catalog", "subagent-report", "webhook", "新插件"])
def test_unknown_plugin_kinds_count_as_generated(kind: str) -> None:
    """A kind no list names yet is still treated as injected context, never as the user."""
    event = Event("s", 1, "user/message", "please use port 9999", source_kind=kind)
    assert is_generated(event)
    assert not is_user_input(event)


@pytest.mark.parametrize("kind", [None, "user", "prompt", "model", "tool"])
def test_conversation_kinds_are_not_generated(kind: str | None) -> None:
    """The user's, the model's and tools' own text is conversation, not injected context."""
    assert not is_generated(Event("s", 1, "user/message", "hi", source_kind=kind))
