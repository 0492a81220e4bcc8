"""Export any store to DuckDB, Parquet and JSONL and read every row back; stats by hand counts."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow", reason="export needs pyarrow (the duckdb extra)")

from lcm_core.reports.analytics import build_report, reason_class  # noqa: E402
from lcm_core.reports.export import export_store, stats_report  # noqa: E402
from lcm_core.reports.files import MANIFEST_NAME, ExportError, read_manifest  # noqa: E402
from lcm_core.reports.jsonl import read_jsonl  # noqa: E402
from lcm_core.store.errors import StoreError  # noqa: E402
from lcm_core.store.models import (  # noqa: E402
    SCHEMA_VERSION,
    TABLES,
    AssemblyLog,
    ValidationLog,
)
from lcm_core.store.ports import MemoryStore  # noqa: E402
from lcm_core.store.registry import open_store  # noqa: E402
from lcm_core.testing.builders import (  # noqa: E402
    CHINESE,
    MIXED,
    make_event,
    make_item,
    populate,
    supersede,
)

MAIN = "会话-甲"
OTHER = "session-b"
SECRET = "api_key=sk-live-0123456789abcdefABCDEF0123"


def build(path: Path) -> MemoryStore:
    """Two sessions; `MAIN` has a chain of three items and logs with known omissions."""
    store = open_store(str(path))
    populate(store, MAIN)
    populate(store, OTHER)
    store.insert_events(
        [
            make_event(MAIN, 3, MIXED, role="user", store="archive"),
            make_event(MAIN, 4, f"部署密钥 {SECRET}", role="user"),
            make_event(MAIN, 5, "好的", type="assistant/message", role="assistant"),
        ]
    )
    first, _ = store.insert_item(make_item(MAIN, f"端口是 3000。{CHINESE}", kind="decision"))
    second, _ = store.insert_item(make_item(MAIN, "端口是 4000", kind="decision"))
    third, _ = store.insert_item(make_item(MAIN, "端口是 5000", kind="decision"))
    supersede(store, first, second)
    supersede(store, second, third)
    omitted: Any = (
        {
            "section": "memory",
            "ref": first.id,
            "reason": "score 0.123 is below retrieval.minScore 0.5",
        },
        {
            "section": "evidence",
            "ref": "seq:5",
            "reason": "needs 40 tokens, 12 of the budget 800 left",
        },
        {
            "section": "evidence",
            "ref": "seq:4",
            "reason": "needs 7 tokens, 2 of the budget 800 left",
        },
    )
    store.add_assembly_log(
        AssemblyLog(
            session_id=MAIN,
            trigger="pre-step",
            budget_tokens=800,
            used_tokens=600,
            injected=True,
            omitted=omitted,
            created_at="2026-11-02T10:00:00.000+00:00",
        ),
        retention=50,
    )
    violation = {"check": "no-port-3000", "type": "forbidden", "message": "端口 3000"}
    store.add_validation_log(
        ValidationLog(
            session_id=MAIN,
            target="reply",
            ok=False,
            event_seq=5,
            checked=2,
            blocked=True,
            violations=(violation, violation, {"check": "cite", "type": "regex"}),
        )
    )
    return store


@pytest.fixture
def source(tmp_path: Path) -> Iterator[MemoryStore]:
    store = build(tmp_path / "src" / "memory.sqlite")
    yield store
    store.close()


def rows_of(store: MemoryStore, session: str | None = None) -> dict[str, list[dict[str, Any]]]:
    return {t: list(store.export_rows(t, session_id=session)) for t in TABLES}


def parquet_rows(folder: Path) -> dict[str, list[dict[str, Any]]]:
    con = duckdb.connect()
    out = {}
    for table in TABLES:
        cursor = con.execute("SELECT * FROM read_parquet(?)", [str(folder / f"{table}.parquet")])
        names = [d[0] for d in cursor.description]
        out[table] = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return out


def jsonl_rows(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {t: list(read_jsonl(folder / f"{t}.jsonl")) for t in TABLES}


def duckdb_rows(path: Path, session: str | None = None) -> dict[str, list[dict[str, Any]]]:
    store = open_store(f"duckdb://{path}")
    try:
        return rows_of(store, session)
    finally:
        store.close()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_fixture_has_what_the_round_trip_must_carry(source: MemoryStore) -> None:
    """The source holds CJK text, archived events, superseded items and a row in every table."""
    rows = rows_of(source)
    assert all(rows[t] for t in TABLES), [t for t in TABLES if not rows[t]]
    assert any(CHINESE in r["text"] for r in rows["events"])
    assert any(r["store"] == "archive" for r in rows["events"]) and rows["archive"]
    assert sum(r["status"] == "superseded" for r in rows["memory_items"]) == 2


@pytest.mark.parametrize("fmt", ["parquet", "duckdb", "jsonl"])
def test_every_row_reads_back_equal(source: MemoryStore, tmp_path: Path, fmt: str) -> None:
    """Each table of the export holds exactly the source's rows, values and order equal."""
    out = tmp_path / "out" / f"export.{fmt}"
    result = export_store(source, fmt, out)
    read = {"parquet": parquet_rows, "jsonl": jsonl_rows, "duckdb": duckdb_rows}[fmt]
    expected = rows_of(source)
    assert read(out) == expected
    assert result.tables == {t: len(expected[t]) for t in TABLES}
    assert result.schema_version == SCHEMA_VERSION


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_folders_record_the_schema_and_are_private(
    source: MemoryStore, tmp_path: Path, fmt: str
) -> None:
    """A folder export is 0700, its files 0600, and export.json names format and schema."""
    out = tmp_path / "exports" / "one"
    export_store(source, fmt, out, session_id=MAIN)
    manifest = read_manifest(out)
    assert (manifest.format, manifest.schema_version, manifest.session) == (
        fmt,
        SCHEMA_VERSION,
        MAIN,
    )
    assert manifest.tables["events"] == 6
    assert mode(out) == 0o700 and mode(out.parent) == 0o700
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted([MANIFEST_NAME, *(f"{t}.{fmt}" for t in TABLES)])
    assert all(mode(p) == 0o600 for p in out.iterdir())


def test_a_duckdb_export_is_a_private_working_store(source: MemoryStore, tmp_path: Path) -> None:
    """The DuckDB file is 0600, searchable, and takes new log rows after the loaded ids."""
    out = tmp_path / "export.duckdb"
    export_store(source, "duckdb", out)
    assert mode(out) == 0o600
    store = open_store(f"duckdb://{out}")
    try:
        assert store.integrity_check() == []
        hits = store.search_events(MAIN, ["预算"])
        assert [h.event.seq for h in hits] == [1]
        before = max(r["id"] for r in store.export_rows("assembly_logs"))
        new_id = store.add_assembly_log(
            AssemblyLog(session_id=MAIN, trigger="t", budget_tokens=1, used_tokens=1), retention=50
        )
        assert new_id > before
    finally:
        store.close()


@pytest.mark.parametrize("fmt", ["parquet", "duckdb", "jsonl"])
def test_the_session_filter_keeps_one_session_and_the_global_tables(
    source: MemoryStore, tmp_path: Path, fmt: str
) -> None:
    """--session exports that session's rows only; skills, rules and meta stay whole."""
    out = tmp_path / f"one.{fmt}"
    export_store(source, fmt, out, session_id=MAIN)
    read = {"parquet": parquet_rows, "jsonl": jsonl_rows, "duckdb": duckdb_rows}[fmt]
    got = read(out)
    assert got == rows_of(source, MAIN)
    assert {r["session_id"] for r in got["events"]} == {MAIN}
    assert len(got["rules"]) == 2


def test_a_parquet_export_from_duckdb_copies_directly(source: MemoryStore, tmp_path: Path) -> None:
    """DuckDB to Parquet (COPY from its own tables) gives the same rows as SQLite to Parquet."""
    export_store(source, "duckdb", tmp_path / "a.duckdb")
    store = open_store(f"duckdb://{tmp_path / 'a.duckdb'}")
    try:
        export_store(store, "parquet", tmp_path / "from-duckdb", session_id=MAIN)
    finally:
        store.close()
    export_store(source, "parquet", tmp_path / "from-sqlite", session_id=MAIN)
    assert parquet_rows(tmp_path / "from-duckdb") == parquet_rows(tmp_path / "from-sqlite")


def test_an_existing_target_needs_force(source: MemoryStore, tmp_path: Path) -> None:
    """A second export to the same place fails unless forced, and then replaces it."""
    out = tmp_path / "x"
    export_store(source, "jsonl", out)
    with pytest.raises(ExportError, match="--force"):
        export_store(source, "jsonl", out)
    export_store(source, "jsonl", out, session_id=OTHER, force=True)
    assert read_manifest(out).session == OTHER
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ExportError, match="not an lcm export"):
        export_store(source, "parquet", foreign, force=True)
    assert (foreign / "keep.txt").exists()


class _Failing:
    """A store whose events stream breaks half way."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[dict[str, Any]]:
        for index, row in enumerate(self._inner.export_rows(table, session_id=session_id)):
            if table == "events" and index == 2:
                raise OSError("disk went away")
            yield row


@pytest.mark.parametrize("fmt", ["parquet", "duckdb", "jsonl"])
def test_a_failed_export_leaves_nothing_behind(
    source: MemoryStore, tmp_path: Path, fmt: str
) -> None:
    """No target and no staging file remain after an export fails midway."""
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises((OSError, StoreError), match="disk went away"):
        export_store(_Failing(source), fmt, folder / "x")  # type: ignore[arg-type]
    assert list(folder.iterdir()) == []


@pytest.mark.skipif(
    importlib.util.find_spec("lcm_core.text.redact") is None, reason="no lcm_core.text.redact"
)
def test_redact_replaces_secrets_in_text_and_keeps_other_rows(
    source: MemoryStore, tmp_path: Path
) -> None:
    """--redact hides the key in event text; rows without secrets are unchanged."""
    out = tmp_path / "red"
    export_store(source, "jsonl", out, redact=True)
    plain = rows_of(source)
    got = jsonl_rows(out)
    secret_rows = [r for r in got["events"] if r["seq"] == 4 and r["session_id"] == MAIN]
    assert (
        SECRET not in json.dumps(got, ensure_ascii=False) and "[REDACTED:" in secret_rows[0]["text"]
    )
    assert [r for r in got["events"] if r["seq"] != 4] == [
        r for r in plain["events"] if r["seq"] != 4
    ]
    assert got["memory_items"] == plain["memory_items"]
    assert read_manifest(out).redacted is True


def test_stats_match_hand_counts(source: MemoryStore, tmp_path: Path) -> None:
    """The report's numbers are the ones the fixture wrote."""
    report, how = stats_report(source)
    assert how == "duckdb over a parquet copy"
    assert report["totals"] == source.stats()
    sessions = {s["session"]: s for s in report["sessions"]}
    assert sessions[MAIN]["events"] == 6 and sessions[OTHER]["events"] == 3
    assert sessions[MAIN]["types"] == {"assistant/message": 1, "tool/result": 1, "user/message": 4}
    assert sessions[MAIN]["assembly_logs"] == 2
    assert report["events_by_type"] == {"assistant/message": 1, "tool/result": 2, "user/message": 6}
    items = report["memory_items"]
    assert items["total"] == 7
    assert items["by_status"] == {"active": 3, "disputed": 2, "superseded": 2}
    assert items["by_kind"] == {"decision": 3, "fact": 2, "preference": 2}
    chains = report["supersession"]
    assert (chains["chains"], chains["items_in_chains"]) == (1, 3)
    assert chains["by_length"] == [{"length": 3, "chains": 1}]
    steps = [s["id"] for s in chains["longest"][0]["items"]]
    contents = {r["id"]: r["content"] for r in source.export_rows("memory_items")}
    assert [contents[i] for i in steps] == [f"端口是 3000。{CHINESE}", "端口是 4000", "端口是 5000"]
    assembly = report["assembly"]
    assert (assembly["runs"], assembly["injected"], assembly["used_tokens"]) == (3, 1, 620)
    first_day = assembly["by_day"][0]
    assert (first_day["day"], first_day["runs"], first_day["max_used_tokens"]) == (
        "2026-11-02",
        1,
        600,
    )
    assert assembly["omissions"]["by_reason"] == {
        "needs N tokens, N of the budget N left": 2,
        "score N is below retrieval.minScore N": 1,
    }
    validation = report["validation"]
    assert (validation["runs"], validation["failed"], validation["blocked"]) == (3, 1, 1)
    assert validation["by_check"] == [
        {"check": "cite", "type": "regex", "violations": 1, "runs": 1},
        {"check": "no-port-3000", "type": "forbidden", "violations": 2, "runs": 1},
    ]


def test_stats_are_the_same_from_every_export_and_the_duckdb_store(
    source: MemoryStore, tmp_path: Path
) -> None:
    """The report over Parquet, JSONL, a DuckDB file and a DuckDB store is one report."""
    expected, _ = stats_report(source, MAIN)
    for fmt in ("parquet", "jsonl", "duckdb"):
        export_store(source, fmt, tmp_path / fmt)
        assert stats_report(None, MAIN, export=tmp_path / fmt)[0] == expected, fmt
    store = open_store(f"duckdb://{tmp_path / 'duckdb'}")
    try:
        report, how = stats_report(store, MAIN)
    finally:
        store.close()
    assert how == "duckdb store" and report == expected
    assert {s["session"] for s in expected["sessions"]} == {MAIN}


def test_sqlite_runs_the_same_report_sql(source: MemoryStore, tmp_path: Path) -> None:
    """The portable SQL gives SQLite the very report DuckDB gives (benchmark parity)."""
    path = Path(source.url.removeprefix("sqlite://"))
    con = sqlite3.connect(path)
    try:
        report = build_report(
            lambda sql, params: con.execute(sql, list(params)).fetchall(),
            {t: t for t in TABLES},
            None,
        )
    finally:
        con.close()
    assert report == stats_report(source)[0]


def test_stats_refuse_an_export_of_another_schema(source: MemoryStore, tmp_path: Path) -> None:
    """A manifest with another schema version is a one-line error, not a wrong report."""
    out = tmp_path / "old"
    export_store(source, "parquet", out)
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest["schema_version"] = 1
    (out / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(Exception, match="schema v1"):
        stats_report(None, export=out)


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("needs 40 tokens, 12 of the budget 800 left", "needs N tokens, N of the budget N left"),
        (
            "source of superseded item mem_ab12_cd34; not quoted",
            "source of superseded item <item>; not quoted",
        ),
        ("score -0.25 is below retrieval.minScore 0.5", "score N is below retrieval.minScore N"),
        (None, "(none)"),
    ],
)
def test_reason_class_drops_numbers_and_ids(reason: str | None, kind: str) -> None:
    """Omission reasons group by their wording, not by the numbers in them."""
    assert reason_class(reason) == kind
