"""`lcm ingest`: DSH session logs in, read-only and idempotent; damage reported, rest kept."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.ingest import ingest_paths
from lcm_adapter.dsh.sample import conversation, lines_of, sample_turns, write_plain, write_zstd
from lcm_adapter.runtime import MemoryRuntime

SID = "session-甲"
EVENTS = conversation(sample_turns() * 5)  # 80 events


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under root with its content hash: proof that nothing was written."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def ingest(db: Path, *paths: Path) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", "--json", *map(str, paths)])
    data = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, data, result.stderr


def stored(db: Path, session_id: str = SID) -> list[tuple[int, str, str]]:
    runtime = MemoryRuntime.open(str(db))
    try:
        return [(e.seq, e.type, e.text) for e in runtime.store.list_events(session_id)]
    finally:
        runtime.close()


def test_plain_log_is_ingested_once(tmp_path: Path) -> None:
    """A second run over the same log adds nothing."""
    log = write_plain(tmp_path / "sessions" / "--w--" / SID / "session.v4.jsonl", SID, EVENTS)
    code, first, _ = ingest(tmp_path / "m.sqlite", log)
    assert code == 0 and (first["events"], first["inserted"], first["sessions"]) == (80, 80, 1)
    code, second, _ = ingest(tmp_path / "m.sqlite", log)
    assert code == 0 and (second["inserted"], second["duplicates"]) == (0, 80)
    assert [seq for seq, _, _ in stored(tmp_path / "m.sqlite")] == list(range(80))


def test_ingest_matches_live_capture(tmp_path: Path) -> None:
    """The events table after ingest equals the one live capture builds from the same events."""
    log = write_plain(tmp_path / "s" / "session.v4.jsonl", SID, EVENTS)
    ingest(tmp_path / "ingested.sqlite", log)
    live = MemoryRuntime.open(str(tmp_path / "live.sqlite"))
    for event in EVENTS:
        live.on_event(SID, event)
    live.close()
    assert stored(tmp_path / "ingested.sqlite") == stored(tmp_path / "live.sqlite")


def test_multi_frame_zstd_log_reads_every_frame(tmp_path: Path) -> None:
    """All frames count, not just the first one that holds the header."""
    pytest.importorskip("zstandard")
    log = write_zstd(tmp_path / "s" / "session.v4.jsonl.zstd", SID, EVENTS, per_frame=3)
    code, data, _ = ingest(tmp_path / "m.sqlite", log)
    assert code == 0 and data["inserted"] == 80 and data["issues"] == []


def test_corrupt_frame_is_reported_and_the_rest_ingested(tmp_path: Path) -> None:
    """One damaged frame loses its own lines; the report names file and line."""
    zstandard = pytest.importorskip("zstandard")
    compressor = zstandard.ZstdCompressor()
    lines = lines_of(SID, EVENTS)
    frames = [compressor.compress(b"".join(lines[i : i + 10])) for i in range(0, len(lines), 10)]
    broken = bytearray(frames[3])
    broken[len(broken) // 2 :] = bytes(len(broken) - len(broken) // 2)  # zero the back half
    frames[3] = bytes(broken)
    log = tmp_path / "s" / "session.v4.jsonl.zstd"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"".join(frames))
    code, data, stderr = ingest(tmp_path / "m.sqlite", log)
    assert code == 1
    assert data["inserted"] == 80 - 10
    assert len(data["issues"]) == 1 and data["issues"][0].startswith(
        f"{log}:31: corrupt zstd frame 4"
    )
    assert f"{log}:31: corrupt zstd frame 4" in stderr
    seqs = [seq for seq, _, _ in stored(tmp_path / "m.sqlite")]
    assert seqs == [s for s in range(80) if not 29 <= s <= 38]


def test_truncated_last_line_is_reported(tmp_path: Path) -> None:
    """A half-written last line (a live writer) is reported with its line number."""
    log = write_plain(tmp_path / "s" / "session.v4.jsonl", SID, EVENTS)
    with log.open("ab") as handle:
        handle.write(b'{"type":"user/message","seq":80,"data":{"con')
    code, data, stderr = ingest(tmp_path / "m.sqlite", log)
    assert code == 1 and data["inserted"] == 80
    assert data["issues"] == [f"{log}:82: truncated last line (the log may still be being written)"]
    assert "truncated last line" in stderr


def test_a_bad_line_in_the_middle_does_not_stop_the_file(tmp_path: Path) -> None:
    """A line that is not JSON is reported; the lines after it still count."""
    lines = lines_of(SID, EVENTS)
    lines.insert(5, b"this is not json\n")
    log = tmp_path / "s" / "session.v4.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"".join(lines))
    code, data, _ = ingest(tmp_path / "m.sqlite", log)
    assert code == 1 and data["inserted"] == 80
    assert data["issues"] == [f"{log}:6: line is not valid JSON"]


def test_packed_chunk_rows_expand_to_one_event_per_seq(tmp_path: Path) -> None:
    """A `text-chunks` row covers seq0..seq0+n-1, as the host numbers them."""
    packed = {
        "type": "text-chunks",
        "seq0": 3,
        "time0": 1796004637700,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["你", "好", "!"]},
    }
    events = [*conversation(sample_turns()[:1])[:3], packed]
    log = write_plain(tmp_path / "s" / "session.v4.jsonl", SID, events)
    code, data, _ = ingest(tmp_path / "m.sqlite", log)
    assert code == 0 and data["inserted"] == 6
    assert [(seq, kind) for seq, kind, _ in stored(tmp_path / "m.sqlite")][3:] == [
        (3, "assistant/chunk"),
        (4, "assistant/chunk"),
        (5, "assistant/chunk"),
    ]


def test_a_sessions_tree_is_walked_read_only(tmp_path: Path) -> None:
    """A whole $DSH_HOME/sessions tree: every log found, nothing written inside it."""
    pytest.importorskip("zstandard")
    root = tmp_path / "dsh" / "sessions"
    write_plain(root / "--a--" / "s1" / "session.v4.jsonl", "s1", EVENTS[:8])
    write_zstd(root / "--a--" / "s2" / "session.v4.jsonl.zstd", "s2", EVENTS[:12])
    write_plain(root / "--b--" / "s3" / "session.jsonl", "s3", EVENTS[:4])
    (root / "--b--" / "s3" / "session.lock").write_text("busy", encoding="utf-8")
    (root / "--b--" / "notes.txt").write_text("not a log", encoding="utf-8")
    before = tree_digest(root)
    code, data, _ = ingest(tmp_path / "m.sqlite", root)
    assert code == 0 and (data["files"], data["sessions"], data["inserted"]) == (3, 3, 24)
    code, data, _ = ingest(tmp_path / "m.sqlite", root / "--a--" / "s1")
    assert code == 0 and data["files"] == 1 and data["inserted"] == 0
    assert tree_digest(root) == before


def test_missing_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A path that does not exist is a usage error on one line."""
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "m.sqlite"), "ingest", str(tmp_path / "无")]
    )
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "no such file or folder" in result.stderr


def test_progress_reports_events_per_second(tmp_path: Path) -> None:
    """The progress callback sees growing totals; the summary line has events/s."""
    log = write_plain(tmp_path / "s" / "session.v4.jsonl", SID, conversation(sample_turns() * 600))
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    seen: list[int] = []
    try:
        report = ingest_paths(runtime, [log], lambda r, p: seen.append(r.events))
    finally:
        runtime.close()
    assert seen == sorted(seen) and seen[-1] == report.events == 9600
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "n.sqlite"), "ingest", str(log)])
    assert result.exit_code == 0 and "events/s" in result.stdout
