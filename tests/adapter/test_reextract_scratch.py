"""Re-extraction derives into a scratch store of the main store's kind (or the core's
reference store), never into an SQLite file whatever the store is, and derives alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.steps import reextract as core_reextract
from lcm_core.store import registry
from lcm_core.store.base import BaseStore
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.memory.keyed import KeyedRowsMixin
from lcm_core.store.models import Event, Session
from lcm_core.store.ports import MemoryStore, SupportsScratch
from lcm_core.testing.builders import make_item
from lcm_store_sqlite import SQLiteMemoryStore

try:
    from lcm_store_duckdb import DuckDBMemoryStore
except ImportError:  # the py env has no duckdb extra; `tox -e duckdb` runs its cases
    DuckDBMemoryStore = None  # type: ignore[assignment,misc]

SESSION = "s-scratch"
TEXTS = (
    "Never push to main on Fridays.",
    "The staging database listens on port 6432.",
    "测试环境的数据库在 db-test-01。",
    "Correction: the staging database listens on port 5433, not 6432.",
)

# A store whose backend has no in-memory twin (as a server backend): the reference
# store's methods, but for `scratch`.
NoTwin = type(
    "NoTwin",
    (KeyedRowsMixin, BaseStore),
    {k: v for k, v in vars(InMemoryStore).items() if k not in ("scratch", "__dict__")},
)

KINDS: dict[str, Callable[[Path], MemoryStore]] = {
    "sqlite": lambda tmp: SQLiteMemoryStore(tmp / "m.sqlite"),
    "reference": lambda tmp: InMemoryStore(),
    "no-twin": lambda tmp: NoTwin(),
}
SCRATCH: dict[str, type] = {
    "sqlite": SQLiteMemoryStore,
    "reference": InMemoryStore,
    "no-twin": InMemoryStore,
}
if DuckDBMemoryStore is not None:
    KINDS["duckdb"] = lambda tmp: DuckDBMemoryStore(tmp / "m.duckdb")
    SCRATCH["duckdb"] = DuckDBMemoryStore


def _old_session(store: MemoryStore) -> None:
    """A session whose items the old rules made: one decision that is navigation."""
    store.upsert_session(Session(SESSION))
    store.insert_events(
        Event(SESSION, seq, "user/message", text, role="user", source_kind="user")
        for seq, text in enumerate(TEXTS)
    )
    store.insert_item(
        make_item(
            SESSION, "the staging database listens on port 5433, not 6432", kind="decision",
            extractor="lcm-rules@1", derived_from_seq=3,
        )
    )  # fmt: skip


def _reextract(kind: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[type]]:
    used: list[type] = []

    def spy(store: MemoryStore) -> MemoryStore:
        made = registry.scratch_store(store)
        used.append(type(made))
        return made

    def no_url(url: str) -> MemoryStore:
        raise AssertionError(f"re-extraction opened a store by URL: {url}")

    monkeypatch.setattr(core_reextract, "scratch_store", spy)
    monkeypatch.setattr(registry, "open_store", no_url)
    store = KINDS[kind](tmp)
    try:
        _old_session(store)
        report = core_reextract.reextract(store, load_config(), SESSION)[0]
        items = sorted((i.content, i.kind, i.status) for i in store.list_items(SESSION))
    finally:
        store.close()
    return (report.before, report.after, report.changes, report.errors, items), used


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_scratch_store_is_of_the_stores_kind(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite and DuckDB derive into an in-memory store of their own; a backend without
    one (a server) into the core's reference store; none opens anything by URL."""
    _, used = _reextract(kind, tmp_path, monkeypatch)
    assert used == [SCRATCH[kind]]
    other = KINDS[kind](tmp_path / "x")
    try:
        assert isinstance(other, SupportsScratch) == (kind != "no-twin")
    finally:
        other.close()


def test_every_kind_derives_the_same_items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same session re-extracted on each kind of store gives the same report and items."""
    results = {}
    for kind in KINDS:
        folder = tmp_path / kind
        folder.mkdir()
        results[kind], _ = _reextract(kind, folder, monkeypatch)
    first = results["sqlite"]
    assert first[3] == []  # no errors
    assert ("测试环境的数据库在 db-test-01", "fact", "active") in first[4]
    assert all(result == first for result in results.values()), results
