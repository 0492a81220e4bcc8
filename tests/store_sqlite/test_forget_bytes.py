"""Forgotten text leaves the SQLite file: secure_delete, an FTS merge and a WAL checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.extraction import control
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.store.models import Event
from lcm_core.testing.builders import make_item
from lcm_store_sqlite import SQLiteMemoryStore

SECRET = "银行卡背面写着 Quokka-4412 这串字"
# The secret's trigrams (lower-cased, as the FTS5 trigram index keeps them), the whole,
# and its last two characters (schema v4 indexes every text's last two).
MARKS = (SECRET, "quokka", "quo", "uok", "okk", "kka", "a-4", "银行卡", "背面写", "这串字", "串字")


def _bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _store_with_secret(path: Path) -> tuple[SQLiteMemoryStore, str]:
    store = SQLiteMemoryStore(path)
    # The filler does not end in "ok": the last-two-characters index keeps "ok" beside a
    # rowid, and rowid 107 is the byte "k", which the byte search would read as "okk".
    for start in range(0, 400, 50):  # several transactions: several FTS segments
        store.insert_events(
            Event("s1", n, "tool/result", f"第 {n} 行 line {n}: fine")
            for n in range(start, start + 50)
        )
    # A long message spills into overflow pages; erased, they go to the free list, where
    # only secure_delete zeroes them.
    long_text = "\n".join(f"{n}. {SECRET}" for n in range(300))
    store.insert_event(Event("s1", 500, "user/message", long_text, role="user"))
    item, _ = store.insert_item(make_item("s1", SECRET, source_refs=("seq:500",)))
    return store, item.id


def test_forget_leaves_no_byte_of_the_text_while_another_handle_is_open(tmp_path: Path) -> None:
    """With a second handle open (no checkpoint at close), the forget's own scrub cleans
    the file and the WAL: neither the text nor one of its index tokens is left."""
    path = tmp_path / "m.sqlite"
    writer, item_id = _store_with_secret(path)
    reader = SQLiteMemoryStore(path)
    try:
        assert SECRET.encode() in _bytes(path) and b"uok" in _bytes(path)
        report = control.forget_item(writer, item_id, "测试")
        assert report.scrub == {"checkpoint": "complete"} and report.events == [500]
        assert [m for m in MARKS if m.encode() in _bytes(path)] == []
        assert reader.search_events("s1", ["Quokka"]) == []
        assert writer.integrity_check() == []
    finally:
        reader.close()
        writer.close()


def test_forget_leaves_no_byte_of_a_step_text_the_assembly_log_kept(tmp_path: Path) -> None:
    """A pre-step whose own text was the message logs it (explain shows the step's text);
    forgetting the message erases that copy too, from the file and the WAL."""
    path = tmp_path / "m.sqlite"
    writer, item_id = _store_with_secret(path)
    try:
        step = [StepMessage("user", SECRET, "user")]
        pre_step(writer, StepRequest("s1", step), load_config({}))
        (logged,) = writer.list_assembly_logs("s1")
        assert SECRET in json.dumps(logged.reasons, ensure_ascii=False)
        report = control.forget_item(writer, item_id)
        assert report.log_entries_erased == 1 and report.scrub == {"checkpoint": "complete"}
        assert [m for m in MARKS if m.encode() in _bytes(path)] == []
        assert writer.integrity_check() == []
    finally:
        writer.close()


def test_without_the_scrub_the_tokens_stay(tmp_path: Path) -> None:
    """The control: erasing the rows alone leaves index tokens and old pages in the file."""
    path = tmp_path / "m.sqlite"
    writer, item_id = _store_with_secret(path)
    reader = SQLiteMemoryStore(path)
    try:
        from lcm_core.store.models import MemoryEvent

        writer.forget_item(item_id, MemoryEvent(item_id, "s1", "forgotten"))
        writer.forget_event("s1", 500)
        assert [m for m in MARKS if m.encode() in _bytes(path)] != []
    finally:
        reader.close()
        writer.close()
