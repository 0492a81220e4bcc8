"""Contracts of search input handling: any text is a literal term, short terms still work."""

from __future__ import annotations

import pytest

from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import CHINESE, make_event, make_item
from lcm_core.testing.search import event_seqs, item_ids

# (text stored, term searched): each term is query syntax somewhere, and must match as is.
LITERAL_CASES = [
    ('call a "quoted" NEAR(x) here', '"quoted" NEAR('),
    ("glob pattern foo*bar in config", "foo*bar"),
    ("send the e-mail -now", "e-mail -now"),
    ("set key:value pairs", "key:value"),
    ("rock AND roll", "AND"),
    ("this OR that", "OR"),
    ("do NOT merge", "NOT"),
    ("compute x^2 fast", "x^2"),
    ("it's the user's file", "it's"),
    ("open C:\\temp\\logs today", "C:\\temp\\"),
    ("grew 15% last year", "15%"),
    ("rename snake_case_name", "snake_case"),
    ("a {braced} group", "{braced}"),
    ("call f(x) then g(y)", "f(x)"),
    ("ends with ) paren", ") paren"),
    ("col:NEAR stuff", "col:NEAR"),
]

# Terms that are broken or hostile as query text; searching with them must not raise.
AWKWARD_TERMS = [
    '"',
    '""',
    "*",
    "-",
    "NEAR(",
    "NEAR(a b, 2)",
    "(",
    ")",
    ":",
    "AND",
    "OR",
    "NOT",
    "^",
    "'",
    "\\",
    "%",
    "_",
    "{}",
    "{a b}: c",
    "a OR b AND NOT c",
    '"unbalanced',
    "col:term",
    "term*",
    "-term",
    "+ - * /",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "",
    " ",
    "\t\n ",
    "\u3000",
    "%_\\%",
    "'; DROP TABLE events; --",
    "z" * 5000,
]


class SearchSyntaxContract(StoreContractBase):
    """Search escapes every term: syntax characters are plain text and nothing raises."""

    @pytest.mark.parametrize(("text", "term"), LITERAL_CASES)
    def test_syntax_terms_match_events_literally(
        self, store: MemoryStore, text: str, term: str
    ) -> None:
        """an event containing query-syntax characters is found by exactly that text."""
        store.insert_events([make_event("s1", 0, text), make_event("s1", 1, "plain filler text")])
        assert event_seqs(store.search_events("s1", [term])) == [("s1", 0)]

    @pytest.mark.parametrize(("text", "term"), LITERAL_CASES)
    def test_syntax_terms_match_items_literally(
        self, store: MemoryStore, text: str, term: str
    ) -> None:
        """an item containing query-syntax characters is found by exactly that text."""
        store.insert_item(make_item("s1", text, item_id="mem_hit"))
        store.insert_item(make_item("s1", "plain filler text", item_id="mem_other"))
        assert item_ids(store.search_items("s1", [term])) == ["mem_hit"]

    @pytest.mark.parametrize(("text", "term"), LITERAL_CASES)
    def test_syntax_terms_match_literally_across_sessions(
        self, store: MemoryStore, text: str, term: str
    ) -> None:
        """with no session given (an index-wide search), syntax characters are still literal."""
        store.insert_events([make_event("s1", 0, text), make_event("s2", 0, "plain filler text")])
        store.insert_item(make_item("s2", text, item_id="mem_hit"))
        store.insert_item(make_item("s1", "plain filler text", item_id="mem_other"))
        assert event_seqs(store.search_events(None, [term])) == [("s1", 0)]
        assert item_ids(store.search_items(None, [term])) == ["mem_hit"]

    @pytest.mark.parametrize("term", AWKWARD_TERMS)
    def test_awkward_terms_never_raise(self, store: MemoryStore, term: str) -> None:
        """any term, however malformed, returns a list of hits instead of raising."""
        store.insert_item(make_item("s1", 'odd text: "x" AND (y) 15% snake_case'))
        store.insert_event(make_event("s1", 0, 'odd text: "x" AND (y) 15% snake_case'))
        assert isinstance(store.search_items("s1", [term]), list)
        assert isinstance(store.search_events("s1", [term]), list)
        assert isinstance(store.search_items(None, [term, "odd"]), list)
        assert isinstance(store.search_events(None, ["odd", term]), list)

    def test_very_long_terms_match_literally(self, store: MemoryStore) -> None:
        """a 15 000-character term (a pasted log, say) is found where it occurs, and only there."""
        long_text = "".join(f"line {i}: 预算 ok; " for i in range(1200))[:19_000]
        store.insert_events([make_event("s1", 0, long_text), make_event("s1", 1, "short")])
        store.insert_item(make_item("s1", long_text, item_id="mem_long"))
        term = long_text[2000:17_000]
        assert event_seqs(store.search_events("s1", [term])) == [("s1", 0)]
        assert item_ids(store.search_items("s1", [term])) == ["mem_long"]
        assert store.search_events("s1", [term + "not there"]) == []

    def test_awkward_terms_do_not_hide_good_ones(self, store: MemoryStore) -> None:
        """a query mixing malformed terms with a good one still finds the good one."""
        store.insert_item(make_item("s1", "the invoice total", item_id="mem_inv"))
        store.insert_event(make_event("s1", 0, "the invoice total"))
        terms = ["", "\x00", "\ud800", '"', "NEAR(", "invoice"]
        assert item_ids(store.search_items("s1", terms)) == ["mem_inv"]
        assert event_seqs(store.search_events("s1", terms)) == [("s1", 0)]

    def test_blank_terms_find_nothing(self, store: MemoryStore) -> None:
        """terms that are empty or only whitespace match nothing."""
        store.insert_item(make_item("s1", "some content"))
        store.insert_event(make_event("s1", 0, "some content"))
        for term in ("", " ", "\t\n"):
            assert store.search_items("s1", [term]) == [], repr(term)
            assert store.search_events("s1", [term]) == [], repr(term)

    def test_single_cjk_character_is_found(self, store: MemoryStore) -> None:
        """a one-character Chinese term finds the text containing it."""
        store.insert_item(make_item("s1", CHINESE, item_id="mem_zh"))
        store.insert_item(make_item("s1", "价格另议", item_id="mem_other"))
        store.insert_events([make_event("s1", 0, CHINESE), make_event("s1", 1, "价格另议")])
        assert item_ids(store.search_items("s1", ["元"])) == ["mem_zh"]
        assert event_seqs(store.search_events("s1", ["元"])) == [("s1", 0)]

    def test_cjk_bigram_is_found(self, store: MemoryStore) -> None:
        """a two-character Chinese term finds the text containing it."""
        store.insert_item(make_item("s1", CHINESE, item_id="mem_zh"))
        store.insert_item(make_item("s1", "预定酒店", item_id="mem_other"))
        store.insert_events([make_event("s1", 0, CHINESE), make_event("s1", 1, "预定酒店")])
        assert item_ids(store.search_items("s1", ["预算"])) == ["mem_zh"]
        assert event_seqs(store.search_events("s1", ["含税"])) == [("s1", 0)]

    def test_short_latin_terms_are_found(self, store: MemoryStore) -> None:
        """one- and two-character Latin terms find the text containing them."""
        store.insert_item(make_item("s1", "move the db to v2", item_id="mem_db"))
        store.insert_item(make_item("s1", "nothing relevant", item_id="mem_other"))
        store.insert_events([make_event("s1", 0, "switch to db v2"), make_event("s1", 1, "none")])
        assert item_ids(store.search_items("s1", ["db"])) == ["mem_db"]
        assert event_seqs(store.search_events("s1", ["v2"])) == [("s1", 0)]
        assert item_ids(store.search_items("s1", ["2"])) == ["mem_db"]

    def test_short_and_long_terms_combine(self, store: MemoryStore) -> None:
        """a short term and a long term together find the union of their matches."""
        store.insert_item(make_item("s1", "预算很紧", item_id="mem_short"))
        store.insert_item(make_item("s1", "the schedule slipped", item_id="mem_long"))
        store.insert_item(make_item("s1", "nothing here", item_id="mem_none"))
        hits = store.search_items("s1", ["预算", "schedule"])
        assert set(item_ids(hits)) == {"mem_short", "mem_long"}

    def test_percent_matches_only_itself(self, store: MemoryStore) -> None:
        """`%` in a term is a literal percent sign, never a wildcard."""
        store.insert_item(make_item("s1", "5% discount", item_id="mem_pct"))
        store.insert_item(make_item("s1", "50 units", item_id="mem_50"))
        store.insert_events([make_event("s1", 0, "5% discount"), make_event("s1", 1, "50 units")])
        for term in ("5%", "%", "%5"):
            expected = ["mem_pct"] if term != "%5" else []
            assert item_ids(store.search_items("s1", [term])) == expected, term
        assert event_seqs(store.search_events("s1", ["5%"])) == [("s1", 0)]

    def test_underscore_matches_only_itself(self, store: MemoryStore) -> None:
        """`_` in a term is a literal underscore, never a one-character wildcard."""
        store.insert_item(make_item("s1", "use a_b here", item_id="mem_us"))
        store.insert_item(make_item("s1", "use axb here", item_id="mem_x"))
        store.insert_events([make_event("s1", 0, "a_b"), make_event("s1", 1, "axb")])
        assert item_ids(store.search_items("s1", ["a_"])) == ["mem_us"]
        assert item_ids(store.search_items("s1", ["_"])) == ["mem_us"]
        assert event_seqs(store.search_events("s1", ["a_b"])) == [("s1", 0)]
        assert event_seqs(store.search_events("s1", ["_b"])) == [("s1", 0)]

    def test_backslash_matches_only_itself(self, store: MemoryStore) -> None:
        """a backslash in a term matches a backslash and does not escape what follows."""
        store.insert_item(make_item("s1", "path a\\b", item_id="mem_bs"))
        store.insert_item(make_item("s1", "path a%b", item_id="mem_pct"))
        assert item_ids(store.search_items("s1", ["\\"])) == ["mem_bs"]
        assert item_ids(store.search_items("s1", ["a\\"])) == ["mem_bs"]
