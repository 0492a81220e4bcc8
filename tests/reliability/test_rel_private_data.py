"""Private data: file modes, purge that deletes exactly what it names, exports, script folder.

The database, its WAL and SHM files and every export are created 0600 inside a 0700
folder, whatever the umask. `purge` of one session out of three leaves nothing of it
findable and every count consistent; purge without a target, or `--all` without
`--yes`, deletes nothing. Script checks load only from `validation.scriptDir`.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_support as rs

from lcm_core.config import load_config
from lcm_core.store.models import TABLES
from lcm_store_sqlite import SQLiteMemoryStore

runtime_module = pytest.importorskip("lcm_adapter.runtime")

LCM = [sys.executable, "-c", "from lcm_adapter.cli.main import main; main()"]
SESSIONS = ("alpha-会话", "bravo-会话", "charlie-会话")
MARKERS = {session: f"QZM{index}marker" for index, session in enumerate(SESSIONS)}
# Tables whose rows belong to one session (the others are shared: meta, skills, rules).
SESSION_TABLES = (
    "sessions",
    "events",
    "archive",
    "memory_items",
    "memory_events",
    "task_state",
    "checkpoints",
    "assembly_logs",
    "validation_logs",
    "pending_extraction",
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def lcm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LCM, *args], capture_output=True, text=True, timeout=300, env=env)


# --- file modes ------------------------------------------------------------------------------

_CREATE = """
import sys
from lcm_adapter.envelope.capture import capture_batch
from lcm_core.config import load_config
from lcm_store_sqlite import SQLiteMemoryStore
import rel_support as rs
store = SQLiteMemoryStore(sys.argv[1])
capture_batch(store, "s", list(rs.stream(0, 50)), load_config())
print("open")
sys.stdout.flush()
sys.stdin.readline()  # the parent looks at the WAL and SHM files while they exist
store.close()
"""


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o002])
def test_database_wal_and_shm_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    """A new store's file, WAL and SHM are 0600 and its new folder 0700."""
    path = tmp_path / "home" / "long-conversation-memory" / "memory.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", _CREATE, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=rs.child_env(),
        preexec_fn=lambda: os.umask(umask),
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == "open"
    files = {
        name: mode(path.with_name(path.name + suffix))
        for name, suffix in (("db", ""), ("wal", "-wal"), ("shm", "-shm"))
    }
    folder = mode(path.parent)
    proc.stdin.write("\n")
    proc.stdin.flush()
    proc.wait(timeout=60)
    rs.bump("private.mode_cases")
    rs.bump("private.mode_violations", sum(m != 0o600 for m in files.values()) + (folder != 0o700))
    assert files == {"db": 0o600, "wal": 0o600, "shm": 0o600}
    assert folder == 0o700


def test_default_location_under_dsh_home_is_private(tmp_path: Path) -> None:
    """The default database under `$DSH_HOME` gets a 0700 folder and a 0600 file."""
    env = {**rs.child_env(), "DSH_HOME": str(tmp_path / "dsh")}
    env.pop("LCM_DB", None)
    (tmp_path / "no-skills").mkdir()
    # A command that adds memory creates the default database (read commands never do).
    done = lcm("skills", "ingest", str(tmp_path / "no-skills"), "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert lcm("doctor", "--json", env=env).returncode == 0
    data_dir = tmp_path / "dsh" / "long-conversation-memory"
    database = data_dir / "memory.sqlite"
    assert database.exists()
    assert mode(data_dir) == 0o700 and mode(database) == 0o600


# --- three sessions, then purge one ------------------------------------------------------------


def session_events(session: str) -> list[dict[str, Any]]:
    """A short session whose every message carries the session's marker."""
    tag = MARKERS[session]
    events: list[dict[str, Any]] = []
    for turn in range(6):
        base = turn * 4
        events.append(rs.user_message(base, f"{tag} 预算不超过{3000 + turn}元（含税），周五前交付"))
        events.append(rs.assistant_message(base + 1, f"{tag} 好的，我建议缓存 {turn} 分钟。"))
        events.append(rs.tool_call(base + 2, "shell", {"cmd": f"grep {tag}"}, f"c{base}"))
        body = f"{tag} result line\n" * (2_000 if turn == 0 else 1)  # the first is archived
        events.append(rs.tool_result(base + 3, body, f"c{base}"))
    return events


@pytest.fixture
def three_sessions(tmp_path: Path) -> Iterator[Path]:
    """A database with three sessions, each with events, archive, items and logs."""
    path = tmp_path / "data" / "memory.sqlite"
    runtime = runtime_module.MemoryRuntime.open(str(path), load_config())
    try:
        for session in SESSIONS:
            for event in session_events(session):
                runtime.on_event(session, event)
            runtime.pre_step(session, [{"role": "user", "content": "预算多少？"}], 7, 1)
            assert runtime.stats.capture_errors == 0
    finally:
        runtime.close()
    yield path


def findable(store: SQLiteMemoryStore, session: str) -> int:
    """How many rows of any session mention this session's marker."""
    tag = MARKERS[session]
    events = store.search_events(None, [tag], limit=1_000)
    items = store.search_items(None, [tag], statuses=("active", "superseded", "disputed"))
    return len(events) + len(items)


def test_purge_of_one_session_leaves_nothing_of_it_and_counts_add_up(
    three_sessions: Path,
) -> None:
    """After purging one of three sessions: none of its rows remain, the others are intact."""
    path = three_sessions
    store = SQLiteMemoryStore(path)
    try:
        before = {session: store.stats(session) for session in SESSIONS}
        assert all(before[s]["events"] and before[s]["archive"] for s in SESSIONS)
        assert all(before[s]["memory_items"] and before[s]["assembly_logs"] for s in SESSIONS)
    finally:
        store.close()
    victim, *kept = SESSIONS
    done = lcm("--db", str(path), "purge", "--session", victim, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    reported = json.loads(done.stdout)
    store = SQLiteMemoryStore(path)
    try:
        after = {session: store.stats(session) for session in SESSIONS}
        total = store.stats()
        leftovers = findable(store, victim)
        problems = store.integrity_check()
        remaining_found = {session: findable(store, session) for session in kept}
    finally:
        store.close()
    deleted = reported.get("deleted", reported)
    rs.record(
        "private.purge",
        {
            "sessions": len(SESSIONS),
            "rows_deleted": sum(v for v in deleted.values() if isinstance(v, int)),
            "rows_expected": sum(before[victim][t] for t in SESSION_TABLES),
            "victim_rows_findable_after": leftovers,
            "integrity_failures": len(problems),
            "other_sessions_unchanged": all(after[s] == before[s] for s in kept),
        },
    )
    assert leftovers == 0
    assert all(after[victim][table] == 0 for table in SESSION_TABLES)
    assert all(after[s] == before[s] for s in kept)
    assert all(remaining_found[s] > 0 for s in kept)
    for table in SESSION_TABLES:
        assert total[table] == sum(after[s][table] for s in kept), table
        assert deleted.get(table, 0) == before[victim][table], (table, deleted)
    assert problems == []


def test_purge_without_a_target_or_confirmation_deletes_nothing(three_sessions: Path) -> None:
    """`purge` alone, `purge --all` without `--yes`, and an unknown session change nothing."""
    path = three_sessions
    store = SQLiteMemoryStore(path)
    try:
        before = store.stats()
    finally:
        store.close()
    refused = [lcm("--db", str(path), "purge"), lcm("--db", str(path), "purge", "--all")]
    unknown = lcm("--db", str(path), "purge", "--session", "no-such-session", "--json")
    store = SQLiteMemoryStore(path)
    try:
        after = store.stats()
    finally:
        store.close()
    assert all(done.returncode != 0 for done in refused), [d.stderr for d in refused]
    assert all("Traceback" not in done.stderr for done in refused)
    assert unknown.returncode in (0, 1) and "Traceback" not in unknown.stderr
    assert after == before


def test_purge_all_with_yes_keeps_only_the_schema(three_sessions: Path) -> None:
    """`purge --all --yes` deletes every row but the metadata, and the file stays healthy."""
    path = three_sessions
    done = lcm("--db", str(path), "purge", "--all", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    store = SQLiteMemoryStore(path)
    try:
        counts = store.stats()
        assert all(counts[t] == 0 for t in TABLES if t != "meta")
        assert counts["meta"] > 0 and store.schema_version() > 0
        assert store.integrity_check() == []
        assert all(findable(store, s) == 0 for s in SESSIONS)
    finally:
        store.close()


# --- exports -----------------------------------------------------------------------------------


def test_host_export_command_writes_a_private_file(three_sessions: Path) -> None:
    """`memory export` (the host command) writes 0600 files in 0700 folders, umask or not."""
    path = three_sessions
    runtime = runtime_module.MemoryRuntime.open(str(path), load_config())
    old = os.umask(0o022)
    try:
        result = runtime.command_result(SESSIONS[1], ["export"])
    finally:
        os.umask(old)
        runtime.close()
    assert result.ok, result.text
    exports = [p for p in (path.parent / "exports").iterdir() if p.is_dir()]
    assert len(exports) == 1
    files = list(exports[0].iterdir())
    assert any(f.name == "events.jsonl" for f in files)
    rs.bump("private.export_cases")
    for written in files:
        assert mode(written) == 0o600, (written.name, oct(mode(written)))
    assert mode(exports[0]) == 0o700, oct(mode(exports[0]))
    assert mode(exports[0].parent) == 0o700, oct(mode(exports[0].parent))


def _cli_has_export() -> bool:
    return lcm("export", "--help").returncode == 0


@pytest.fixture
def secrets_db(tmp_path: Path) -> Path:
    """A store whose user messages hold every secret of the redaction corpus."""
    if not _cli_has_export():
        pytest.skip("`lcm export` is not in this build yet")
    from rel_redaction_corpus import SECRETS

    path = tmp_path / "data" / "memory.sqlite"
    runtime = runtime_module.MemoryRuntime.open(str(path), load_config())
    try:
        for seq, secret in enumerate(SECRETS):
            runtime.on_event("secrets", rs.user_message(seq, f"记住这个：{secret.text}"))
    finally:
        runtime.close()
    return path


def export(db: Path, out: Path, fmt: str, *extra: str) -> list[Path]:
    """Run `lcm export` under umask 022; the files it wrote."""
    old = os.umask(0o022)
    try:
        done = lcm("--db", str(db), "export", "--format", fmt, "--out", str(out), *extra)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    return [out] if out.is_file() else sorted(p for p in out.rglob("*") if p.is_file())


def strings_in(files: list[Path]) -> str:
    """Every string value of the JSON lines in these files, decoded, one per line."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in files:
        if path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                walk(json.loads(line))
    return "\n".join(found)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "duckdb"])
def test_cli_exports_are_private(secrets_db: Path, tmp_path: Path, fmt: str) -> None:
    """Every file an export writes is 0600, in 0700 folders, under umask 022."""
    out = tmp_path / "exports" / f"all-{fmt}"
    files = export(secrets_db, out, fmt)
    folders = {p.parent for p in files} | {out.parent}
    rs.bump("private.export_cases")
    assert files
    assert all(mode(p) == 0o600 for p in files), {str(p): oct(mode(p)) for p in files}
    assert all(mode(f) == 0o700 for f in folders), {str(f): oct(mode(f)) for f in folders}


def test_cli_export_redact_replaces_every_corpus_secret(secrets_db: Path, tmp_path: Path) -> None:
    """`lcm export --redact` leaves none of the corpus secrets in the written rows."""
    from rel_redaction_corpus import SECRETS

    plain = strings_in(export(secrets_db, tmp_path / "p", "jsonl"))
    text = strings_in(export(secrets_db, tmp_path / "r", "jsonl", "--redact"))
    present = [s.kind for s in SECRETS if s.value in plain]
    missed = [s.kind for s in SECRETS if s.value in text]
    rs.record("private.export_redaction", {"secrets": len(SECRETS), "missed": len(missed)})
    assert len(present) == len(SECRETS), "the plain export must hold the secrets to begin with"
    assert missed == []
    assert "[REDACTED:" in text


# --- script checks -------------------------------------------------------------------------------

_EVIL = """
from pathlib import Path
Path({sentinel!r}).write_text("loaded")
deterministic = True
def check(text, context):
    return []
"""
_GOOD = """
deterministic = True
def check(text, context):
    return [{"message": "found forbidden word"}] if "forbidden" in text else []
"""


def test_script_checks_load_only_from_the_configured_folder(tmp_path: Path) -> None:
    """Paths outside `validation.scriptDir` (absolute, `..`, symlinks, home) never load."""
    validation = pytest.importorskip("lcm_core.validation.validate")
    scripts = tmp_path / "scripts"
    outside = tmp_path / "outside"
    scripts.mkdir()
    outside.mkdir()
    sentinel = tmp_path / "sentinel"
    (outside / "evil.py").write_text(_EVIL.format(sentinel=str(sentinel)))
    (scripts / "good.py").write_text(_GOOD)
    (scripts / "link.py").symlink_to(outside / "evil.py")
    (scripts / "linkdir").symlink_to(outside)
    (scripts / "notpython.txt").write_text(_EVIL.format(sentinel=str(sentinel)))
    hostile = [
        str(outside / "evil.py"),
        "../outside/evil.py",
        "link.py",
        "linkdir/evil.py",
        "notpython.txt",
        "./../outside/evil.py",
        "scripts/../../outside/evil.py",
        "~/../../" + str(outside / "evil.py").lstrip("/"),
        "evil\x00.py",
        "",
    ]
    refused = 0
    for index, value in enumerate(hostile):
        check = {"type": "script", "id": f"h{index}", "path": value}
        config = load_config({"validation": {"checks": [check], "scriptDir": str(scripts)}})
        outcome = validation.evaluate("some text", config)
        refused += int(bool(outcome.errors) and not outcome.violations)
        assert outcome.errors, value
    good = load_config(
        {
            "validation": {
                "checks": [{"type": "script", "id": "g", "path": "good.py"}],
                "scriptDir": str(scripts),
            }
        }
    )
    unset = load_config({"validation": {"checks": [{"type": "script", "path": "good.py"}]}})
    ran = validation.evaluate("a forbidden word", good)
    disabled = validation.evaluate("a forbidden word", unset)
    rs.record("private.script_paths", {"hostile": len(hostile), "refused": refused})
    assert not sentinel.exists(), "a script outside validation.scriptDir was loaded"
    assert refused == len(hostile)
    assert ran.violations and not ran.errors
    assert disabled.errors and not disabled.violations
