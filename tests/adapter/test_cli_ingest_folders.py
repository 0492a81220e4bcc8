"""`lcm ingest DIR`: which files are logs, what was skipped and why, the bar, and Ctrl-C."""

from __future__ import annotations

import importlib.util
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh import ingest as ingest_module
from lcm_adapter.dsh import ingest_progress
from lcm_adapter.dsh.sample import conversation, sample_turns, write_plain, write_zstd
from lcm_adapter.runtime import MemoryRuntime

HAS_ZSTD = importlib.util.find_spec("zstandard") is not None
EVENTS = conversation(sample_turns() * 5)  # 80 events


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), "ingest", *args])


def test_any_jsonl_with_a_session_header_is_read_and_the_rest_listed(tmp_path: Path) -> None:
    root = tmp_path / "logs 日志"
    write_plain(root / "a" / "chat-甲.jsonl", "甲", EVENTS[:10])
    (root / "a" / "history.jsonl").write_text('{"type": "input", "text": "hi"}\n', "utf-8")
    (root / "a" / "empty.jsonl").write_text("", "utf-8")
    (root / "a" / "broken.jsonl").write_text("not json\n", "utf-8")
    (root / "notes.txt").write_text("not a log", "utf-8")
    if HAS_ZSTD:
        write_zstd(root / "b" / "old.jsonl.zst", "乙", EVENTS[:5])
    result = run(tmp_path / "m.sqlite", str(root))
    assert result.exit_code == 0, result.output
    reasons = dict(
        re.match(r"lcm: skipped (.*): (.*)", line).groups()  # type: ignore[union-attr]
        for line in result.stderr.splitlines()
    )
    assert reasons == {
        str(root / "a" / "history.jsonl"): "first line is not a DSH session line",
        str(root / "a" / "empty.jsonl"): "empty",
        str(root / "a" / "broken.jsonl"): "first line is not JSON",
        str(root / "notes.txt"): "not a .jsonl, .jsonl.zst or .jsonl.zstd file",
    }
    files = 2 if HAS_ZSTD else 1
    assert result.stdout.startswith(f"{10 + 5 * (files - 1)} events from {files} files")
    data = json.loads(run(tmp_path / "m.sqlite", str(root), "--json").stdout)
    assert len(data["skipped"]) == 4 and data["inserted"] == 0


def test_a_folder_without_logs_exits_1_and_creates_nothing(tmp_path: Path) -> None:
    root = tmp_path / "empty-ish"
    root.mkdir()
    (root / "readme.md").write_text("hello", "utf-8")
    db = tmp_path / "db" / "m.sqlite"
    result = run(db, str(root))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[-1] == f"lcm: no DSH session logs in {root} (1 files skipped)"
    assert lines[0].startswith(f"lcm: skipped {root / 'readme.md'}: not a .jsonl")
    assert not db.parent.exists()


def test_a_terminal_gets_a_bar_with_total_and_eta_and_one_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system=None)
    monkeypatch.setattr(ingest_progress, "stderr_console", lambda: console)
    monkeypatch.setattr(ingest_module, "BATCH", 20)
    log = write_plain(tmp_path / "s" / "session.v4.jsonl", "丙", EVENTS)
    result = run(tmp_path / "m.sqlite", str(log))
    assert result.exit_code == 0, result.output
    drawn = screen.getvalue()
    size_kb = f"{log.stat().st_size / 1000:.1f}"
    assert "ingest" in drawn and "ETA" in drawn and f"/{size_kb} kB" in drawn
    assert "80 events" in drawn
    assert result.stdout.count("events from 1 files") == 1 and "so far" not in result.output


def test_ctrl_c_says_what_was_committed_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_module, "BATCH", 10)
    log = write_plain(tmp_path / "s" / "session.v4.jsonl", "丁", EVENTS)
    real = MemoryRuntime.on_events
    calls = {"n": 0}

    def interrupted(self: MemoryRuntime, session_id: str, events: list, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(self, session_id, events, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryRuntime, "on_events", interrupted)
    db = tmp_path / "m.sqlite"
    result = run(db, str(log))
    assert result.exit_code == 130
    assert result.stderr == (
        "lcm: interrupted: 30 new events committed (30 read from 1 files); "
        "run the same command again to resume: stored events are skipped\n"
    )
    monkeypatch.setattr(MemoryRuntime, "on_events", real)
    again = json.loads(run(db, str(log), "--json").stdout)
    assert (again["inserted"], again["duplicates"]) == (50, 30)
