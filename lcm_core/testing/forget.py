"""Contracts of forgetting: an erased item or event stays as a tombstone with no text left."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lcm_core.store.errors import StoreNotFoundError
from lcm_core.store.models import ArchiveEntry, ItemChange, MemoryEvent
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import make_event, make_item

SECRET = "保险柜密码是 Zanzibar-7731，不要告诉别人"


def _forgotten(item_id: str, session_id: str = "s1") -> MemoryEvent:
    return MemoryEvent(item_id, session_id, "forgotten", actor="user", detail={"reason": "错了"})


class ForgetContract(StoreContractBase):
    """`forget_item` / `forget_event` erase text, keep the row, and leave search for good."""

    def test_forget_item_erases_text_and_keeps_the_row(self, store: MemoryStore) -> None:
        """a forgotten item keeps id, kind, sources and links; content, hash, numbers go."""
        item = make_item(
            "s1",
            SECRET,
            kind="constraint",
            conditions=("不要告诉别人",),
            numbers=({"value": 7731.0, "raw": "7731"},),
            scope={"components": ["保险柜"]},
            source_refs=("seq:4",),
            supersedes=("mem_old",),
            derived_from_seq=4,
        )
        store.insert_item(item)
        gone = store.forget_item(item.id, _forgotten(item.id))
        stored = store.get_item(item.id)
        assert stored == gone
        assert stored is not None and stored.status == "forgotten"
        assert (stored.content, stored.content_hash) == ("", "")
        assert (stored.conditions, stored.numbers, stored.scope) == ((), (), {})
        assert (stored.id, stored.kind, stored.source_refs) == (item.id, "constraint", ("seq:4",))
        assert (stored.supersedes, stored.derived_from_seq) == (("mem_old",), 4)

    def test_forget_item_appends_who_when_why(self, store: MemoryStore) -> None:
        """forgetting appends one `forgotten` lifecycle row with actor, time and reason."""
        item, _ = store.insert_item(make_item("s1", SECRET))
        store.forget_item(item.id, _forgotten(item.id))
        rows = store.list_memory_events(memory_id=item.id)
        assert [r.event for r in rows] == ["created", "forgotten"]
        assert rows[-1].actor == "user" and rows[-1].detail == {"reason": "错了"}
        assert rows[-1].at != ""

    def test_forgotten_item_is_never_found(self, store: MemoryStore) -> None:
        """no term of a forgotten item's text finds it, whatever statuses are asked for."""
        item, _ = store.insert_item(make_item("s1", SECRET))
        store.insert_item(make_item("s1", "保险柜在二楼"))
        store.forget_item(item.id, _forgotten(item.id))
        statuses = ("active", "forgotten")
        for session in ("s1", None):
            for term in ("Zanzibar", "密码", "7731"):
                hits = store.search_items(session, [term], statuses=statuses)
                assert [h.item.id for h in hits] == [], (session, term)
        assert [h.item.content for h in store.search_items("s1", ["保险柜"])] == ["保险柜在二楼"]

    def test_forget_unknown_item_raises(self, store: MemoryStore) -> None:
        """forget_item of an id never stored raises StoreNotFoundError."""
        with pytest.raises(StoreNotFoundError):
            store.forget_item("mem_missing", _forgotten("mem_missing"))

    def test_tombstone_does_not_block_the_same_text_again(self, store: MemoryStore) -> None:
        """a new active item may hold text equal to a forgotten one, under its own id."""
        item, _ = store.insert_item(make_item("s1", SECRET))
        other, _ = store.insert_item(make_item("s1", "another secret"))
        store.forget_item(item.id, _forgotten(item.id))
        store.forget_item(other.id, _forgotten(other.id))  # two tombstones, both hash ''
        again, created = store.insert_item(make_item("s1", SECRET, item_id="mem_again"))
        assert created and again.id == "mem_again"

    def test_forget_event_erases_text_and_archive(self, store: MemoryStore) -> None:
        """a forgotten event keeps seq, type and time; its text, hash and archive go."""
        store.insert_events(
            [
                make_event("s1", 3, "保险柜在二楼"),
                make_event("s1", 4, SECRET, time="2025-01-02T03:04:05Z", store="archive"),
            ]
        )
        store.put_archive(ArchiveEntry("s1", "seq:4", SECRET))
        gone = store.forget_event("s1", 4)
        stored = store.get_event("s1", 4)
        assert stored == gone
        assert stored is not None and (stored.text, stored.content_hash) == ("", "")
        assert (stored.store, stored.truncated) == ("forgotten", False)
        assert (stored.type, stored.time) == ("user/message", "2025-01-02T03:04:05Z")
        assert store.get_archive("s1", "seq:4") is None
        other = store.get_event("s1", 3)
        assert other is not None and other.text == "保险柜在二楼"

    def test_forgotten_event_is_never_found(self, store: MemoryStore) -> None:
        """no term of a forgotten event's text finds it, in its session or across sessions."""
        store.insert_events([make_event("s1", 3, "保险柜在二楼"), make_event("s1", 4, SECRET)])
        store.forget_event("s1", 4)
        for session in ("s1", None):
            for term in ("Zanzibar", "密码", "7731"):
                assert store.search_events(session, [term]) == [], (session, term)
        assert [h.event.seq for h in store.search_events("s1", ["保险柜"])] == [3]

    def test_a_tombstone_event_is_stored_as_given(self, store: MemoryStore) -> None:
        """inserting a forgotten event (an import of one) keeps its empty text and hash."""
        tomb = make_event("s1", 4, "", store="forgotten")
        assert store.insert_event(replace(tomb, text=""))
        stored = store.get_event("s1", 4)
        assert stored is not None and (stored.text, stored.content_hash) == ("", "")
        assert stored.store == "forgotten"

    def test_forget_unknown_event_is_none(self, store: MemoryStore) -> None:
        """forget_event of a seq never stored returns None and changes nothing."""
        store.insert_event(make_event("s1", 1, SECRET))
        assert store.forget_event("s1", 2) is None
        assert store.forget_event("s2", 1) is None
        kept = store.get_event("s1", 1)
        assert kept is not None and kept.text == SECRET

    def test_forget_is_undone_with_its_transaction(self, store: MemoryStore) -> None:
        """a forget inside a failed outer transaction leaves item, event and archive whole."""
        item, _ = store.insert_item(make_item("s1", SECRET))
        store.insert_event(make_event("s1", 4, SECRET))
        store.put_archive(ArchiveEntry("s1", "seq:4", SECRET))
        with pytest.raises(RuntimeError), store.transaction():
            store.forget_item(item.id, _forgotten(item.id))
            store.forget_event("s1", 4)
            raise RuntimeError("boom")
        back = store.get_item(item.id)
        event = store.get_event("s1", 4)
        assert back is not None and back.content == SECRET and back.status == "active"
        assert event is not None and event.text == SECRET
        assert store.get_archive("s1", "seq:4") is not None
        assert [h.item.id for h in store.search_items("s1", ["Zanzibar"])] == [item.id]
        assert [h.event.seq for h in store.search_events("s1", ["Zanzibar"])] == [4]

    def test_memory_events_filtered_by_name(self, store: MemoryStore) -> None:
        """list_memory_events(events=...) keeps only those lifecycle rows; () keeps none."""
        item, _ = store.insert_item(make_item("s1", "用 tabs 缩进"))
        for name in ("pinned", "unpinned", "pinned"):
            store.update_item(item.id, ItemChange(), MemoryEvent(item.id, "s1", name, actor="user"))
        pins = store.list_memory_events(session_id="s1", events=("pinned", "unpinned"))
        assert [r.event for r in pins] == ["pinned", "unpinned", "pinned"]
        assert store.list_memory_events(session_id="s1", events=()) == []
        assert [r.event for r in store.list_memory_events(events=("created",))] == ["created"]
