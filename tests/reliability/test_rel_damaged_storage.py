"""Damaged storage: truncated or random files, read-only files and folders, a full disk.

Each gives a clear `StoreError` (one line, no traceback) and a non-zero exit from the
CLI; a file that is not ours is never overwritten; committed rows survive wherever the
file survives; and the host-facing runtime and sidecar keep answering.

The tests run as root, where file modes do not stop writes, so read-only cases run a
child as user `nobody` (setpriv) or inside a mount namespace with a read-only bind mount,
and the full disk is a small tmpfs in a mount namespace or `RLIMIT_FSIZE` in a child.
Each of those is skipped, with the reason, when the machine does not allow it.
"""

from __future__ import annotations

import functools
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_support as rs

from lcm_adapter.envelope.capture import capture_batch
from lcm_core.config import load_config
from lcm_core.store.errors import StoreError, StoreOpenError
from lcm_core.store.models import Event
from lcm_store_sqlite import SQLiteMemoryStore

SESSION = "damaged"
ROWS = 400
NOBODY = 65534
LCM = [sys.executable, "-c", "from lcm_adapter.cli.main import main; main()"]


def build(path: Path, rows: int = ROWS) -> None:
    """A healthy store of `rows` stream events, closed (its WAL checkpointed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    store = SQLiteMemoryStore(path)
    try:
        report = capture_batch(store, SESSION, list(rs.stream(0, rows)), load_config())
        assert report.inserted == rows
    finally:
        store.close()


def doctor(path: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LCM, "--db", str(path), "doctor"], capture_output=True, text=True, timeout=300, **kwargs
    )


def assert_clear_failure(done: subprocess.CompletedProcess[str]) -> None:
    """A non-zero exit with a short explanation and no traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.strip() or done.stdout.strip()


def run_child(argv: list[str], **kwargs: Any) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- files that are not (or no longer) a database ---------------------------------------


def _random_bytes(path: Path) -> None:
    path.write_bytes(random.Random(3).randbytes(300_000))


def _truncated_half(path: Path) -> None:
    build(path)
    os.truncate(path, path.stat().st_size // 2)


def _truncated_header(path: Path) -> None:
    build(path)
    os.truncate(path, 50)


def _zeroed_header(path: Path) -> None:
    build(path)
    with path.open("r+b") as handle:
        handle.write(b"\0" * 100)


def _other_sqlite(path: Path) -> None:
    import sqlite3

    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE notes (body TEXT)")
        raw.execute("INSERT INTO notes VALUES ('someone else''s data')")


DAMAGE = {
    "random-bytes": _random_bytes,
    "truncated-half": _truncated_half,
    "truncated-header": _truncated_header,
    "zeroed-header": _zeroed_header,
    "another-apps-sqlite": _other_sqlite,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_files_give_a_clear_error_and_are_left_untouched(
    tmp_path: Path, damage: str
) -> None:
    """Opening fails with a one-line StoreOpenError, doctor exits non-zero, bytes unchanged."""
    path = tmp_path / "memory.sqlite"
    DAMAGE[damage](path)
    before = path.read_bytes()
    with pytest.raises(StoreOpenError) as caught:
        SQLiteMemoryStore(path)
    done = doctor(path)
    rs.bump("damaged.cases")
    rs.bump("damaged.clear_errors", int("\n" not in str(caught.value) and done.returncode != 0))
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert_clear_failure(done)
    assert path.read_bytes() == before, "a file that is not ours was modified"


@pytest.mark.parametrize("damage", ["random-bytes", "truncated-half"])
def test_sidecar_keeps_answering_over_a_damaged_file(tmp_path: Path, damage: str) -> None:
    """`lcm serve` answers every request, pre-step with no memory and the reason."""
    path = tmp_path / "memory.sqlite"
    DAMAGE[damage](path)
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "event",
            "params": {"sessionId": "s", "event": rs.stream_event(1)},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "preStep",
            "params": {"sessionId": "s", "messages": [], "turn": 1, "step": 1},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown", "params": {}},
    ]
    done = subprocess.run(
        [*LCM, "--db", str(path), "serve"],
        input="".join(json.dumps(call) + "\n" for call in calls),
        capture_output=True,
        text=True,
        timeout=120,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    rs.bump("damaged.sidecar_cases")
    assert set(answers) == {1, 2, 3, 4}
    assert answers[1]["result"]["error"]
    assert answers[2]["result"]["message"] is None
    assert "database" in answers[2]["result"]["reason"]
    assert path.read_bytes() != b"" and done.returncode == 0


def test_a_torn_wal_keeps_every_frame_before_the_tear(tmp_path: Path) -> None:
    """Copies of a live store whose WAL is cut at random points open healthy, keeping a prefix."""
    live = tmp_path / "live" / "memory.sqlite"
    build(live, 100)  # checkpointed: these rows are in the main file
    writer = SQLiteMemoryStore(live)
    try:
        config = load_config()
        for start in range(100, ROWS, 20):  # commits that stay in the WAL
            capture_batch(writer, SESSION, list(rs.stream(start, start + 20)), config)
        wal = live.with_name(live.name + "-wal").read_bytes()
        main = live.read_bytes()
    finally:
        writer.close()
    rng = random.Random(11)
    cuts = sorted(rng.randrange(0, len(wal)) for _ in range(rs.scaled(8, 40)))
    seen: list[int] = []
    for index, cut in enumerate(cuts):
        copy = tmp_path / f"copy{index}" / "memory.sqlite"
        copy.parent.mkdir()
        copy.write_bytes(main)
        copy.with_name(copy.name + "-wal").write_bytes(wal[:cut])
        store = SQLiteMemoryStore(copy)
        try:
            assert store.integrity_check() == []
            seqs = sorted(e.seq for e in store.list_events(SESSION))
            assert seqs == list(range(len(seqs))), "rows kept must be a prefix of the commits"
            assert len(seqs) >= 100 and all(
                rs.matches_stream(e, e.seq) for e in store.list_events(SESSION)
            )
            seen.append(len(seqs))
        finally:
            store.close()
    rs.record("damaged.torn_wal", {"cuts": len(cuts), "rows_kept": seen})
    assert seen == sorted(seen), "a longer WAL prefix never keeps fewer rows"


# --- read-only -----------------------------------------------------------------------------


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder user `nobody` can reach (pytest's own tmp folder is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="lcm-rel-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_nobody(argv: list[str]) -> list[str]:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run a child as another user")
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if not _nobody_can_import(tuple(prefix)):
        pytest.skip(
            "an unprivileged user cannot read this Python environment or checkout "
            "(a private folder above it), so it cannot run lcm as another user here"
        )
    return [*prefix, *argv]


@functools.cache
def _nobody_can_import(prefix: tuple[str, ...]) -> bool:
    """Whether the unprivileged user can import lcm and its dependencies at all."""
    done = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-c",
            "import click, lcm_core.capture.events, lcm_adapter.cli.main",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=rs.child_env(),
        cwd="/",
    )
    return done.returncode == 0


def probe_argv(path: Path) -> list[str]:
    return rs.child_command("rel_storage_child.py", "probe", path, SESSION, ROWS)


def quoted(argv: list[Any]) -> str:
    return " ".join(f"'{part}'" for part in argv)


def in_namespace(script: str) -> subprocess.CompletedProcess[str]:
    """Run a shell script in a private mount namespace, or skip if there is none."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare is not installed")
    done = subprocess.run(
        [unshare, "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        env=rs.child_env(),
    )
    if done.returncode != 0 and "mount" in done.stderr and not done.stdout:
        pytest.skip(f"no mount namespace here: {done.stderr.strip()[:200]}")
    return done


def make_read_only(path: Path, where: str) -> tuple[list[str], list[str]]:
    """Make `path` read-only for a child; (probe argv, doctor argv) of such a child.

    For `mount` each argv is a shell script for `in_namespace`, which bind-mounts the
    folder read-only first (so even root cannot write it).
    """
    doctor_argv = [*LCM, "--db", str(path), "doctor"]
    if where == "mount":
        mount = f"mount --bind -o ro '{path.parent}' '{path.parent}'"
        return (
            [f"{mount} && exec {quoted(probe_argv(path))}"],
            [f"{mount} && exec {quoted(doctor_argv)}"],
        )
    file_mode, folder_mode = {"file": (0o400, 0o700), "folder": (0o600, 0o500)}[where]
    os.chown(path.parent, NOBODY, NOBODY)
    os.chown(path, NOBODY, NOBODY)
    path.chmod(file_mode)
    path.parent.chmod(folder_mode)
    return as_nobody(probe_argv(path)), as_nobody(doctor_argv)


def run_read_only(
    folder: Path, where: str
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """Build a store, make it read-only, probe it and run doctor; (probe result, doctor)."""
    path = folder / "data" / "memory.sqlite"
    build(path)
    probe, doctor_argv = make_read_only(path, where)
    if where == "mount":
        done = in_namespace(probe[0])
        doctor_run = in_namespace(doctor_argv[0])
    else:
        done = subprocess.run(
            probe, capture_output=True, text=True, timeout=600, env=rs.child_env()
        )
        doctor_run = subprocess.run(doctor_argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), doctor_run


def test_read_only_file_reads_and_refuses_writes_clearly(shared_dir: Path) -> None:
    """A 0400 file (as a user who may not write it): reads work, writes get ReadOnlyStoreError."""
    result, doctor_run = run_read_only(shared_dir, "file")
    rs.bump("damaged.read_only_cases")
    assert result["open"] == "ok", result
    assert result["rows"] == result["intact"] == ROWS
    assert result["write"]["type"] == "ReadOnlyStoreError", result["write"]
    assert len(result["capture_errors"]) == 1 and "read-only" in result["capture_errors"][0]
    runtime = result["runtime"]
    assert "raised" not in runtime, runtime
    assert runtime["capture_errors_reported"] >= 1 and runtime["pre_step_answered"]
    assert runtime["status_text"]
    assert_clear_failure(doctor_run)
    assert "read" in (doctor_run.stderr + doctor_run.stdout).lower()


@pytest.mark.parametrize("where", ["folder", "mount"])
def test_read_only_folder_or_mount_fails_to_open_and_keeps_every_row(
    shared_dir: Path, where: str
) -> None:
    """A WAL file whose folder is read-only cannot open: a one-line StoreError, rows kept."""
    result, doctor_run = run_read_only(shared_dir, where)
    rs.bump("damaged.read_only_cases")
    assert result["open"] != "ok" and result["open"]["store_error"], result
    assert "\n" not in result["open"]["text"]
    assert_clear_failure(doctor_run)
    path = shared_dir / "data" / "memory.sqlite"
    path.parent.chmod(0o700)
    store = SQLiteMemoryStore(path)  # as root, with the folder writable again
    try:
        assert store.integrity_check() == []
        events = store.list_events(SESSION)
        assert len(events) == ROWS and all(rs.matches_stream(e, e.seq) for e in events)
    finally:
        store.close()


@pytest.mark.parametrize("where", ["folder", "mount"])
def test_read_only_folder_error_says_read_only(shared_dir: Path, where: str) -> None:
    """The open error of a read-only folder is a ReadOnlyStoreError, not 'not ours'."""
    result, _ = run_read_only(shared_dir, where)
    assert result["open"]["type"] == "ReadOnlyStoreError", result["open"]
    assert "not an lcm memory database" not in result["open"]["text"]


def test_integrity_check_of_a_healthy_read_only_file_reports_no_damage(shared_dir: Path) -> None:
    """A read-only but healthy database is not reported as damaged."""
    result, _ = run_read_only(shared_dir, "file")
    assert result["integrity"] == []


def test_sidecar_keeps_answering_over_a_read_only_folder(shared_dir: Path) -> None:
    """`lcm serve` as a user who cannot write the folder answers pre-step with no memory."""
    path = shared_dir / "data" / "memory.sqlite"
    build(path)
    make_read_only(path, "folder")
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "preStep", "params": {"sessionId": SESSION}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": {}},
    ]
    done = subprocess.run(
        as_nobody([*LCM, "--db", str(path), "serve"]),
        input="".join(json.dumps(call) + "\n" for call in calls),
        capture_output=True,
        text=True,
        timeout=120,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    rs.bump("damaged.sidecar_cases")
    assert set(answers) == {1, 2, 3}, done.stderr[-2000:]
    assert answers[2]["result"]["message"] is None


# --- a full disk ---------------------------------------------------------------------------


def full_disk_log(folder: Path) -> Path:
    """A session log for `lcm ingest` to fail on, written while there is room."""
    from rel_storage_child import session_log

    return session_log(folder / "full-log.jsonl", ROWS + 30_000, 200)


def fill_argv(path: Path, log: Path) -> list[str]:
    return rs.child_command("rel_storage_child.py", "fill", path, SESSION, ROWS, log)


def full_figures(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "writes_refused": result.get("error_count"),
        "first_error": (result.get("errors") or [None])[0],
        "acknowledged": len(result.get("acked", [])),
        "acknowledged_lost": len(result.get("acked_lost", [])),
        "integrity_failures": len(result.get("integrity", [])),
        "ingest_exit": result.get("ingest", {}).get("returncode"),
    }


def check_full(result: dict[str, Any], expect_kind: str | None) -> None:
    """Writes stopped with a clear error, nothing acknowledged was lost, all still answered."""
    assert "raised" not in result, result.get("raised")
    assert result["error_count"] >= 1 and result["acked"], result
    assert all(reason.startswith("store write failed:") for reason in result["errors"])
    if expect_kind is not None:
        assert expect_kind in result["errors"][0], result["errors"]
    assert result["acked_lost"] == []
    assert result["integrity"] == []
    runtime = result["runtime"]
    assert "raised" not in runtime and runtime["pre_step_answered"], runtime
    assert runtime["capture_errors_reported"] >= 1
    ingest = result["ingest"]
    assert_clear_failure(subprocess.CompletedProcess([], **ingest))


def test_full_disk_on_a_small_tmpfs(tmp_path: Path) -> None:
    """On a full file system: 'no space left' errors, acknowledged rows survive, all answer."""
    seed = tmp_path / "seed" / "memory.sqlite"
    build(seed)
    mount = tmp_path / "small"
    mount.mkdir()
    size_kb = seed.stat().st_size // 1024 + 400
    log = full_disk_log(tmp_path)
    child = quoted(fill_argv(mount / "memory.sqlite", log))
    done = in_namespace(
        f"mount -t tmpfs -o size={size_kb}k tmpfs '{mount}' && cp '{seed}' '{mount}/' "
        f"&& exec {child}"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    rs.record("damaged.full_tmpfs", full_figures(result))
    check_full(result, "no space left")


def _limit_file_size(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_full_disk_by_file_size_limit(tmp_path: Path) -> None:
    """Under RLIMIT_FSIZE: writes fail with a StoreError, acknowledged rows survive the child."""
    path = tmp_path / "data" / "memory.sqlite"
    build(path)
    limit = path.stat().st_size + 300_000
    result = run_child(
        fill_argv(path, full_disk_log(tmp_path)),
        env=rs.child_env(),
        preexec_fn=lambda: _limit_file_size(limit),
    )
    rs.record("damaged.full_rlimit", full_figures(result))
    check_full(result, None)
    store = SQLiteMemoryStore(path)
    try:  # without the limit, the same file takes writes again
        assert store.integrity_check() == []
        assert store.stats(SESSION)["events"] >= ROWS + len(result["acked"])
        assert store.insert_event(Event(SESSION, 10**9, "user/message", text="after the limit"))
    finally:
        store.close()


def test_store_errors_are_one_line(tmp_path: Path) -> None:
    """Every StoreError raised by opening a damaged file fits on one line."""
    messages = []
    for name, damage in DAMAGE.items():
        path = tmp_path / name / "memory.sqlite"
        path.parent.mkdir()
        damage(path)
        try:
            SQLiteMemoryStore(path).close()
        except StoreError as exc:
            messages.append(str(exc))
    assert len(messages) == len(DAMAGE)
    assert all("\n" not in m and len(m) < 400 for m in messages)
