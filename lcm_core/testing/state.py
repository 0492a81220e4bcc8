"""Contracts of per-session state: task state, checkpoints and session metadata."""

from __future__ import annotations

import dataclasses

from lcm_core.store.models import Checkpoint, Session, TaskState
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import CHINESE

T0 = "2025-01-01T00:00:00.000+00:00"
T1 = "2025-01-02T00:00:00.000+00:00"
T2 = "2025-01-03T00:00:00.000+00:00"


class StateContract(StoreContractBase):
    """One task state, one checkpoint and one session row per session, replaced on write."""

    def test_task_state_round_trip(self, store: MemoryStore) -> None:
        """a task state comes back with every list and field as written."""
        state = TaskState(
            session_id="s1",
            goal=CHINESE,
            progress=("拆分模块", "write tests"),
            blockers=("waiting on review",),
            open_items=("a", "b", "c"),
            superseded=("old goal",),
            updated_by_seq=12,
            updated_at=T0,
        )
        store.put_task_state(state)
        assert store.get_task_state("s1") == state

    def test_task_state_put_replaces(self, store: MemoryStore) -> None:
        """a second put for a session replaces its task state entirely."""
        store.put_task_state(TaskState("s1", goal="first", progress=("x",), updated_at=T0))
        second = TaskState("s1", goal=None, blockers=("y",), updated_by_seq=3, updated_at=T1)
        store.put_task_state(second)
        assert store.get_task_state("s1") == second

    def test_task_state_missing_and_filled(self, store: MemoryStore) -> None:
        """get_task_state is None for an unknown session; an empty updated_at gets filled."""
        assert store.get_task_state("s1") is None
        store.put_task_state(TaskState("s1", goal="g"))
        stored = store.get_task_state("s1")
        assert stored is not None and stored.updated_at != ""
        assert store.get_task_state("s2") is None

    def test_checkpoint_default(self, store: MemoryStore) -> None:
        """an unknown session's checkpoint is a fresh one with every cursor at -1."""
        fresh = store.get_checkpoint("s1")
        assert dataclasses.replace(fresh, updated_at="") == Checkpoint("s1")
        assert fresh.last_event_seq == fresh.last_extract_seq == fresh.last_assembly_seq == -1

    def test_checkpoint_round_trip_and_replace(self, store: MemoryStore) -> None:
        """a checkpoint comes back as written and a second put replaces it."""
        first = Checkpoint(
            "s1", last_event_seq=4, last_extract_seq=3, last_assembly_seq=2, updated_at=T0
        )
        store.put_checkpoint(first)
        assert store.get_checkpoint("s1") == first
        second = Checkpoint(
            "s1", last_event_seq=9, last_extract_seq=9, last_assembly_seq=8, updated_at=T1
        )
        store.put_checkpoint(second)
        assert store.get_checkpoint("s1") == second
        assert store.get_checkpoint("s2").last_event_seq == -1

    def test_session_round_trip(self, store: MemoryStore) -> None:
        """a session comes back with every field as written."""
        session = Session(
            session_id="s1",
            cwd="/home/用户/proj",
            project="lcm",
            origin="cli",
            dsh_version="1.2.3",
            memory_enabled=False,
            created_at=T0,
            updated_at=T1,
        )
        store.upsert_session(session)
        assert store.get_session("s1") == session
        assert store.get_session("s2") is None

    def test_session_upsert_keeps_created_at(self, store: MemoryStore) -> None:
        """re-upserting a session updates its fields but keeps its first created_at."""
        store.upsert_session(Session("s1", cwd="/a", created_at=T0, updated_at=T0))
        store.upsert_session(Session("s1", cwd="/b", project="p", created_at=T2, updated_at=T2))
        stored = store.get_session("s1")
        assert stored is not None
        assert (stored.cwd, stored.project, stored.created_at, stored.updated_at) == (
            "/b",
            "p",
            T0,
            T2,
        )
        store.upsert_session(Session("s1", cwd="/c"))
        again = store.get_session("s1")
        assert again is not None and again.created_at == T0 and again.cwd == "/c"

    def test_session_upsert_replaces_every_field(self, store: MemoryStore) -> None:
        """re-upserting a session replaces every field but created_at, flags and origin included."""
        store.upsert_session(
            Session(
                "s1", "/a", "p", "cli", "1.0", memory_enabled=True, created_at=T0, updated_at=T0
            )
        )
        second = Session(
            "s1", "/b", "项目", "dsh", "2.0", memory_enabled=False, created_at=T2, updated_at=T1
        )
        store.upsert_session(second)
        assert store.get_session("s1") == dataclasses.replace(second, created_at=T0)
        store.upsert_session(dataclasses.replace(second, memory_enabled=True, updated_at=T2))
        again = store.get_session("s1")
        assert again is not None and again.memory_enabled is True and again.updated_at == T2

    def test_session_timestamps_filled(self, store: MemoryStore) -> None:
        """a session written without timestamps gets both from the store."""
        store.upsert_session(Session("s1"))
        stored = store.get_session("s1")
        assert stored is not None and stored.created_at != "" and stored.updated_at != ""

    def test_sessions_listed_most_recent_first(self, store: MemoryStore) -> None:
        """list_sessions orders sessions by updated_at, newest first."""
        store.upsert_session(Session("s_mid", created_at=T0, updated_at=T1))
        store.upsert_session(Session("s_new", created_at=T0, updated_at=T2))
        store.upsert_session(Session("s_old", created_at=T0, updated_at=T0))
        assert [s.session_id for s in store.list_sessions()] == ["s_new", "s_mid", "s_old"]
        store.upsert_session(
            Session("s_old", created_at=T0, updated_at="2025-02-01T00:00:00.000+00:00")
        )
        assert store.list_sessions()[0].session_id == "s_old"

    def test_sessions_tied_on_update_listed_by_id(self, store: MemoryStore) -> None:
        """sessions updated at the same moment are listed in session id order."""
        for session_id in ("s_b", "s_c", "s_a"):
            store.upsert_session(Session(session_id, created_at=T0, updated_at=T1))
        store.upsert_session(Session("s_z", created_at=T0, updated_at=T2))
        listed = [s.session_id for s in store.list_sessions()]
        assert listed == ["s_z", "s_a", "s_b", "s_c"]

    def test_state_is_per_session(self, store: MemoryStore) -> None:
        """writing one session's task state and checkpoint leaves other sessions alone."""
        store.put_task_state(TaskState("s1", goal="one", updated_at=T0))
        store.put_task_state(TaskState("s2", goal="two", updated_at=T0))
        store.put_checkpoint(Checkpoint("s1", last_event_seq=1, updated_at=T0))
        store.put_checkpoint(Checkpoint("s2", last_event_seq=2, updated_at=T0))
        first, second = store.get_task_state("s1"), store.get_task_state("s2")
        assert first is not None and second is not None
        assert (first.goal, second.goal) == ("one", "two")
        assert store.get_checkpoint("s1").last_event_seq == 1
        assert store.get_checkpoint("s2").last_event_seq == 2
