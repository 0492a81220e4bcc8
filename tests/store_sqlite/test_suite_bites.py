"""The conformance suite must fail against stores that each break one contract on purpose."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from lcm_core.store.matching import clean_terms
from lcm_core.store.models import Event, ItemChange, MemoryEvent, MemoryItem
from lcm_core.text.tokens import sha256_hex
from lcm_store_sqlite import SQLiteMemoryStore
from lcm_store_sqlite.like import ascii_fold


class DropsSupersessionLink(SQLiteMemoryStore):
    """Forgets `superseded_by` on every update, so old items never point at their successor."""

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        """Apply the change without its supersession link."""
        return super().update_item(item_id, dataclasses.replace(change, superseded_by=None), event)


class DedupesEventsByHash(SQLiteMemoryStore):
    """Treats an event whose text the session already holds as a duplicate, whatever its seq."""

    def insert_events(self, events: Iterable[Event]) -> int:
        """Insert one by one, each ignored when its content hash is already stored for the
        session (`insert_event` comes here too)."""
        inserted = 0
        with self.transaction():
            for event in events:
                digest = event.content_hash or sha256_hex(event.text)
                if all(e.content_hash != digest for e in self.list_events(event.session_id)):
                    inserted += super().insert_events([event])
        return inserted


class ForgetsFtsEscape(SQLiteMemoryStore):
    """Hands search terms to FTS5 unquoted, so query syntax in a term is interpreted."""

    def _fts_phrase(self, term: str) -> str:
        """Return the term raw instead of as a quoted phrase."""
        return term


class FoldsAsciiOnly(SQLiteMemoryStore):
    """Matches as SQLite's LIKE folds: ASCII letters only, so `été` misses `ÉTÉ`."""

    def _scored(
        self, table: str, session_id: str | None, terms: Sequence[str], among: Any, limit: int
    ) -> list[tuple[Any, float]]:
        """Keep only the hits an ASCII-only fold would find."""
        column = "text" if table == "events" else "content"
        keys = [ascii_fold(term) for term in clean_terms(terms)]
        hits = super()._scored(table, session_id, terms, among, limit)
        return [(row, s) for row, s in hits if any(k in ascii_fold(row[column]) for k in keys)]


RUNNER = """
import importlib.util

import pytest

from lcm_core.testing import StoreContractSuite, StoreRequirements

_spec = importlib.util.spec_from_file_location("lcm_bite_stores", {path!r})
_stores = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stores)


class TestBrokenStore(StoreContractSuite):
    requirements = StoreRequirements(persistent=False)

    @pytest.fixture
    def store_factory(self):
        return lambda: _stores.{name}(":memory:")
"""

# Each broken store and contract tests that must catch it.
CASES = [
    (
        DropsSupersessionLink,
        ["test_supersede_links_both_items"],
    ),
    (
        DedupesEventsByHash,
        ["test_same_text_at_new_seq_is_a_new_event"],
    ),
    (
        FoldsAsciiOnly,
        ["test_items_fold_by_casefold*", "test_events_fold_by_casefold*"],
    ),
    (
        ForgetsFtsEscape,
        ["test_syntax_terms_match_literally_across_sessions*", "test_awkward_terms_never_raise*"],
    ),
]


@pytest.mark.parametrize(("broken", "expected"), CASES, ids=[c[0].__name__ for c in CASES])
def test_suite_catches_broken_store(
    pytester: pytest.Pytester, broken: type[SQLiteMemoryStore], expected: list[str]
) -> None:
    """running the whole suite on a store with one planted bug reports that bug."""
    # In memory, so the runs stay quick; only the two reopen contracts skip.
    source = RUNNER.format(path=str(Path(__file__).resolve()), name=broken.__name__)
    pytester.makepyfile(test_bite=source)
    result = pytester.runpytest_subprocess(
        "-q", "-rf", "--tb=no", "-p", "no:cacheprovider", timeout=300
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) > 0, result.stdout.str()
    assert outcomes.get("passed", 0) > 0, "the broken store should still pass most contracts"
    for name in expected:
        result.stdout.fnmatch_lines([f"FAILED *::TestBrokenStore::{name}*"])
