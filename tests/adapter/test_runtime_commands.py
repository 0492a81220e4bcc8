"""The `memory` command through MemoryRuntime: status, explain, inspect, search, export, purge."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lcm_adapter.commands import split_input
from lcm_adapter.dsh.sample import conversation, sample_turns
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.testing.builders import make_item

SID = "会话-cmd"


@pytest.fixture
def rt(tmp_path: Path) -> MemoryRuntime:
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    runtime.on_events(SID, conversation(sample_turns()))
    yield runtime
    runtime.close()


def test_status_reports_counts_and_cursors(rt: MemoryRuntime) -> None:
    """Status names the session, the event count, the cursors and the error counters."""
    result = rt.command_result(SID, ["status"])
    assert result.ok
    assert SID in result.text and re.search(r"^events +16$", result.text, re.M)
    assert "cursors" in result.text and "errors" in result.text


def test_a_leading_memory_word_and_no_subcommand_mean_status(rt: MemoryRuntime) -> None:
    """`memory` alone is `memory status`; the word `memory` itself may lead."""
    assert (
        rt.command(SID, []) == rt.command(SID, ["memory", "status"]) == rt.command(SID, ["status"])
    )


def test_unknown_subcommand_gives_usage(rt: MemoryRuntime) -> None:
    """A typo is an error with the usage line, not an exception."""
    result = rt.command_result(SID, ["statsu"])
    assert not result.ok and "usage: memory status" in result.text


def test_explain_before_any_assembly(rt: MemoryRuntime) -> None:
    """Explain says plainly that nothing was assembled yet."""
    assert "no assembly has been logged" in rt.command(SID, ["explain"])


def test_search_finds_chinese_and_english_events(rt: MemoryRuntime) -> None:
    """Search lists matching raw events with their seq."""
    text = rt.command(SID, ["search", "预算"])
    assert "seq:1" in text and "seq:9" in text
    assert "seq:5" in rt.command(SID, ["search", "deploy", "window"])
    assert not rt.command_result(SID, ["search"]).ok


def test_inspect_shows_an_item_and_refuses_unknown_ids(rt: MemoryRuntime) -> None:
    """Inspect prints the item with its kind and content; an unknown id is an error."""
    item, _ = rt.store.insert_item(
        make_item(SID, "不要使用 Redis", kind="constraint", source_refs=("seq:1",))
    )
    text = rt.command(SID, ["inspect", item.id])
    assert item.id in text and "constraint" in text and "不要使用 Redis" in text
    assert "source seq:1" in text
    assert not rt.command_result(SID, ["inspect", "mem_nope"]).ok
    assert not rt.command_result(SID, ["inspect"]).ok


def test_export_writes_the_session_as_a_jsonl_export(rt: MemoryRuntime, tmp_path: Path) -> None:
    """Export writes the core exporter's JSONL folder (a manifest, a file per table) and
    says how many rows; a second export replaces the first."""
    target = tmp_path / "out" / "导出"
    result = rt.command_result(SID, ["export", str(target)])
    assert result.ok and str(target) in result.text and "lcm import" in result.text
    manifest = json.loads((target / "export.json").read_text(encoding="utf-8"))
    assert manifest["format"] == "jsonl" and manifest["session"] == SID
    lines = (target / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert len(events) == 16 and events[1]["text"] == sample_turns()[0][0]
    assert rt.command_result(SID, ["export", str(target)]).ok


def test_export_refuses_to_replace_what_is_not_an_export(rt: MemoryRuntime, tmp_path: Path) -> None:
    """A file or a folder of something else at the target is left alone, with a one-line error."""
    notes = tmp_path / "notes.txt"
    notes.write_text("mine", encoding="utf-8")
    result = rt.command_result(SID, ["export", str(notes)])
    assert not result.ok and result.text.startswith("memory: ") and "\n" not in result.text
    assert notes.read_text(encoding="utf-8") == "mine"


def test_export_default_path_is_beside_the_database(rt: MemoryRuntime, tmp_path: Path) -> None:
    """Without a name the export goes to exports/<session> next to the database."""
    result = rt.command_result(SID, ["export"])
    assert result.ok
    assert [p.name for p in (tmp_path / "exports").iterdir()] == [SID]
    assert (tmp_path / "exports" / SID / "export.json").is_file()


def test_host_export_round_trips_through_lcm_import(rt: MemoryRuntime, tmp_path: Path) -> None:
    """`memory export` inside the host, then `lcm import` into another database: the
    session comes back row for row (it used to be a file `lcm import` refused)."""
    from click.testing import CliRunner

    from lcm_adapter.cli.main import cli
    from lcm_core.store.models import TABLES

    target = tmp_path / "exports" / "会话"
    assert rt.command_result(SID, ["export", str(target)]).ok
    copy = tmp_path / "copy.sqlite"
    done = CliRunner().invoke(cli, ["--db", str(copy), "import", str(target)])
    assert done.exit_code == 0, done.output
    again = MemoryRuntime.open(str(copy))
    try:
        for table in TABLES:
            if table in ("meta", "memory_events", "assembly_logs", "validation_logs"):
                continue  # global keys, and ids a new store may renumber
            theirs = list(again.store.export_rows(table, session_id=SID))
            ours = list(rt.store.export_rows(table, session_id=SID))
            assert theirs == ours, table
        before = [(e.memory_id, e.event) for e in rt.store.list_memory_events(session_id=SID)]
        after = [(e.memory_id, e.event) for e in again.store.list_memory_events(session_id=SID)]
        assert after == before
    finally:
        again.close()


def test_purge_needs_yes(rt: MemoryRuntime) -> None:
    """Purge without --yes only says what it would delete; with --yes the session is gone."""
    preview = rt.command(SID, ["purge"])
    assert "would delete" in preview and rt.store.stats(SID)["events"] == 16
    assert not rt.command_result(SID, ["purge", "--force"]).ok
    assert rt.command_result(SID, ["purge", "--yes"]).ok
    assert rt.store.stats(SID)["events"] == 0


def test_split_input_handles_quotes_and_broken_quotes() -> None:
    """Command input splits like a shell; an unbalanced quote falls back to spaces."""
    assert split_input(' search "deploy window" 预算') == ["search", "deploy window", "预算"]
    assert split_input('search "oops') == ["search", '"oops']


def test_remember_pin_and_forget_through_the_memory_command(rt: MemoryRuntime) -> None:
    """`/memory remember|pin|unpin|forget` and `inspect seq:N`: what DSH's command runs."""
    said = rt.command_result(
        SID, split_input("remember --kind constraint 上线前必须通知值班同事 on-call")
    )
    assert said.ok and "remembered mem_" in said.text and "(constraint)" in said.text
    item_id = said.text.split()[1]
    assert "上线前必须通知值班同事" in rt.command(SID, ["search", "值班同事"])
    assert "memory/remember" in rt.command(SID, ["inspect", "seq:-1"])
    assert f"pinned now: {item_id}" in rt.command(SID, ["pin", item_id])
    assert "was already pinned" in rt.command(SID, ["pin", item_id])
    assert "pinned now: none" in rt.command(SID, ["unpin", item_id])
    gone = rt.command_result(SID, split_input(f"forget {item_id} 说错了"))
    assert gone.ok and f"forgot {item_id}" in gone.text and "seq:-1" in gone.text
    assert item_id not in rt.command(SID, ["search", "值班同事"])
    assert "(forgotten)" in rt.command(SID, ["inspect", "seq:-1"])
    assert "already forgotten" in rt.command(SID, ["forget", item_id])
    for bad in (["forget"], ["forget", "mem_nope"], ["remember"], ["pin", "mem_nope"]):
        assert not rt.command_result(SID, bad).ok, bad


def test_a_forgotten_message_stays_forgotten_when_the_host_replays_it(rt: MemoryRuntime) -> None:
    """`/memory forget --event SEQ`, then DSH replays the session to a restarted sidecar:
    the tombstone keeps its seq, and the message's items do not come back."""
    before = rt.command(SID, ["search", "deploy", "window"])
    assert "Friday 18:00" in before
    gone = rt.command_result(SID, split_input("forget --event 5 用户要求"))
    assert gone.ok and "seq:5" in gone.text, gone.text
    rt.on_events(SID, conversation(sample_turns()))
    assert "(forgotten)" in rt.command(SID, ["inspect", "seq:5"])
    assert "Friday 18:00" not in rt.command(SID, ["search", "deploy", "window"])
    assert not rt.command_result(SID, ["forget", "--event", "x"]).ok
