"""Contracts of the event log: idempotent inserts, reads by seq, truncation and hashing."""

from __future__ import annotations

import dataclasses

from lcm_core.store.models import MAX_EVENT_TEXT, Event
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import CHINESE, MIXED, make_event
from lcm_core.text.tokens import sha256_hex


class EventContract(StoreContractBase):
    """Event writes are insert-or-ignore on (session_id, seq); reads come back in seq order."""

    def test_insert_event_reports_new_row(self, store: MemoryStore) -> None:
        """insert_event returns True for a new (session_id, seq) and the event can be read back."""
        assert store.insert_event(make_event("s1", 0, "hello")) is True
        stored = store.get_event("s1", 0)
        assert stored is not None
        assert (stored.session_id, stored.seq, stored.text) == ("s1", 0, "hello")

    def test_second_insert_same_key_changes_nothing(self, store: MemoryStore) -> None:
        """a second insert of the same (session_id, seq) changes nothing, even with different text."""
        store.insert_event(make_event("s1", 4, "original words", role="user"))
        before = store.get_event("s1", 4)
        again = make_event("s1", 4, "rewritten words", role="assistant", type="assistant/message")
        assert store.insert_event(again) is False
        assert store.get_event("s1", 4) == before
        assert len(store.list_events("s1")) == 1

    def test_batch_insert_counts_only_new_rows(self, store: MemoryStore) -> None:
        """insert_events returns how many events were new and ignores known keys, whatever their text."""
        store.insert_event(make_event("s1", 1, "kept text"))
        batch = [make_event("s1", 0), make_event("s1", 1, "other text"), make_event("s1", 2)]
        assert store.insert_events(batch) == 2
        assert store.get_event("s1", 1) is not None
        assert store.get_event("s1", 1).text == "kept text"  # type: ignore[union-attr]
        assert store.insert_events(batch) == 0
        assert [e.seq for e in store.list_events("s1")] == [0, 1, 2]

    def test_batch_with_repeated_key_keeps_first(self, store: MemoryStore) -> None:
        """a batch holding the same key twice stores it once, with the text that came first."""
        batch = [make_event("s1", 3, "first copy"), make_event("s1", 3, "second copy")]
        assert store.insert_events(batch) == 1
        stored = store.get_event("s1", 3)
        assert stored is not None and stored.text == "first copy"

    def test_empty_batch_inserts_nothing(self, store: MemoryStore) -> None:
        """insert_events of an empty iterable returns 0 and stores nothing."""
        assert store.insert_events([]) == 0
        assert store.list_events("s1") == []

    def test_same_text_at_new_seq_is_a_new_event(self, store: MemoryStore) -> None:
        """identity is (session_id, seq), not content: repeated text at a new seq is stored again."""
        assert store.insert_event(make_event("s1", 0, "ok")) is True
        assert store.insert_event(make_event("s1", 1, "ok")) is True
        assert store.insert_events([make_event("s1", 2, "ok"), make_event("s1", 3, "ok")]) == 2
        assert [e.text for e in store.list_events("s1")] == ["ok", "ok", "ok", "ok"]

    def test_same_seq_in_other_session_is_a_new_event(self, store: MemoryStore) -> None:
        """the same seq in two sessions names two different events."""
        assert store.insert_event(make_event("s1", 0, "same words")) is True
        assert store.insert_event(make_event("s2", 0, "same words")) is True
        assert store.get_event("s2", 0) is not None

    def test_event_round_trip_keeps_every_field(self, store: MemoryStore) -> None:
        """every field of an event comes back exactly as written, including Chinese text."""
        event = Event(
            session_id="s1",
            seq=7,
            type="tool/result",
            text=MIXED,
            time="2025-01-02T03:04:05.000+00:00",
            turn=3,
            step=2,
            role="tool",
            source_kind="tool",
            source_form="text",
            tool_name="grep",
            call_id="call-1",
            store="archive",
            content_hash=sha256_hex(MIXED),
            truncated=False,
            ingested_at="2025-01-02T03:04:06.000+00:00",
        )
        store.insert_event(event)
        assert store.get_event("s1", 7) == event

    def test_unknown_event_is_none(self, store: MemoryStore) -> None:
        """get_event of a key never written returns None."""
        store.insert_event(make_event("s1", 0))
        assert store.get_event("s1", 1) is None
        assert store.get_event("s2", 0) is None

    def test_list_events_in_seq_order(self, store: MemoryStore) -> None:
        """list_events returns a session's events by ascending seq, whatever the insert order."""
        store.insert_events([make_event("s1", seq) for seq in (5, 1, 9, 3)])
        store.insert_event(make_event("s2", 2))
        assert [e.seq for e in store.list_events("s1")] == [1, 3, 5, 9]

    def test_list_events_range_is_inclusive(self, store: MemoryStore) -> None:
        """start_seq and end_seq bound the listing inclusively, each usable alone."""
        store.insert_events([make_event("s1", seq) for seq in range(10)])
        assert [e.seq for e in store.list_events("s1", start_seq=3, end_seq=6)] == [3, 4, 5, 6]
        assert [e.seq for e in store.list_events("s1", start_seq=8)] == [8, 9]
        assert [e.seq for e in store.list_events("s1", end_seq=1)] == [0, 1]
        assert store.list_events("s1", start_seq=6, end_seq=3) == []

    def test_list_events_type_filter(self, store: MemoryStore) -> None:
        """types keeps only events of the listed types, still in seq order."""
        kinds = ["user/message", "tool/result", "assistant/message", "tool/result"]
        store.insert_events([make_event("s1", i, type=t) for i, t in enumerate(kinds)])
        listed = store.list_events("s1", types=["tool/result"])
        assert [e.seq for e in listed] == [1, 3]
        both = store.list_events("s1", types=["tool/result", "user/message"], start_seq=1)
        assert [e.seq for e in both] == [1, 3]

    def test_list_events_limit_takes_the_first(self, store: MemoryStore) -> None:
        """limit keeps the lowest seqs of the selection."""
        store.insert_events([make_event("s1", seq) for seq in range(6)])
        assert [e.seq for e in store.list_events("s1", limit=2)] == [0, 1]
        assert [e.seq for e in store.list_events("s1", start_seq=2, limit=3)] == [2, 3, 4]
        assert store.list_events("s1", limit=0) == []

    def test_get_events_returns_existing_in_seq_order(self, store: MemoryStore) -> None:
        """get_events returns the named events that exist, in seq order, skipping missing seqs."""
        # Written out of seq order, with types that sort another way.
        kinds = {4: "assistant/message", 0: "user/message", 2: "tool/result", 1: "tool/call"}
        store.insert_events([make_event("s1", seq, type=kind) for seq, kind in kinds.items()])
        store.insert_event(make_event("s1", 3))
        store.insert_event(make_event("s2", 7))
        assert [e.seq for e in store.get_events("s1", [4, 0, 99, 2, 7])] == [0, 2, 4]
        assert store.get_events("s1", []) == []

    def test_max_event_seq(self, store: MemoryStore) -> None:
        """max_event_seq is None for an empty session and the highest seq otherwise."""
        assert store.max_event_seq("s1") is None
        store.insert_events([make_event("s1", seq) for seq in (3, 11, 7)])
        store.insert_event(make_event("s2", 50))
        assert store.max_event_seq("s1") == 11

    def test_text_over_the_limit_is_cut_and_flagged(self, store: MemoryStore) -> None:
        """text longer than MAX_EVENT_TEXT is stored cut to that length with truncated set."""
        text = "ab" * (MAX_EVENT_TEXT // 2) + "tail"
        store.insert_event(make_event("s1", 0, text))
        stored = store.get_event("s1", 0)
        assert stored is not None
        assert stored.text == text[:MAX_EVENT_TEXT]
        assert stored.truncated is True

    def test_text_at_the_limit_is_kept_whole(self, store: MemoryStore) -> None:
        """text of exactly MAX_EVENT_TEXT characters is stored whole and not flagged."""
        text = "x" * MAX_EVENT_TEXT
        store.insert_event(make_event("s1", 0, text))
        stored = store.get_event("s1", 0)
        assert stored is not None
        assert stored.text == text and stored.truncated is False

    def test_limit_counts_characters_not_bytes(self, store: MemoryStore) -> None:
        """the cut counts characters: Chinese text at the limit is whole, one more is cut."""
        whole = "预" * MAX_EVENT_TEXT
        store.insert_events([make_event("s1", 0, whole), make_event("s1", 1, whole + "算")])
        at_limit, over = store.get_event("s1", 0), store.get_event("s1", 1)
        assert at_limit is not None and over is not None
        assert (at_limit.text, at_limit.truncated) == (whole, False)
        assert (over.text, over.truncated) == (whole, True)

    def test_batch_insert_also_truncates(self, store: MemoryStore) -> None:
        """insert_events applies the same cut and flag as insert_event."""
        store.insert_events([make_event("s1", 0, "y" * (MAX_EVENT_TEXT + 5))])
        stored = store.get_event("s1", 0)
        assert stored is not None
        assert len(stored.text) == MAX_EVENT_TEXT and stored.truncated is True

    def test_empty_hash_and_ingest_time_are_filled(self, store: MemoryStore) -> None:
        """an empty content_hash becomes the SHA-256 of the text and ingested_at gets a time."""
        store.insert_event(make_event("s1", 0, CHINESE))
        store.insert_events([make_event("s1", 1, "batch text")])
        first, second = store.get_event("s1", 0), store.get_event("s1", 1)
        assert first is not None and second is not None
        assert first.content_hash == sha256_hex(CHINESE)
        assert second.content_hash == sha256_hex("batch text")
        assert first.ingested_at and second.ingested_at

    def test_multilingual_text_round_trips_exactly(self, store: MemoryStore) -> None:
        """Chinese, emoji and mixed-script text come back byte for byte."""
        texts = [CHINESE, MIXED, "naïve café — 東京 🚀 \t tab\nnewline"]
        store.insert_events([make_event("s1", i, t) for i, t in enumerate(texts)])
        stored = [e.text for e in store.list_events("s1")]
        assert [t.encode("utf-8") for t in stored] == [t.encode("utf-8") for t in texts]

    def test_stored_event_equals_input_plus_filled_fields(self, store: MemoryStore) -> None:
        """the store changes nothing but the fields it is told to fill."""
        event = make_event("s1", 0, "plain", role="user", turn=1)
        store.insert_event(event)
        stored = store.get_event("s1", 0)
        assert stored is not None
        expected = dataclasses.replace(
            event, content_hash=stored.content_hash, ingested_at=stored.ingested_at
        )
        assert stored == expected
