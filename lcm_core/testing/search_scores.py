"""Contracts of search scores: the core's formula over the searched session, and no hit lost.

The port promises that every backend scores a hit as `lcm_core.text.score_matches` does:
the distinct query terms the text contains plus BM25 squashed into [0, 1), with BM25 over
the matching rows of the searched session and N the session's rows. These contracts pin
that down with exact values, so a backend cannot rank by another formula, count a term
twice, or let other sessions' rows change a session's scores.
"""

from __future__ import annotations

import pytest

from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import make_event, make_item
from lcm_core.text.tokens import normalized_terms, score_matches

# One session of mixed-language items and events, varied in length and term counts.
TEXTS = (
    "deploy the api with docker compose on staging",
    "docker images are pruned every night; docker builds cache layers",
    "预算不超过3000元（含税），部署用 docker",
    "the api gateway keeps a cache of tokens",
    "周五前把 PostgreSQL 迁移到 staging 环境",
    "nothing relevant here at all",
    "cache cache cache: the api cache is warm",
    "ok",
)
# Terms of one, two, three and more characters, Latin and Chinese, one matching nothing.
TERMS = ("docker", "api", "cache", "ok", "部署", "staging", "迁移到", "x", "kubernetes")


def expected_scores(texts: list[str], terms: list[str], scope_rows: int) -> dict[str, float]:
    """What score_matches gives each matching text of a scope of `scope_rows` rows."""
    keys = [term.casefold() for term in normalized_terms(terms)]
    matching = [text for text in texts if any(key in text.casefold() for key in keys)]
    scores = score_matches(matching, list(normalized_terms(terms)), scope_rows)
    return dict(zip(matching, scores, strict=True))


class SearchScoreContract(StoreContractBase):
    """Search scores are the core's formula over the searched session's rows."""

    @pytest.mark.parametrize("terms", [TERMS[:3], TERMS[3:8], TERMS, ("cache",), ("api",)])
    def test_item_scores_follow_the_core_formula(
        self, store: MemoryStore, terms: tuple[str, ...]
    ) -> None:
        """each item hit scores what score_matches gives it over the session's matching items."""
        for text in TEXTS:
            store.insert_item(make_item("s1", text))
        expected = expected_scores(list(TEXTS), list(terms), len(TEXTS))
        hits = store.search_items("s1", list(terms))
        assert sorted(hit.item.content for hit in hits) == sorted(expected)
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.item.content], abs=1e-9), hit
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    @pytest.mark.parametrize("terms", [TERMS[:3], TERMS[3:8], TERMS, ("ok",), ("迁移到",)])
    def test_event_scores_follow_the_core_formula(
        self, store: MemoryStore, terms: tuple[str, ...]
    ) -> None:
        """each event hit scores what score_matches gives it over the session's matching events."""
        store.insert_events([make_event("s1", seq, text) for seq, text in enumerate(TEXTS)])
        expected = expected_scores(list(TEXTS), list(terms), len(TEXTS))
        hits = store.search_events("s1", list(terms))
        assert sorted(hit.event.text for hit in hits) == sorted(expected)
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.event.text], abs=1e-9), hit

    def test_three_character_term_counts_once(self, store: MemoryStore) -> None:
        """a hit on one term scores in [1, 2) whatever the term's length, three characters included."""
        store.insert_item(make_item("s1", "api 部署到 go ab staging"))
        store.insert_event(make_event("s1", 0, "api 部署到 go ab staging"))
        for term in ("ab", "api", "部署到", "stag", "staging"):
            scores = [hit.score for hit in store.search_items("s1", [term])]
            scores += [hit.score for hit in store.search_events("s1", [term])]
            assert len(scores) == 2, term
            assert all(1.0 <= score < 2.0 for score in scores), (term, scores)

    def test_other_sessions_do_not_change_scores(self, store: MemoryStore) -> None:
        """a session's scores stay the same when other sessions gain rows, matching or not."""
        for seq, text in enumerate(TEXTS):
            store.insert_item(make_item("s1", text))
            store.insert_event(make_event("s1", seq, text))
        terms = list(TERMS)
        items_before = store.search_items("s1", terms)
        events_before = store.search_events("s1", terms)
        for i in range(40):
            text = f"docker cache note {i}" if i % 2 else f"unrelated chatter {i}"
            store.insert_item(make_item("s2", text))
            store.insert_event(make_event("s2", i, text))
        assert store.search_items("s1", terms) == items_before
        assert store.search_events("s1", terms) == events_before

    def test_best_item_found_among_many_matches(self, store: MemoryStore) -> None:
        """the best item is returned even when far more match than the limit; 100 by default."""
        for i in range(120):
            store.insert_item(make_item("s1", f"note {i:03d} mentions ab once among other words"))
        best, _ = store.insert_item(make_item("s1", "ab ab ab ab"))
        hits = store.search_items("s1", ["ab"], limit=5)
        assert len(hits) == 5 and hits[0].item.id == best.id
        assert len(store.search_items("s1", ["ab"])) == 100  # the port's default limit
        hits = store.search_items("s1", ["mentions", "ab"], limit=3)
        assert best.id not in [hit.item.id for hit in hits]

    def test_best_event_found_among_many_matches(self, store: MemoryStore) -> None:
        """the best event is returned even when far more match than the limit; 50 by default."""
        store.insert_events(
            [make_event("s1", i, f"line {i:03d}: the 构建 ran, ok") for i in range(120)]
        )
        store.insert_event(make_event("s1", 500, "构建 构建 构建 构建"))
        hits = store.search_events("s1", ["构建"], limit=4)
        assert len(hits) == 4 and hits[0].event.seq == 500
        assert len(store.search_events("s1", ["构建"])) == 50  # the port's default limit

    def test_long_term_found_anywhere_in_text(self, store: MemoryStore) -> None:
        """a term over 10 000 characters is found at the start, the middle and the end of a text."""
        term = "长" + "word " * 2_100 + "尾"
        for i, text in enumerate((term + " tail", "head " + term + " tail", "head " + term)):
            store.insert_item(make_item("s1", text, item_id=f"mem_long_{i}"))
            store.insert_event(make_event("s1", i, text))
        store.insert_item(make_item("s1", term[:-1], item_id="mem_cut"))
        ids = sorted(hit.item.id for hit in store.search_items("s1", [term]))
        assert ids == ["mem_long_0", "mem_long_1", "mem_long_2"]
        assert sorted(hit.event.seq for hit in store.search_events("s1", [term])) == [0, 1, 2]

    def test_term_of_many_bytes_is_served(self, store: MemoryStore) -> None:
        """a Chinese term of 17 000 characters (51 kB in UTF-8) is found and scored like any term."""
        term = "长期记忆" * 4_250
        store.insert_item(make_item("s1", term + "。结束", item_id="mem_zh_long"))
        store.insert_item(make_item("s1", "短文本", item_id="mem_zh_short"))
        store.insert_event(make_event("s1", 0, term + "。"))
        hits = store.search_items("s1", [term, "结束"])
        assert [hit.item.id for hit in hits] == ["mem_zh_long"]
        assert 2.0 <= hits[0].score < 3.0
        assert [hit.event.seq for hit in store.search_events("s1", [term])] == [0]
