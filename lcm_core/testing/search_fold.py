"""Contracts of the one search rule (`lcm_core.store.matching`): casefold, and large scopes.

Every store folds text and terms by Unicode casefold, in a session and across sessions
(a large scope, where a SQL backend takes candidates from its index): accented capitals
match their small letters, ß matches ss both ways, Turkish İ folds to i with a dot above
while the dotless ı stays a letter of its own, and CJK and full-width letters match as
the rule says. A large scope yields at least each term's newest matches, so a rare
term's rows are never crowded out by a common term's.
"""

from __future__ import annotations

import pytest

from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import make_event, make_item
from lcm_core.testing.search import event_seqs, item_ids

SUMMER = "ÉTÉ À PARIS, Straße"
# (id, text stored, term searched, found): each pins one consequence of casefold.
FOLD_CASES = [
    ("accent-ete", SUMMER, "été", True),
    ("accent-phrase", SUMMER, "à paris", True),
    ("accent-kept", SUMMER, "ete", False),  # casefold keeps accents
    ("accent-single", SUMMER, "à", True),
    ("eszett-to-ss", SUMMER, "strasse", True),
    ("eszett-to-SS", SUMMER, "STRASSE", True),
    ("eszett-as-is", SUMMER, "straße", True),
    ("ss-to-eszett", "Die STRASSE ist gesperrt", "Straße", True),
    ("capital-eszett", "Die Straße ist gesperrt", "STRAẞE", True),
    ("turkish-capital-dotted", "İstanbul'da buluşalım", "İSTANBUL", True),
    ("turkish-dot-kept", "İstanbul'da buluşalım", "i̇stanbul", True),  # i + U+0307
    ("turkish-dot-not-dropped", "İstanbul'da buluşalım", "istanbul", False),
    ("turkish-dotless-upper", "KIRMIZI kalem", "kırmızı", False),  # I folds to i, not ı
    ("turkish-dotless-lower", "kırmızı kalem", "KIRMIZI", False),
    ("turkish-dotless-as-is", "ılık su", "ılık", True),
    ("turkish-plain-i", "ISPARTA gülleri", "isparta", True),
    ("cjk-mixed", "周五前把 PostgreSQL 迁移到 staging 环境", "postgresql 迁移", True),
    ("cjk-word", "数据库迁移完成", "数据库", True),
    ("cjk-pair", "下周的预算会议", "预算", True),
    ("fullwidth", "ＡＢＣ 公司的预算", "ａｂｃ", True),
    ("fullwidth-not-ascii", "ＡＢＣ 公司的预算", "abc", False),
    ("greek-final-sigma", "Ο ΣΊΣΥΦΟΣ ανεβαίνει", "σίσυφος", True),
]
_PARAMS = [pytest.param(text, term, found, id=name) for name, text, term, found in FOLD_CASES]


class SearchFoldContract(StoreContractBase):
    """Search folds by Unicode casefold in every scope, and large scopes miss no rare term."""

    @pytest.mark.parametrize(("text", "term", "found"), _PARAMS)
    def test_items_fold_by_casefold(
        self, store: MemoryStore, text: str, term: str, found: bool
    ) -> None:
        """an item is found by a term when the term's casefold is in the item's."""
        store.insert_item(make_item("s1", text, item_id="mem_hit"))
        store.insert_item(make_item("s1", "plain filler text", item_id="mem_other"))
        assert item_ids(store.search_items("s1", [term])) == (["mem_hit"] if found else [])

    @pytest.mark.parametrize(("text", "term", "found"), _PARAMS)
    def test_events_fold_by_casefold(
        self, store: MemoryStore, text: str, term: str, found: bool
    ) -> None:
        """an event is found by a term when the term's casefold is in the event's."""
        store.insert_events([make_event("s1", 0, text), make_event("s1", 1, "plain filler")])
        assert event_seqs(store.search_events("s1", [term])) == ([("s1", 0)] if found else [])

    @pytest.mark.parametrize(("text", "term", "found"), _PARAMS)
    def test_large_scopes_fold_by_casefold(
        self, store: MemoryStore, text: str, term: str, found: bool
    ) -> None:
        """with no session given (a search over the whole store), the fold is the same."""
        store.insert_events([make_event("s1", 0, text), make_event("s2", 0, "plain filler")])
        store.insert_item(make_item("s2", text, item_id="mem_hit"))
        store.insert_item(make_item("s1", "plain filler text", item_id="mem_other"))
        assert event_seqs(store.search_events(None, [term])) == ([("s1", 0)] if found else [])
        assert item_ids(store.search_items(None, [term])) == (["mem_hit"] if found else [])

    def test_folded_terms_score_as_written_ones(self, store: MemoryStore) -> None:
        """a term and its other-case spelling find the same rows with the same scores."""
        store.insert_item(make_item("s1", SUMMER, item_id="mem_summer"))
        store.insert_item(make_item("s1", "été en Provence", item_id="mem_provence"))
        upper = store.search_items("s1", ["ÉTÉ", "STRASSE"])
        lower = store.search_items("s1", ["été", "straße"])
        assert [(h.item.id, h.score) for h in upper] == [(h.item.id, h.score) for h in lower]
        assert item_ids(upper) == ["mem_summer", "mem_provence"]

    def test_a_rare_term_is_never_crowded_out(self, store: MemoryStore) -> None:
        """across sessions, a rare term's old row is still scored when hundreds of newer
        rows hold a common term: each term brings its own newest matches."""
        store.insert_item(make_item("s0", "the Straße tram timetable", item_id="mem_rare"))
        for i in range(240):
            store.insert_item(make_item(f"s{i % 7 + 1}", f"tram note {i:03d}"))
        hits = store.search_items(None, ["tram", "strasse"], limit=5)
        assert hits and hits[0].item.id == "mem_rare"
        assert len(hits) == 5
