"""Text PostgreSQL cannot hold as is (NUL, lone surrogates) never breaks a write or a read."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_core.testing.builders import make_event, make_item
from lcm_store_postgres import PostgresMemoryStore

HOSTILE = ("a\x00b", "\x00", "x\udfffy", "预算\x00元", "\ud800")


def test_nul_and_surrogates_in_every_field(tenant_url: str) -> None:
    """a NUL or a lone surrogate in ids, text, meta and search terms stores and is found."""
    store = PostgresMemoryStore(tenant_url)
    try:
        for n, text in enumerate(HOSTILE):
            session = f"s{text}"
            assert store.insert_event(make_event(session, n, f"ev {text} end")) is True
            assert store.get_event(session, n) is not None
            # NUL and a lone surrogate both become U+FFFD, so "s\x00" and "s\ud800" name
            # one session: each write is still found under the key it was written with.
            assert n in [e.seq for e in store.list_events(session)]
            store.insert_item(make_item(session, f"item {text}", item_id=f"mem_{n}{text}"))
            assert store.get_item(f"mem_{n}{text}") is not None
            store.set_meta(f"k{text}", f"v{text}")
            assert store.get_meta(f"k{text}") is not None
            assert isinstance(store.search_events(session, [text, "ev"]), list)
            assert isinstance(store.search_items(None, [text]), list)
        assert store.integrity_check() == []
    finally:
        store.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=40), term=st.text(max_size=12))
def test_any_text_and_term_never_raise(tenant_url: str, text: str, term: str) -> None:
    """any Unicode as stored text and as a search term: writes succeed, search returns a list."""
    store = PostgresMemoryStore(tenant_url)
    try:
        store.insert_event(make_event("h", abs(hash(text)) % 1_000_000, text))
        assert isinstance(store.search_events("h", [term]), list)
        assert isinstance(store.search_events(None, [term, text]), list)
    finally:
        store.close()
