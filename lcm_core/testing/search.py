"""Contracts of search: what matches, which filters apply, and how hits are ordered."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lcm_core.store.models import EventHit, ItemChange, ItemHit
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import CHINESE, MIXED, lifecycle, make_event, make_item, supersede


def item_ids(hits: Sequence[ItemHit]) -> list[str]:
    """The ids of item hits, in rank order."""
    return [hit.item.id for hit in hits]


def event_seqs(hits: Sequence[EventHit]) -> list[tuple[str, int]]:
    """The keys of event hits, in rank order."""
    return [(hit.event.session_id, hit.event.seq) for hit in hits]


class SearchContract(StoreContractBase):
    """search_items and search_events find literal terms and rank better matches first."""

    def test_items_found_by_english_term(self, store: MemoryStore) -> None:
        """an item containing an English term is found; one without it is not."""
        store.insert_item(make_item("s1", "deploy with docker compose", item_id="mem_hit"))
        store.insert_item(make_item("s1", "write the release notes", item_id="mem_miss"))
        hits = store.search_items("s1", ["docker"])
        assert item_ids(hits) == ["mem_hit"]
        assert hits[0].item == store.get_item("mem_hit")

    def test_events_found_by_english_term(self, store: MemoryStore) -> None:
        """an event containing an English term is found, returned as stored."""
        store.insert_events(
            [make_event("s1", 0, "restart the nginx proxy"), make_event("s1", 1, "lunch")]
        )
        hits = store.search_events("s1", ["nginx"])
        assert event_seqs(hits) == [("s1", 0)]
        assert hits[0].event == store.get_event("s1", 0)

    def test_chinese_text_is_searchable(self, store: MemoryStore) -> None:
        """Chinese items and events are found by Chinese terms of three or more characters."""
        store.insert_item(make_item("s1", CHINESE, item_id="mem_zh"))
        store.insert_item(make_item("s1", "unrelated english", item_id="mem_en"))
        store.insert_event(make_event("s1", 0, CHINESE))
        assert item_ids(store.search_items("s1", ["不超过3000元"])) == ["mem_zh"]
        assert event_seqs(store.search_events("s1", ["含税）"])) == [("s1", 0)]

    def test_mixed_text_is_searchable(self, store: MemoryStore) -> None:
        """text mixing scripts is found by a Latin term, a Chinese term and a term spanning both."""
        store.insert_item(make_item("s1", MIXED, item_id="mem_mixed"))
        store.insert_event(make_event("s1", 0, MIXED))
        for term in ("PostgreSQL", "迁移到", "把 PostgreSQL 迁移"):
            assert item_ids(store.search_items("s1", [term])) == ["mem_mixed"], term
            assert event_seqs(store.search_events("s1", [term])) == [("s1", 0)], term

    def test_any_term_matches(self, store: MemoryStore) -> None:
        """a hit needs only one of the terms."""
        store.insert_item(make_item("s1", "apples are red", item_id="mem_a"))
        store.insert_item(make_item("s1", "bananas are yellow", item_id="mem_b"))
        store.insert_item(make_item("s1", "cherries are dark", item_id="mem_c"))
        assert set(item_ids(store.search_items("s1", ["apples", "bananas", "kiwis"]))) == {
            "mem_a",
            "mem_b",
        }

    def test_no_terms_find_nothing(self, store: MemoryStore) -> None:
        """an empty term list returns no hits."""
        store.insert_item(make_item("s1", "anything at all"))
        store.insert_event(make_event("s1", 0, "anything at all"))
        assert store.search_items("s1", []) == []
        assert store.search_events("s1", []) == []

    def test_item_search_defaults_to_active(self, store: MemoryStore) -> None:
        """by default only active items are returned, even when others match better."""
        old, _ = store.insert_item(make_item("s1", "port 8080 port 8080", item_id="mem_old"))
        new, _ = store.insert_item(make_item("s1", "use port 9090", item_id="mem_new"))
        gone, _ = store.insert_item(make_item("s1", "port 22 is open", item_id="mem_gone"))
        supersede(store, old, new)
        store.update_item(gone.id, ItemChange(status="retracted"), lifecycle(gone, "retracted"))
        assert item_ids(store.search_items("s1", ["port"])) == ["mem_new"]

    def test_item_search_status_filter(self, store: MemoryStore) -> None:
        """statuses selects which statuses are searched, and the index follows status changes."""
        a, _ = store.insert_item(make_item("s1", "cache layer one", item_id="mem_a"))
        store.insert_item(make_item("s1", "cache layer two", item_id="mem_b"))
        store.update_item(a.id, ItemChange(status="disputed"), lifecycle(a, "disputed"))
        assert item_ids(store.search_items("s1", ["cache"], statuses=["disputed"])) == ["mem_a"]
        both = store.search_items("s1", ["cache"], statuses=["active", "disputed"])
        assert set(item_ids(both)) == {"mem_a", "mem_b"}
        assert store.search_items("s1", ["cache"], statuses=["retracted"]) == []

    def test_item_search_kind_filter(self, store: MemoryStore) -> None:
        """kinds keeps only items of the listed kinds."""
        store.insert_item(make_item("s1", "deadline friday", item_id="mem_f"))
        store.insert_item(make_item("s1", "deadline monday", item_id="mem_d", kind="decision"))
        hits = store.search_items("s1", ["deadline"], kinds=["decision"])
        assert item_ids(hits) == ["mem_d"]

    def test_event_search_type_filter(self, store: MemoryStore) -> None:
        """types keeps only events of the listed types."""
        store.insert_events(
            [
                make_event("s1", 0, "grep found the token"),
                make_event("s1", 1, "grep found the token twice", type="tool/result"),
            ]
        )
        hits = store.search_events("s1", ["token"], types=["tool/result"])
        assert event_seqs(hits) == [("s1", 1)]

    def test_search_is_scoped_to_session(self, store: MemoryStore) -> None:
        """a session id limits search to that session; None searches every session."""
        store.insert_item(make_item("s1", "shared keyword here", item_id="mem_1"))
        store.insert_item(make_item("s2", "shared keyword there", item_id="mem_2"))
        store.insert_events([make_event("s1", 0, "keyword a"), make_event("s2", 0, "keyword b")])
        assert item_ids(store.search_items("s1", ["keyword"])) == ["mem_1"]
        assert set(item_ids(store.search_items(None, ["keyword"]))) == {"mem_1", "mem_2"}
        assert event_seqs(store.search_events("s2", ["keyword"])) == [("s2", 0)]
        assert set(event_seqs(store.search_events(None, ["keyword"]))) == {("s1", 0), ("s2", 0)}

    def test_scores_are_non_negative_floats(self, store: MemoryStore) -> None:
        """every hit carries a finite float score of zero or more, short terms included."""
        store.insert_item(make_item("s1", "score me please", item_id="mem_s"))
        store.insert_event(make_event("s1", 0, "score me please"))
        for terms in (["score"], ["me"], ["score", "me", "please"]):
            hits: list[ItemHit | EventHit] = [
                *store.search_items("s1", terms),
                *store.search_events("s1", terms),
            ]
            assert len(hits) == 2, terms
            for hit in hits:
                assert isinstance(hit.score, float) and math.isfinite(hit.score)
                assert hit.score >= 0.0

    def test_more_matched_terms_rank_first(self, store: MemoryStore) -> None:
        """an item matching more of the terms ranks above one matching fewer."""
        store.insert_item(make_item("s1", "budget for the train ride", item_id="mem_a_one"))
        store.insert_item(make_item("s1", "budget for the hotel stay", item_id="mem_z_both"))
        hits = store.search_items("s1", ["budget", "hotel"])
        assert item_ids(hits) == ["mem_z_both", "mem_a_one"]
        assert hits[0].score >= hits[1].score
        store.insert_events(
            [make_event("s1", 0, "budget for the train ride"), make_event("s1", 1, "budget hotel")]
        )
        assert event_seqs(store.search_events("s1", ["budget", "hotel"]))[0] == ("s1", 1)

    def test_more_occurrences_rank_first(self, store: MemoryStore) -> None:
        """an item repeating the term ranks above one of similar length mentioning it once."""
        store.insert_item(make_item("s1", "coffee and some other drink", item_id="mem_a_once"))
        store.insert_item(make_item("s1", "coffee coffee coffee and tea", item_id="mem_z_many"))
        hits = store.search_items("s1", ["coffee"])
        assert item_ids(hits) == ["mem_z_many", "mem_a_once"]
        assert hits[0].score > hits[1].score

    def test_equal_scores_tie_in_id_order(self, store: MemoryStore) -> None:
        """items scoring the same come back in id order."""
        for item_id, session in (("mem_c", "s3"), ("mem_a", "s1"), ("mem_b", "s2")):
            store.insert_item(make_item(session, "identical sentence", item_id=item_id))
        hits = store.search_items(None, ["identical"])
        assert item_ids(hits) == ["mem_a", "mem_b", "mem_c"]
        assert len({hit.score for hit in hits}) == 1

    def test_search_is_deterministic(self, store: MemoryStore) -> None:
        """the same query on the same data returns the same hits in the same order."""
        for i in range(12):
            store.insert_item(make_item("s1", f"note {i} about the release {i % 3}"))
            store.insert_event(make_event("s1", i, f"release chatter {i % 4}"))
        terms = ["release", "note", "1"]
        assert store.search_items("s1", terms) == store.search_items("s1", terms)
        assert store.search_events("s1", terms) == store.search_events("s1", terms)

    def test_search_limit(self, store: MemoryStore) -> None:
        """limit caps the number of hits for items and events."""
        for i in range(8):
            store.insert_item(make_item("s1", f"limit test item {i}"))
            store.insert_event(make_event("s1", i, f"limit test event {i}"))
        assert len(store.search_items("s1", ["limit"], limit=3)) == 3
        assert len(store.search_events("s1", ["limit"], limit=5)) == 5
        assert len(store.search_items("s1", ["limit"])) == 8

    def test_search_follows_content_of_new_items(self, store: MemoryStore) -> None:
        """a superseding item is found and the superseded one drops out of default search."""
        old, _ = store.insert_item(make_item("s1", "meet at nine", item_id="mem_old"))
        new, _ = store.insert_item(make_item("s1", "meet at ten", item_id="mem_new"))
        assert set(item_ids(store.search_items("s1", ["meet"]))) == {"mem_old", "mem_new"}
        supersede(store, old, new)
        assert item_ids(store.search_items("s1", ["meet"])) == ["mem_new"]
        assert item_ids(store.search_items("s1", ["meet"], statuses=["superseded"])) == ["mem_old"]
