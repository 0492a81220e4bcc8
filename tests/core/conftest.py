"""Fixtures of tests/core: a scripted-session builder over a fresh in-memory reference store.

Helpers live here as fixtures because pytest runs with `--import-mode=importlib`, where
test modules cannot import sibling helper modules.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import Event, ItemChange, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.builders import lifecycle, make_item


@dataclass
class Script:
    """Writes a scripted session through the port: events, items, corrections, disputes."""

    store: MemoryStore
    session_id: str = "sess"

    def event(self, seq: int, type: str, text: str, **fields: Any) -> Event:
        event = Event(session_id=self.session_id, seq=seq, type=type, text=text, **fields)
        self.store.insert_event(event)
        return event

    def user(self, seq: int, text: str, **fields: Any) -> Event:
        """A message the user typed."""
        fields.setdefault("role", "user")
        fields.setdefault("source_kind", "user")
        return self.event(seq, "user/message", text, **fields)

    def assistant(self, seq: int, text: str, **fields: Any) -> Event:
        return self.event(seq, "assistant/message", text, role="assistant", **fields)

    def tool(self, seq: int, text: str, **fields: Any) -> Event:
        """Tool output: untrusted input."""
        return self.event(seq, "tool/result", text, role="tool", **fields)

    def item(
        self, content: str, seqs: Iterable[int] = (), *, kind: str = "fact", **fields: Any
    ) -> MemoryItem:
        """An item citing the given event seqs."""
        seq_list = sorted(seqs)
        fields.setdefault("derived_from_seq", seq_list[-1] if seq_list else None)
        refs = tuple(f"seq:{seq}" for seq in seq_list)
        made = make_item(self.session_id, content, kind=kind, source_refs=refs, **fields)
        stored, _ = self.store.insert_item(made)
        return stored

    def correct(self, old: MemoryItem, content: str, seq: int, **fields: Any) -> MemoryItem:
        """Supersede `old` by a new item from event `seq`, linked both ways."""
        new = self.item(content, [seq], kind=old.kind, supersedes=(old.id,), **fields)
        change = ItemChange(status="superseded", superseded_by=new.id)
        self.store.update_item(old.id, change, lifecycle(old, "superseded", by=new.id))
        return new

    def dispute(self, *items: MemoryItem) -> None:
        """Mark items as a conflict the user has not resolved."""
        for one in items:
            self.store.update_item(
                one.id, ItemChange(status="disputed"), lifecycle(one, "disputed")
            )


@pytest.fixture
def new_script() -> Iterator[Callable[..., Script]]:
    """A factory of scripts, each over its own fresh store (closed afterwards).

    The store is the in-memory reference store unless the test hands in another.
    """
    stores: list[MemoryStore] = []

    def make(session_id: str = "sess", store: MemoryStore | None = None) -> Script:
        store = store if store is not None else InMemoryStore()
        stores.append(store)
        return Script(store, session_id)

    yield make
    for store in stores:
        with contextlib.suppress(Exception):  # a test may have closed it on purpose
            store.close()


@pytest.fixture
def script(new_script: Callable[[str], Script]) -> Script:
    """One scripted session, id `sess`, over a fresh store."""
    return new_script("sess")


DAY_MS = 86_400_000
START_MS = 1_796_000_000_000


def _say(
    store: MemoryStore, session: str, *texts: str, day: int = 0, cwd: str = "/w/app"
) -> list[Event]:
    """The user says `texts` in `session` of the project at `cwd` on `day`; extraction runs."""
    from lcm_core.capture.project import record_project
    from lcm_core.config import load_config
    from lcm_core.extraction.run import run_extraction

    record_project(store, session, cwd)
    last = store.max_event_seq(session)
    first = 0 if last is None else last + 1
    events = [
        Event(
            session_id=session,
            seq=first + offset,
            type="user/message",
            text=text,
            role="user",
            source_kind="user",
            time=str(START_MS + day * DAY_MS + (first + offset) * 1000),
        )
        for offset, text in enumerate(texts)
    ]
    store.insert_events(events)
    report = run_extraction(store, session, load_config())
    assert report.errors == []
    return events


@pytest.fixture
def say() -> Callable[..., list[Event]]:
    """`say(store, session, *texts, day=0, cwd="/w/app")`: user messages of a project's
    session, dated `day` days in, stored and extracted."""
    return _say


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load_benchmark(name: str) -> ModuleType:
    """benchmarks/<name>.py imported as a module (benchmarks/ is a folder of scripts)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def benchmark_script() -> Callable[[str], ModuleType]:
    """Loads a script of benchmarks/ by name, for the tests of that script."""
    return _load_benchmark
