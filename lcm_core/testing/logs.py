"""Contracts of the logs: assembly logs with retention, validation logs, the retry queue."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from lcm_core.store.models import AssemblyLog, ValidationLog
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import CHINESE

T0 = "2025-01-01T00:00:00.000+00:00"


def assembly(session_id: str, seq: int, **fields: Any) -> AssemblyLog:
    """An assembly log told apart by its message_seq."""
    return AssemblyLog(
        session_id=session_id,
        trigger="pre-step",
        budget_tokens=1000,
        used_tokens=seq,
        message_seq=seq,
        **fields,
    )


class LogContract(StoreContractBase):
    """Logs keep their JSON payloads, list newest first, and assembly logs obey retention."""

    def test_assembly_log_round_trip(self, store: MemoryStore) -> None:
        """an assembly log comes back with every field and JSON payload as written."""
        log = AssemblyLog(
            session_id="s1",
            trigger="pre-step",
            budget_tokens=2000,
            used_tokens=512,
            token_source="meter",
            content_hash="abc123",
            injected=True,
            turn=4,
            step=2,
            message_seq=17,
            sections=({"name": "约束", "tokens": 40, "items": ["mem_a"]},),
            item_ids=("mem_a", "mem_b"),
            omitted=({"id": "mem_c", "reason": "budget"},),
            reasons=({"id": "mem_a", "why": CHINESE, "score": 1.5},),
            errors=("partial: 超时",),
            created_at=T0,
        )
        new_id = store.add_assembly_log(log, retention=10)
        (stored,) = store.list_assembly_logs("s1")
        assert stored.id == new_id
        assert stored == dataclasses.replace(log, id=new_id)

    def test_assembly_log_defaults_round_trip(self, store: MemoryStore) -> None:
        """an assembly log with empty payloads and no hash comes back the same, time filled."""
        store.add_assembly_log(assembly("s1", 1), retention=10)
        (stored,) = store.list_assembly_logs("s1")
        assert (stored.content_hash, stored.sections, stored.errors) == (None, (), ())
        assert stored.injected is False and stored.created_at != ""

    def test_assembly_logs_newest_first(self, store: MemoryStore) -> None:
        """list_assembly_logs returns a session's logs newest first and honours limit."""
        ids = [store.add_assembly_log(assembly("s1", seq), retention=10) for seq in range(4)]
        assert len(set(ids)) == 4
        assert [log.message_seq for log in store.list_assembly_logs("s1")] == [3, 2, 1, 0]
        assert [log.message_seq for log in store.list_assembly_logs("s1", limit=2)] == [3, 2]
        assert [log.id for log in store.list_assembly_logs("s1")] == ids[::-1]

    def test_assembly_retention_keeps_newest(self, store: MemoryStore) -> None:
        """retention N leaves only the session's N newest assembly logs."""
        for seq in range(6):
            store.add_assembly_log(assembly("s1", seq), retention=3)
        assert [log.message_seq for log in store.list_assembly_logs("s1")] == [5, 4, 3]
        store.add_assembly_log(assembly("s1", 6), retention=1)
        assert [log.message_seq for log in store.list_assembly_logs("s1")] == [6]

    def test_assembly_retention_is_per_session(self, store: MemoryStore) -> None:
        """trimming one session's assembly logs leaves other sessions' logs untouched."""
        for seq in range(4):
            store.add_assembly_log(assembly("s2", seq), retention=10)
        for seq in range(5):
            store.add_assembly_log(assembly("s1", seq), retention=2)
        assert [log.message_seq for log in store.list_assembly_logs("s2")] == [3, 2, 1, 0]
        assert [log.message_seq for log in store.list_assembly_logs("s1")] == [4, 3]

    def test_rewriting_reasons_changes_only_those_reasons(self, store: MemoryStore) -> None:
        """rewrite_assembly_log_reasons replaces one row's reasons; the row's other fields
        and every other row stay as written."""
        said = {"kind": "query", "text": CHINESE, "terms": ["预算", "3000"]}
        first = store.add_assembly_log(
            assembly("s1", 1, reasons=(said,), item_ids=("mem_a",), created_at=T0), retention=10
        )
        store.add_assembly_log(assembly("s1", 2, reasons=(said,)), retention=10)
        store.add_assembly_log(assembly("s2", 1, reasons=(said,)), retention=10)
        before = {s: store.list_assembly_logs(s) for s in ("s1", "s2")}
        erased = ({"kind": "query", "text": "", "terms": [], "erased": True},)
        assert store.rewrite_assembly_log_reasons(first, erased) is True
        newer, older = store.list_assembly_logs("s1")
        assert older == dataclasses.replace(before["s1"][1], reasons=erased)
        assert newer == before["s1"][0] and store.list_assembly_logs("s2") == before["s2"]

    def test_rewriting_an_unknown_log_changes_nothing(self, store: MemoryStore) -> None:
        """rewriting the reasons of an id no row has answers False and writes nothing."""
        kept = store.add_assembly_log(assembly("s1", 1, reasons=({"k": 1},)), retention=10)
        assert store.rewrite_assembly_log_reasons(kept + 1000, ({"k": 2},)) is False
        assert [log.reasons for log in store.list_assembly_logs("s1")] == [({"k": 1},)]

    def test_validation_log_round_trip(self, store: MemoryStore) -> None:
        """a validation log comes back with every field and JSON payload as written."""
        log = ValidationLog(
            session_id="s1",
            target="assistant/message",
            ok=False,
            event_seq=9,
            checked=5,
            skipped=1,
            deterministic=False,
            blocked=True,
            violations=({"rule": "r1", "text": "超出预算", "line": 3},),
            errors=("rule r2 unparsable",),
            created_at=T0,
        )
        new_id = store.add_validation_log(log)
        (stored,) = store.list_validation_logs("s1")
        assert stored == dataclasses.replace(log, id=new_id)

    def test_validation_logs_newest_first(self, store: MemoryStore) -> None:
        """list_validation_logs returns one session's logs newest first and honours limit."""
        for seq in range(3):
            store.add_validation_log(ValidationLog("s1", "reply", ok=True, event_seq=seq))
        store.add_validation_log(ValidationLog("s2", "reply", ok=False, event_seq=99))
        listed = store.list_validation_logs("s1")
        assert [log.event_seq for log in listed] == [2, 1, 0]
        assert all(log.created_at != "" for log in listed)
        assert [log.event_seq for log in store.list_validation_logs("s1", limit=1)] == [2]
        assert [log.event_seq for log in store.list_validation_logs("s2")] == [99]

    def test_pending_attempts_grow(self, store: MemoryStore) -> None:
        """recording the same pending event again adds one attempt and keeps the latest error."""
        first = store.record_pending("s1", 4, "timeout")
        assert (first.session_id, first.seq, first.attempts, first.last_error) == (
            "s1",
            4,
            1,
            "timeout",
        )
        store.record_pending("s1", 4, "parse error")
        third = store.record_pending("s1", 4, "解析失败")
        assert (third.attempts, third.last_error) == (3, "解析失败")
        (listed,) = store.list_pending("s1")
        assert (listed.seq, listed.attempts, listed.last_error) == (4, 3, "解析失败")

    def test_pending_retry_refreshes_updated_at(self, store: MemoryStore) -> None:
        """each retry of a pending event moves its updated_at forward; other entries keep theirs."""
        first = store.record_pending("s1", 4, "timeout")
        other = store.record_pending("s1", 5, "timeout")
        time.sleep(0.01)  # timestamps have millisecond resolution
        again = store.record_pending("s1", 4, "timeout")
        assert again.updated_at > first.updated_at
        listed = {p.seq: p.updated_at for p in store.list_pending("s1")}
        assert listed == {4: again.updated_at, 5: other.updated_at}

    def test_pending_listed_by_session_then_seq(self, store: MemoryStore) -> None:
        """list_pending orders entries by session id, then seq, whatever the order recorded."""
        for session_id, seq in (("s2", 1), ("s1", 9), ("s1", 2), ("s10", 0), ("s2", 0)):
            store.record_pending(session_id, seq, "e")
        listed = [(p.session_id, p.seq) for p in store.list_pending()]
        assert listed == [("s1", 2), ("s1", 9), ("s10", 0), ("s2", 0), ("s2", 1)]
        assert [p.seq for p in store.list_pending("s1")] == [2, 9]

    def test_log_limit_zero_lists_nothing(self, store: MemoryStore) -> None:
        """a limit of zero (or less) lists no assembly or validation log."""
        store.add_assembly_log(assembly("s1", 1), retention=10)
        store.add_validation_log(ValidationLog("s1", "reply", ok=True, event_seq=1))
        for limit in (0, -3):
            assert store.list_assembly_logs("s1", limit=limit) == []
            assert store.list_validation_logs("s1", limit=limit) == []
        assert len(store.list_validation_logs("s1", limit=1)) == 1

    def test_pending_listing_and_clear(self, store: MemoryStore) -> None:
        """list_pending filters by session; clear_pending removes exactly one entry."""
        store.record_pending("s1", 1, "e")
        store.record_pending("s1", 2, "e")
        store.record_pending("s2", 1, "e")
        assert sorted((p.session_id, p.seq) for p in store.list_pending()) == [
            ("s1", 1),
            ("s1", 2),
            ("s2", 1),
        ]
        assert sorted(p.seq for p in store.list_pending("s1")) == [1, 2]
        store.clear_pending("s1", 1)
        assert [(p.session_id, p.seq) for p in store.list_pending("s1")] == [("s1", 2)]
        assert [(p.session_id, p.seq) for p in store.list_pending("s2")] == [("s2", 1)]

    def test_clear_unknown_pending_is_harmless(self, store: MemoryStore) -> None:
        """clearing an entry that is not queued changes nothing and does not raise."""
        store.record_pending("s1", 1, "e")
        store.clear_pending("s1", 5)
        store.clear_pending("s9", 1)
        assert [p.seq for p in store.list_pending()] == [1]

    def test_pending_restarts_after_clear(self, store: MemoryStore) -> None:
        """an entry recorded again after being cleared starts from one attempt."""
        store.record_pending("s1", 1, "e")
        store.record_pending("s1", 1, "e")
        store.clear_pending("s1", 1)
        assert store.record_pending("s1", 1, "again").attempts == 1
