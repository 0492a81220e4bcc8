"""`lcm forget | remember | pin | unpin` and `lcm inspect seq:N`, through the CLI on a file."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_core.config import load_config
from lcm_core.extraction.run import run_extraction
from lcm_core.store.models import Event, Session
from lcm_core.store.registry import open_store
from lcm_core.testing.builders import make_item

SID = "会话-ctl"
SECRET = "紫檀木-Zanzibar7731"
# The secret's own trigrams (the FTS index's tokens, case-folded) that no other text has.
SECRET_BITS = (SECRET, "Zanzibar7731", "紫檀木", "檀木-", "-za", "zan", "anz", "nzi", "zib", "iba")
MESSAGES = (
    "staging 数据库的端口是 6432。",
    f"我们决定用 {SECRET} 作为部署代号，不要改。",
    "部署只能在周五之前完成，预算不超过3000元（含税）。",
    "Actually, the staging database port is 5433, not 6432.",
)
FILLER = "Let's look at file src/module_17.py next"


def build(path: Path, *, filler_events: int = 0) -> None:
    """A session of four user messages, extracted; many filler events make several FTS
    segments (one per transaction), so a forget must merge them to drop the tokens."""
    store = open_store(str(path))
    store.upsert_session(Session(SID))
    for seq, text in enumerate(MESSAGES):
        store.insert_event(Event(SID, seq, "user/message", text, role="user", source_kind="user"))
    run_extraction(store, SID, load_config({}))
    for start in range(0, filler_events, 100):
        store.insert_events(
            Event(SID, 100 + n, "tool/result", f"row {n}: 数据 data {n * 7}", role="tool")
            for n in range(start, start + 100)
        )
    store.close()


def lcm(db: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == 0, result.output
    return result


def lcm_json(db: Path, *args: str) -> Any:
    return json.loads(lcm(db, *args, "--json").stdout)


def item_with(db: Path, words: str) -> dict[str, Any]:
    found = lcm_json(db, "search", words, "--session", SID)["items"]
    assert found, words
    return found[0]


def compact(db: Path, first_seq: int) -> None:
    store = open_store(str(db))
    for offset, kind in enumerate(("compaction/start", "compaction/summary", "compaction/end")):
        store.insert_event(Event(SID, first_seq + offset, kind, "之前的对话已压缩。"))
    store.close()


def file_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.sqlite"
    build(path, filler_events=600)
    return path


def test_a_forgotten_item_never_returns_and_leaves_no_bytes(db: Path, tmp_path: Path) -> None:
    """After `lcm forget`, no search, block, export or reextract shows the text, and
    neither the database file nor its WAL holds its bytes."""
    item = item_with(db, "部署代号")
    assert SECRET in item["content"] and SECRET.encode() in file_bytes(db)
    report = lcm_json(db, "forget", item["id"], "--reason", "说错了 wrong")
    assert report["items"] == [item["id"]] and report["events"] == [1]
    assert report["scrub"] == {"checkpoint": "complete"}
    data = file_bytes(db)
    assert not [bit for bit in SECRET_BITS if bit.encode() in data]
    found = lcm_json(db, "search", "紫檀木 Zanzibar7731 部署代号", "--session", SID)
    assert item["id"] not in [i["id"] for i in found["items"]]
    assert "紫檀木" not in json.dumps([found["items"], found["events"]], ensure_ascii=False)
    block = lcm_json(db, "assemble", "--session", SID, "--query", "部署代号是什么 紫檀木")
    assert item["id"] not in block["item_ids"] and "紫檀木" not in block["text"]
    # Parquet and DuckDB exports need the duckdb extra: tests/store_duckdb/test_forget.py.
    formats = ("jsonl", "parquet", "duckdb") if find_spec("duckdb") else ("jsonl",)
    for fmt in formats:
        out = tmp_path / f"export-{fmt}"
        lcm(db, "export", "--format", fmt, "--out", str(out))
        files = [out] if out.is_file() else sorted(out.iterdir())
        assert not any(b"Zanzibar7731" in f.read_bytes() for f in files), fmt
    rows = [json.loads(line) for line in (tmp_path / "export-jsonl/memory_items.jsonl").open()]
    (tomb,) = [r for r in rows if r["id"] == item["id"]]
    assert (tomb["status"], tomb["content"], tomb["content_hash"]) == ("forgotten", "", "")
    lcm(db, "reextract", "--session", SID)
    again = lcm_json(db, "search", "紫檀木 Zanzibar7731", "--session", SID)
    assert again["items"] == [] and again["events"] == []
    inspected = lcm_json(db, "inspect", item["id"])["item"]
    assert inspected["item"]["status"] == "forgotten"
    assert [r["event"] for r in inspected["lifecycle"]][-1] == "forgotten"
    assert inspected["lifecycle"][-1]["detail"]["reason"] == "说错了 wrong"


def test_forgetting_a_correction_does_not_revive_what_it_replaced(db: Path) -> None:
    """The 6432 port stays superseded when the 5433 correction is forgotten; the user is told."""
    new = item_with(db, "staging database port 5433")
    (old_id,) = lcm_json(db, "inspect", new["id"])["item"]["item"]["supersedes"]
    text = lcm(db, "forget", new["id"]).stdout
    assert f"{old_id} stays superseded" in text
    old = lcm_json(db, "inspect", old_id)["item"]["item"]
    assert old["status"] == "superseded"
    items = lcm_json(db, "search", "staging 端口 port", "--session", SID)["items"]
    assert old_id not in [i["id"] for i in items] and new["id"] not in [i["id"] for i in items]


def test_forget_one_event_forgets_the_items_only_it_supported(db: Path) -> None:
    """`forget --event` erases the message; the budget item derived from it alone goes too."""
    budget = item_with(db, "预算 3000")
    report = lcm_json(db, "forget", "--event", "2", "--session", SID, "--reason", "隐私")
    assert report["events"] == [2] and report["items"] == [budget["id"]]
    assert lcm_json(db, "search", "预算 3000", "--session", SID)["items"] == []
    event = lcm_json(db, "inspect", "seq:2", "--session", SID)
    assert event["kind"] == "event" and event["event"]["store"] == "forgotten"
    assert event["event"]["text"] == "" and [i["id"] for i in event["derived"]] == [budget["id"]]
    assert "(forgotten)" in lcm(db, "inspect", "seq:2", "--session", SID).stdout


def test_inspect_an_event_label(db: Path) -> None:
    """`lcm inspect seq:N --session S` shows the event's text and the items citing it."""
    shown = lcm_json(db, "inspect", "seq:1", "--session", SID)
    assert shown["event_text"] == MESSAGES[1] and len(shown["derived"]) == 1
    text = lcm(db, "inspect", "seq:1", "--session", SID).stdout
    assert "user/message" in text and SECRET in text
    missing = CliRunner().invoke(cli, ["--db", str(db), "inspect", "seq:99", "--session", SID])
    assert missing.exit_code == 1 and "no event 'seq:99'" in missing.stderr


def test_a_remembered_item_is_in_the_next_block(db: Path) -> None:
    """`lcm remember` stores a user_explicit item with a manual source the block cites."""
    said = "发布前必须跑完 e2e 测试，coverage ≥ 80%"
    got = lcm_json(db, "remember", said, "--kind", "constraint", "--session", SID)
    item = got["item"]
    assert got["created"] and got["seq"] == -1 and item["source_refs"] == ["seq:-1"]
    assert (item["kind"], item["evidence_type"]) == ("constraint", "user_explicit")
    block = lcm_json(db, "assemble", "--session", SID, "--query", "发布前要做什么 e2e")
    assert item["id"] in block["item_ids"] and said in block["text"]
    source = lcm_json(db, "inspect", item["id"])["item"]["sources"][0]
    assert source["event"]["type"] == "memory/remember" and source["text"] == said
    twice = lcm_json(db, "remember", said, "--session", SID)
    assert not twice["created"] and twice["item"]["id"] == item["id"]
    second = lcm_json(db, "remember", "我偏好用 tabs 缩进", "--session", SID)
    assert second["seq"] == -2 and second["item"]["kind"] == "preference"


def test_remember_refuses_empty_text(db: Path) -> None:
    run = CliRunner().invoke(cli, ["--db", str(db), "remember", "  ", "--session", SID])
    assert run.exit_code == 1 and "nothing to remember" in run.stderr


def test_a_pinned_item_survives_a_compaction_first(db: Path) -> None:
    """After a compaction a filler step restates the pinned item first; unpinned it is gone."""
    store = open_store(str(db))
    idea = make_item(
        SID,
        "可以考虑把导出改成每小时一次 hourly export",
        kind="proposal",
        evidence_type="assistant_proposal",
        source_refs=("seq:3",),
        derived_from_seq=3,
    )
    store.insert_item(idea)
    store.close()
    compact(db, 50)
    before = lcm_json(db, "assemble", "--session", SID, "--query", FILLER)
    assert idea.id not in before["item_ids"]
    pinned = lcm_json(db, "pin", idea.id)
    assert pinned["changed"] and pinned["pins"] == [idea.id]
    after = lcm_json(db, "assemble", "--session", SID, "--query", FILLER)
    resident = next(s for s in after["explain"]["sections"] if s["name"] == "resident")
    assert resident["refs"][0] == idea.id and idea.content in after["text"]
    assert lcm_json(db, "pin", idea.id)["changed"] is False
    lcm(db, "unpin", idea.id)
    assert idea.id not in lcm_json(db, "assemble", "--session", SID, "--query", FILLER)["item_ids"]


def test_forget_needs_an_id_or_an_event(db: Path) -> None:
    run = CliRunner().invoke(cli, ["--db", str(db), "forget"])
    assert run.exit_code == 2 and "give either an item ID or --event SEQ" in run.output
    run = CliRunner().invoke(cli, ["--db", str(db), "forget", "mem_nope"])
    assert run.exit_code == 1 and "no memory item 'mem_nope'" in run.stderr
