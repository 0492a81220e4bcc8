"""The core's use cases: what every face gets, from one function each."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core import usecases
from lcm_core.config import load_config
from lcm_core.store.models import SCHEMA_VERSION, Session


def test_pick_session_takes_the_named_one_or_the_latest(new_script: Any) -> None:
    """A named session must exist; without a name the most recently updated one is used."""
    script = new_script("旧会话")
    store = script.store
    with pytest.raises(usecases.NoSessionError, match="no sessions"):
        usecases.pick_session(store, None)
    store.upsert_session(Session("旧会话", created_at="2026-01-01", updated_at="2026-01-01"))
    store.upsert_session(Session("new", created_at="2026-02-01", updated_at="2026-02-01"))
    assert usecases.pick_session(store, None) == "new"
    assert usecases.pick_session(store, "旧会话") == "旧会话"
    with pytest.raises(usecases.NoSessionError, match="missing"):
        usecases.pick_session(store, "missing")


def test_search_gives_ranked_items_and_matching_events(script: Any) -> None:
    """Search returns the query's terms, the ranked items and the raw events holding them."""
    script.user(1, "预算不超过3000元, the budget is 3000 yuan")
    item = script.item("预算不超过3000元", [1])
    found = usecases.search(script.store, "sess", "预算是多少 budget", load_config(), 5)
    assert [r.item.id for r in found.items] == [item.id]
    assert [h.event.seq for h in found.events] == [1]
    assert "budget" in found.terms


def test_purge_one_session_or_all(new_script: Any) -> None:
    """purge(None) empties every session; purge(id) only that one."""
    one = new_script("a")
    store = one.store
    one.user(1, "keep me")
    other = new_script("b", store)
    other.user(1, "drop me")
    assert usecases.purge(store, "b")["events"] == 1
    assert store.stats()["events"] == 1
    assert usecases.purge(store, None)["events"] == 1
    assert store.stats()["events"] == 0


def test_capture_and_advance_is_all_or_nothing(script: Any) -> None:
    """A capture that fails leaves neither its rows nor the reader's new position."""

    def failing() -> None:
        script.user(7, "half written")
        raise RuntimeError("the host went away")

    with pytest.raises(RuntimeError):
        usecases.capture_and_advance(script.store, "reader", "offset=10", failing)
    assert script.store.get_meta("reader") is None
    assert script.store.get_event("sess", 7) is None
    usecases.capture_and_advance(script.store, "reader", "offset=10", lambda: script.user(7, "ok"))
    assert script.store.get_meta("reader") == "offset=10"


def test_health_of_a_sound_store(script: Any) -> None:
    """A healthy store reports no problem, its schema and its counts, and keeps no probe row."""
    report = usecases.health(script.store)
    assert report.problems == ()
    assert report.schema_version == SCHEMA_VERSION
    assert script.store.get_meta("doctor.write_probe") is None
