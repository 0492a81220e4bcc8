"""`lcm reextract`: re-derives items from stored events; the sidecar does it once on open."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_core.config import load_config
from lcm_core.extraction.reextract import VERSION_KEY
from lcm_core.steps.reextract import upgrade_on_open
from lcm_core.store.models import Event, Session
from lcm_core.store.registry import open_store
from lcm_core.testing.builders import make_item

SID = "会话-re"
NAV = "Let's look at file src/module_3.py next, it handles case 3"


def old_store(path: Path) -> None:
    """A database whose only item is a navigation line the old rules took for a decision."""
    store = open_store(str(path))
    store.upsert_session(Session(SID))
    texts = ["staging 的 DB 在 port 6432 上。", NAV + "."]
    store.insert_events(
        Event(SID, seq, "user/message", text, role="user", source_kind="user")
        for seq, text in enumerate(texts)
    )
    store.insert_item(make_item(SID, NAV, kind="decision", extractor="lcm-rules@1"))
    store.close()


def test_reextract_command_reports_before_and_after(tmp_path: Path) -> None:
    """The navigation decision is retracted, the plain fact appears; a rerun changes nothing."""
    db = tmp_path / "m.sqlite"
    old_store(db)
    run = CliRunner().invoke(cli, ["--db", str(db), "reextract", "--json"])
    assert run.exit_code == 0, run.output
    (report,) = json.loads(run.stdout)["sessions"]
    assert report["before"] == {"decision/active": 1}
    assert report["after"] == {"decision/retracted": 1, "fact/active": 1}
    again = CliRunner().invoke(cli, ["--db", str(db), "reextract", "--session", SID])
    assert again.exit_code == 0 and "added 0, retired 0" in again.stdout


def test_unknown_session_is_one_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    old_store(db)
    run = CliRunner().invoke(cli, ["--db", str(db), "reextract", "--session", "nope"])
    assert run.exit_code == 1 and "no session 'nope'" in run.stderr


def test_upgrade_on_open_runs_once(tmp_path: Path) -> None:
    """An older store is re-derived and marked; the next open does nothing."""
    db = tmp_path / "m.sqlite"
    old_store(db)
    store = open_store(str(db))
    try:
        (report,) = upgrade_on_open(store, load_config())
        assert report.retired == 1 and report.added == 1 and store.get_meta(VERSION_KEY)
        assert upgrade_on_open(store, load_config()) == []
    finally:
        store.close()


def test_sidecar_re_derives_an_older_store_on_first_open(tmp_path: Path) -> None:
    """The sidecar's first open upgrades the items; the host never sees it fail."""
    from lcm_adapter.dsh.sidecar import Sidecar
    from lcm_adapter.runtime import MemoryRuntime

    db = tmp_path / "m.sqlite"
    old_store(db)
    sidecar = Sidecar(lambda settings: MemoryRuntime.open(str(db), settings))
    runtime = sidecar.runtime()
    assert runtime is not None
    statuses = {(i.kind, i.status) for i in runtime.store.list_items(SID)}
    sidecar.close()
    assert statuses == {("decision", "retracted"), ("fact", "active")}
