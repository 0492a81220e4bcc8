"""A long-lived handle's in-memory copy of a session answers exactly as the SQL scan does,
and never shows an event that is gone or hides one that was added, whoever wrote it."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from lcm_core.store.models import Event, ItemChange, MemoryEvent, MemoryItem
from lcm_core.text.tokens import sha256_hex
from lcm_store_sqlite import SQLiteMemoryStore

WORDS = [
    "deploy",
    "port",
    "budget",
    "cache",
    "Redis",
    "端口",
    "预算",
    "部署",
    "缓存",
    "数据库",
    "invoice",
    "p95",
    "3000",
    "3000元",
]
TYPES = ("user/message", "assistant/message", "tool/result")


def _conversation(session: str, count: int, seed: int = 3) -> list[Event]:
    rng = random.Random(seed)
    events = []
    for seq in range(count):
        kind = TYPES[seq % 3]
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
        if seq % 7 == 0:
            text = text.upper()  # LIKE folds ASCII: the copy must too
        events.append(Event(session, seq, kind, text, role=kind.split("/")[0]))
    return events


def _search(store: SQLiteMemoryStore, session: str, terms: list[str], **kw: object) -> list:
    return [(h.event.seq, h.event.text, h.score) for h in store.search_events(session, terms, **kw)]


QUERIES = (
    (["deploy"], {}),
    (["port", "端口"], {"types": ["user/message"]}),
    (["预算", "3000"], {"limit": 5}),
    (["REDIS", "p9"], {"types": ["user/message", "assistant/message"], "limit": 400}),
    (["数据"], {"limit": 1}),
    (["nothing-like-this"], {}),
    (["cache"], {"types": []}),
)


def test_the_copy_finds_what_the_sql_scan_finds_in_the_same_order(tmp_path: Path) -> None:
    """Across 2 500 events (three of the copy's text blocks), Chinese, upper case, type
    filters and limits: hit for hit, score for score, the same as without the copy."""
    path = tmp_path / "m.sqlite"
    cached = SQLiteMemoryStore(path)
    cached.insert_events(_conversation("s1", 2500))
    plain = SQLiteMemoryStore(path, session_cache=False)
    for terms, kw in QUERIES:
        expected = _search(plain, "s1", terms, **kw)
        assert _search(cached, "s1", terms, **kw) == expected
        assert _search(cached, "s1", terms, **kw) == expected  # and again, warm
    seqs = [0, 5, 1024, 2048, 2499, 9999]
    assert cached.get_events("s1", seqs) == plain.get_events("s1", seqs)


WINDOWS = (
    {"start_seq": 2400, "end_seq": 2499, "types": ["user/message"]},
    {"start_seq": 0, "end_seq": 64},
    {"start_seq": 2490, "end_seq": 2600, "types": ["assistant/message", "tool/result"]},
    {"start_seq": 100, "end_seq": 99},
    {"start_seq": 5, "end_seq": 9, "types": []},
    {"start_seq": 0, "end_seq": 4096, "types": ["user/message"]},
)


def test_a_seq_window_from_the_copy_is_what_sql_reads(tmp_path: Path) -> None:
    """The recent-message windows a step reads come from a warm copy, event for event and
    in seq order the same as the SQL read, and show an event another handle adds later."""
    path = tmp_path / "m.sqlite"
    cached = SQLiteMemoryStore(path)
    cached.insert_events(_conversation("s1", 2500))
    plain = SQLiteMemoryStore(path, session_cache=False)
    assert _search(cached, "s1", ["deploy"])  # the copy is warm
    for window in WINDOWS:
        assert cached.list_events("s1", **window) == plain.list_events("s1", **window)
    plain.insert_event(Event("s1", 2500, "user/message", "预算改成 青花瓷 4000元", role="user"))
    recent = cached.list_events("s1", start_seq=2436, end_seq=2500, types=["user/message"])
    assert recent[-1].text == "预算改成 青花瓷 4000元"
    assert recent == plain.list_events("s1", start_seq=2436, end_seq=2500, types=["user/message"])


@pytest.mark.parametrize("writer_is_other", [False, True])
def test_a_warm_copy_sees_new_events_from_either_handle(
    tmp_path: Path, writer_is_other: bool
) -> None:
    path = tmp_path / "m.sqlite"
    reader = SQLiteMemoryStore(path)
    reader.insert_events(_conversation("s1", 1030))
    assert _search(reader, "s1", ["青花瓷"]) == []
    writer = SQLiteMemoryStore(path) if writer_is_other else reader
    writer.insert_event(Event("s1", 5000, "user/message", "预算改成 青花瓷 4000元", role="user"))
    writer.insert_event(Event("s2", 1, "user/message", "青花瓷 in another session", role="user"))
    assert [seq for seq, _, _ in _search(reader, "s1", ["青花瓷"])] == [5000]
    assert reader.get_events("s1", [5000])[0].text == "预算改成 青花瓷 4000元"


@pytest.mark.parametrize("writer_is_other", [False, True])
def test_a_forgotten_event_leaves_a_warm_copy(tmp_path: Path, writer_is_other: bool) -> None:
    path = tmp_path / "m.sqlite"
    reader = SQLiteMemoryStore(path)
    reader.insert_events(_conversation("s1", 300))
    reader.insert_event(Event("s1", 400, "user/message", "密码是 Quokka-4412", role="user"))
    assert [seq for seq, _, _ in _search(reader, "s1", ["quokka"])] == [400]
    writer = SQLiteMemoryStore(path) if writer_is_other else reader
    writer.forget_event("s1", 400)
    assert _search(reader, "s1", ["quokka"]) == []
    assert reader.get_events("s1", [400])[0].text == ""


def test_a_purged_session_leaves_a_warm_copy(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "m.sqlite")
    store.insert_events(_conversation("s1", 100))
    assert _search(store, "s1", ["deploy"])
    store.purge_session("s1")
    assert _search(store, "s1", ["deploy"]) == []
    assert store.get_events("s1", list(range(100))) == []
    # The same seqs with other text afterwards are the new text, not the old.
    store.insert_event(Event("s1", 3, "user/message", "端口改成 6543", role="user"))
    assert [text for _, text, _ in _search(store, "s1", ["端口"])] == ["端口改成 6543"]


def test_an_event_rolled_back_never_shows(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "m.sqlite")
    store.insert_events(_conversation("s1", 50))
    assert _search(store, "s1", ["deploy"])  # the copy is warm
    with pytest.raises(RuntimeError), store.transaction():
        store.insert_event(Event("s1", 900, "user/message", "回滚的 zebra 行", role="user"))
        # Inside the transaction the search reads SQL and sees its own write.
        assert [seq for seq, _, _ in _search(store, "s1", ["zebra"])] == [900]
        raise RuntimeError("roll back")
    assert _search(store, "s1", ["zebra"]) == []
    assert store.get_events("s1", [900]) == []


def test_a_session_with_too_much_text_is_searched_without_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long tool output must not fill the sidecar's memory: a session whose text passes
    the bound is not copied, and its search (the SQL scan) finds the same turns."""
    from lcm_store_sqlite import session_cache

    monkeypatch.setattr(session_cache, "CACHE_TOTAL_CHARS", 5_000)
    path = tmp_path / "m.sqlite"
    store = SQLiteMemoryStore(path)
    store.insert_events(_conversation("small", 40))
    store.insert_events(_conversation("big", 40))
    store.insert_event(Event("big", 99, "tool/result", "日志 " + "x" * 6_000, role="tool"))
    plain = SQLiteMemoryStore(path, session_cache=False)
    for session in ("small", "big"):
        assert _search(store, session, ["端口", "日志"]) == _search(
            plain, session, ["端口", "日志"]
        )
    held = store._sessions._copies  # what the handle holds
    assert list(held) == [("events", "small")]
    # Growing past the bound drops a copy that was kept.
    store.insert_event(Event("small", 99, "tool/result", "y" * 6_000, role="tool"))
    assert _search(store, "small", ["yyy"]) == _search(plain, "small", ["yyy"])
    assert list(held) == []


def test_text_after_a_nul_is_matched_as_sqlite_matches_it(tmp_path: Path) -> None:
    """SQLite's LIKE reads a stored text only up to a NUL (the store API keeps one; host
    capture strips it): the copy must not find words the SQL scan cannot see."""
    path = tmp_path / "m.sqlite"
    cached = SQLiteMemoryStore(path)
    cached.insert_events(
        [
            Event("s", 1, "user/message", "abc\x00deploy 端口 here", role="user"),
            Event("s", 2, "user/message", "deploy before", role="user"),
        ]
    )
    plain = SQLiteMemoryStore(path, session_cache=False)
    for terms in (["deploy"], ["端口"], ["abc"], ["here", "before"]):
        assert _search(cached, "s", terms) == _search(plain, "s", terms)


def _items(session: str, count: int, seed: int = 5) -> list[MemoryItem]:
    rng = random.Random(seed)
    kinds = ("fact", "constraint", "decision")
    out = []
    for number in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))
        if number % 5 == 0:
            text = text.upper()
        text = f"{text} #{number}"  # no two alike: each is its own active item
        out.append(
            MemoryItem(
                f"mem_{session}_{number}", session, kinds[number % 3], text, sha256_hex(text)
            )
        )
    return out


def _find(store: SQLiteMemoryStore, session: str, terms: list[str], **kw: object) -> list:
    return [
        (h.item.id, h.item.status, h.item.content, h.score)
        for h in store.search_items(session, terms, **kw)
    ]


ITEM_QUERIES = (
    (["deploy"], {}),
    (["port", "端口"], {"kinds": ["fact", "decision"]}),
    (["预算", "3000"], {"limit": 3}),
    (["REDIS", "p9"], {"statuses": ("active", "superseded"), "limit": 400}),
    (["数据"], {"statuses": ("retracted",)}),
    (["nothing-like-this"], {}),
)


def _same_items(cached: SQLiteMemoryStore, plain: SQLiteMemoryStore, session: str) -> None:
    for terms, kw in ITEM_QUERIES:
        expected = _find(plain, session, terms, **kw)
        assert _find(cached, session, terms, **kw) == expected


def test_the_copy_of_items_follows_every_change_whoever_makes_it(tmp_path: Path) -> None:
    """Items change in place (a status, a forgotten text) as well as by insert: a warm
    copy answers as the SQL scan does after each change made by this handle, by another
    handle and by plain SQL on the file, filters, Chinese and upper case included."""
    path = tmp_path / "m.sqlite"
    cached = SQLiteMemoryStore(path)
    plain = SQLiteMemoryStore(path, session_cache=False)
    items = _items("s1", 300)
    for item in items[:200]:
        cached.insert_item(item)
    cached.insert_item(_items("s2", 5)[0])
    _same_items(cached, plain, "s1")
    for item in items[200:250]:  # added by this handle, then by another one
        cached.insert_item(item)
    _same_items(cached, plain, "s1")
    for item in items[250:]:
        plain.insert_item(item)
    _same_items(cached, plain, "s1")
    change = MemoryEvent(items[3].id, "s1", "retracted", actor="test")
    cached.update_item(items[3].id, ItemChange(status="retracted"), change)  # this handle
    _same_items(cached, plain, "s1")
    other = MemoryEvent(items[8].id, "s1", "superseded", actor="test")
    plain.update_item(items[8].id, ItemChange(status="superseded"), other)  # another handle
    _same_items(cached, plain, "s1")
    cached.forget_item(items[10].id, MemoryEvent(items[10].id, "s1", "forgotten", actor="t"))
    _same_items(cached, plain, "s1")
    raw = sqlite3.connect(path)  # plain SQL: an in-place edit and a delete
    raw.execute(
        "UPDATE memory_items SET content = '端口 7000 DEPLOY' WHERE id = ?", (items[20].id,)
    )
    raw.execute("DELETE FROM memory_items WHERE id = ?", (items[21].id,))
    raw.commit()
    raw.close()
    _same_items(cached, plain, "s1")
    with cached.transaction():  # own in-place write inside a transaction, read after it
        cached.update_item(
            items[30].id,
            ItemChange(status="retracted"),
            MemoryEvent(items[30].id, "s1", "retracted", actor="test"),
        )
    _same_items(cached, plain, "s1")
    assert ("memory_items", "s1") in cached._sessions._copies  # the copy answered


def test_words_found_in_full_blocks_are_kept_and_new_blocks_searched(tmp_path: Path) -> None:
    """The copy keeps where each word was found in its full blocks of text: searching the
    same words again while the session grows across block ends finds every new turn."""
    path = tmp_path / "m.sqlite"
    cached = SQLiteMemoryStore(path)
    plain = SQLiteMemoryStore(path, session_cache=False)
    events = _conversation("s1", 3300, seed=9)
    for start, end in ((0, 1000), (1000, 1024), (1024, 2047), (2047, 2049), (2049, 3300)):
        cached.insert_events(events[start:end])
        for terms, kw in QUERIES:
            assert _search(cached, "s1", terms, **kw) == _search(plain, "s1", terms, **kw)


def test_without_the_rewrite_count_items_are_searched_without_a_copy(tmp_path: Path) -> None:
    """The items copy trusts schema v5's count of item rewrites: if a tool removed a
    trigger, this handle's own status change would go unseen by a copy, so the search
    goes to SQL and stays right."""
    path = tmp_path / "m.sqlite"
    cached = SQLiteMemoryStore(path)
    items = _items("s1", 40)
    for item in items:
        cached.insert_item(item)
    raw = sqlite3.connect(path)
    raw.execute("DROP TRIGGER memory_items_rewritten")
    raw.commit()
    raw.close()
    plain = SQLiteMemoryStore(path, session_cache=False)
    assert _find(cached, "s1", ["deploy"]) == _find(plain, "s1", ["deploy"])
    target = next(item for item in items if "deploy" in item.content.lower())
    change = MemoryEvent(target.id, "s1", "retracted", actor="test")
    cached.update_item(target.id, ItemChange(status="retracted"), change)
    assert target.id not in [row[0] for row in _find(cached, "s1", ["deploy"])]
    assert _find(cached, "s1", ["deploy"]) == _find(plain, "s1", ["deploy"])
    assert ("memory_items", "s1") not in cached._sessions._copies
