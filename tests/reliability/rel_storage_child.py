"""Child of the damaged-storage tests, run where the parent cannot be: as another user,
under a file-size limit, or inside a mount namespace with a tiny or read-only file system.

Usage:
  rel_storage_child.py probe DB SESSION COUNT   read what is there, then try to write
  rel_storage_child.py fill DB SESSION START LOG  write until the disk refuses, then check
                                                   (LOG: a session log to `lcm ingest`)

Prints one JSON object. Every host-facing call is made through `MemoryRuntime`, which
must keep answering: its failures are recorded, never raised.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from rel_support import matches_stream, stream_event

from lcm_adapter.envelope.capture import capture_event
from lcm_core.config import load_config
from lcm_core.store.errors import StoreError
from lcm_core.store.models import Event
from lcm_store_sqlite import SQLiteMemoryStore

# The `lcm` script's shebang may point where another user cannot go: call the CLI
# through this interpreter instead.
LCM = [sys.executable, "-c", "from lcm_adapter.cli.main import main; main()"]


def error_of(exc: BaseException) -> dict[str, Any]:
    return {
        "type": type(exc).__name__,
        "store_error": isinstance(exc, StoreError),
        "text": str(exc),
    }


def cli(*args: str) -> dict[str, Any]:
    """Run the `lcm` command line; its exit code and output (None when it cannot start)."""
    try:
        done = subprocess.run([*LCM, *args], capture_output=True, text=True, timeout=300)
    except OSError as exc:  # e.g. a user that cannot execute this interpreter's path
        return {"returncode": None, "stderr": str(exc), "stdout": ""}
    return {
        "returncode": done.returncode,
        "stderr": done.stderr[-500:],
        "stdout": done.stdout[-2000:],
    }


def runtime_checks(store: Any, session: str, seq: int) -> dict[str, Any]:
    """Drive the host-facing runtime over this store; what it answered, never raising."""
    from lcm_adapter.runtime import MemoryRuntime

    runtime = MemoryRuntime(store=store, config=load_config())
    out: dict[str, Any] = {}
    try:
        report = runtime.on_event(session, stream_event(seq))
        out["capture_errors_reported"] = report.error_count
        message = runtime.pre_step(session, [{"role": "user", "content": "预算 p95"}], 9, 1)
        out["pre_step_answered"] = True
        out["pre_step_message"] = message is not None
        out["status_text"] = runtime.command(session, ["status"])[:200]
        out["stats"] = runtime.stats.to_dict()
    except Exception as exc:  # the runtime must not raise: report it as a failure
        out["raised"] = error_of(exc)
    return out


def probe(db: str, session: str, count: int) -> dict[str, Any]:
    out: dict[str, Any] = {"doctor": cli("--db", db, "doctor")}
    try:
        store = SQLiteMemoryStore(db)
    except Exception as exc:
        out["open"] = error_of(exc)
        return out
    out["open"] = "ok"
    try:
        events = store.list_events(session)
        out["rows"] = len(events)
        out["intact"] = sum(1 for e in events if matches_stream(e, e.seq))
        out["expected"] = count
        try:
            store.insert_event(Event(session, count + 1, "user/message", text="a new row"))
            out["write"] = "ok"
        except Exception as exc:
            out["write"] = error_of(exc)
        report = capture_event(store, session, stream_event(count + 2), load_config())
        out["capture_errors"] = [issue.reason for issue in report.errors]
        try:
            out["integrity"] = store.integrity_check()
        except Exception as exc:
            out["integrity"] = error_of(exc)
        out["runtime"] = runtime_checks(store, session, count + 3)
    finally:
        store.close()
    return out


def session_log(path: Path, start: int, count: int) -> Path:
    """A DSH session log of `count` large events, for `lcm ingest` on a full disk.

    The parent writes it before the disk fills (imported from here).
    """
    lines = [json.dumps({"type": "session", "version": 4, "id": "full-log", "cwd": "/w"})]
    for seq in range(start, start + count):
        event = stream_event(seq)
        if event["type"] == "user/message":
            event["data"]["content"][0]["text"] += " padding " * 2_000
        lines.append(json.dumps(event, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fill(db: str, session: str, start: int, log: Path) -> dict[str, Any]:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a size limit then fails the write
    config = load_config()
    out: dict[str, Any] = {}
    store = SQLiteMemoryStore(db)
    acked: list[int] = []
    errors: list[str] = []
    seq = start
    try:
        while len(errors) < 20 and seq < start + 20_000:
            event = stream_event(seq)
            if event["type"] == "tool/result":
                event["data"]["content"][0]["content"] *= 40  # fill faster
            report = capture_event(store, session, event, config)
            if report.errors:
                errors.append(report.errors[0].reason)
            else:
                acked.append(seq)
            seq += 1
        out["acked"] = acked
        out["errors"] = errors[:3]
        out["error_count"] = len(errors)
        out["runtime"] = runtime_checks(store, session, seq + 1)
    except Exception as exc:  # capture must never raise
        out["raised"] = error_of(exc)
    finally:
        store.close()
    out["ingest"] = cli("--db", db, "ingest", "--quiet", str(log))
    try:
        store = SQLiteMemoryStore(db)
        try:
            stored = {e.seq: e for e in store.list_events(session)}
            out["acked_lost"] = [s for s in acked if not matches_stream(stored.get(s), s)]
            out["integrity"] = store.integrity_check()
        finally:
            store.close()
    except Exception as exc:
        out["reopen"] = error_of(exc)
    return out


def main() -> None:
    mode, db, session, number = sys.argv[1:5]
    if mode == "probe":
        result = probe(db, session, int(number))
    else:
        result = fill(db, session, int(number), Path(sys.argv[5]))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
