"""Children of the concurrency test: writers that capture, a reader that assembles.

Usage:
  rel_workers.py writer DB INDEX COUNT GO_FILE
  rel_workers.py reader DB GO_FILE STOP_FILE

All wait for GO_FILE before they open the store, so they start together. A writer captures COUNT events: half into
its own session `own-INDEX` (seqs 0..COUNT/2-1), half into the shared session `shared`
at seqs INDEX*COUNT/4 onwards, so neighbouring writers overlap. It alternates the live
path (`capture_event`), batches (`capture_batch`) and direct `insert_events` calls.
The reader assembles (and logs) a block for every session in a loop until STOP_FILE
appears, and checks that row counts never go down. Each prints one JSON summary line.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rel_support import marker, stream_event

from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_core.config import load_config
from lcm_core.store.errors import StoreBusyError
from lcm_core.store.models import Event
from lcm_store_sqlite import SQLiteMemoryStore

try:
    from lcm_core.extraction.run import run_extraction as _run_extraction
except ImportError:  # not landed yet: writers only capture
    _run_extraction = None
from lcm_core.steps.prestep import StepRequest, pre_step

SHARED = "shared"
QUERIES = ("预算 含税 周五", "p95 latency cache warm", "PostgreSQL MySQL", "output line 17")


def wait_for(path: Path) -> None:
    while not path.exists():
        time.sleep(0.005)


def is_lock_error(text: str) -> bool:
    lowered = text.lower()
    return "busy" in lowered or "locked" in lowered


def chunks(pairs: list[int], session: str, rng: random.Random) -> list[tuple[str, list[int]]]:
    out: list[tuple[str, list[int]]] = []
    position = 0
    while position < len(pairs):
        size = rng.randint(1, 40)
        out.append((session, pairs[position : position + size]))
        position += size
    return out


def plan(index: int, count: int, rng: random.Random) -> list[tuple[str, list[int], str]]:
    """This writer's work: (session, seqs, mode) runs, own and shared interleaved."""
    half = count // 2
    base = index * (count // 4)
    own = chunks(list(range(half)), f"own-{index}", rng)
    shared = chunks(list(range(base, base + half)), SHARED, rng)
    runs: list[tuple[str, list[int], str]] = []
    while own or shared:
        source = own if (own and (not shared or rng.random() < 0.5)) else shared
        session, seqs = source.pop(0)
        # Direct port inserts only in a writer's own session: their text is not the
        # capture's, and the shared session must hold the same text whoever wins.
        modes = ("live", "batch", "direct") if session != SHARED else ("live", "batch")
        runs.append((session, seqs, rng.choice(modes)))
    return runs


def direct_insert(store: SQLiteMemoryStore, session: str, seqs: list[int]) -> int:
    """Insert events straight through the port, as a backfill tool would."""
    events = [
        Event(session, seq, str(stream_event(seq)["type"]), text=marker("s", seq)) for seq in seqs
    ]
    return store.insert_events(events)


def write_run(
    store: SQLiteMemoryStore, session: str, seqs: list[int], mode: str, config: Any
) -> tuple[int, list[str]]:
    """One run through the chosen path: (rows inserted, error reasons reported)."""
    if mode == "direct":
        return direct_insert(store, session, seqs), []
    inserted = 0
    reasons: list[str] = []
    if mode == "live":
        for seq in seqs:
            report = capture_event(store, session, stream_event(seq), config)
            inserted += report.inserted
            reasons.extend(issue.reason for issue in report.errors)
    else:
        report = capture_batch(store, session, [stream_event(seq) for seq in seqs], config)
        inserted += report.inserted
        reasons.extend(issue.reason for issue in report.errors)
    return inserted, reasons


def writer(db: str, index: int, count: int, go: Path) -> dict[str, Any]:
    config = load_config()
    rng = random.Random(index)
    runs = plan(index, count, rng)
    summary: Counter[str] = Counter()
    errors: list[str] = []
    wait_for(go)
    store = SQLiteMemoryStore(db)
    try:
        for session, seqs, mode in runs:
            for _attempt in range(3):
                try:
                    inserted, reasons = write_run(store, session, seqs, mode, config)
                except StoreBusyError as exc:  # reached the caller: the figure must stay 0
                    summary["lock_errors_raised"] += 1
                    errors.append(f"{mode}: raised {exc}")
                    continue
                except Exception as exc:
                    summary["raised"] += 1
                    errors.append(f"{mode}: raised {exc!r}")
                    break
                summary["calls"] += 1
                summary["inserted"] += inserted
                for reason in reasons:
                    summary["lock_errors_reported" if is_lock_error(reason) else "errors"] += 1
                    errors.append(f"{mode}: {reason}")
                break
            if _run_extraction is not None and session != SHARED:
                try:
                    _run_extraction(store, session, config)
                except Exception as exc:
                    key = "lock_errors_extraction" if is_lock_error(str(exc)) else "x_errors"
                    summary[key] += 1
                    errors.append(f"extraction: {exc!r}")
    finally:
        store.close()
    return {"role": "writer", "index": index, **summary, "first_errors": errors[:5]}


def reader(db: str, go: Path, stop: Path) -> dict[str, Any]:
    config = load_config()
    summary: Counter[str] = Counter()
    errors: list[str] = []
    last: dict[str, int] = {}
    wait_for(go)
    store = SQLiteMemoryStore(db)
    try:
        while not stop.exists():
            sessions = [SHARED, *(f"own-{index}" for index in range(4))]
            for session in sessions:
                query = QUERIES[summary["loops"] % len(QUERIES)]
                try:
                    # the pre-step as a host runs it (the core's, with its log row)
                    request = StepRequest(session, turn=1, step=1)
                    result = pre_step(store, request, config).result
                    summary["assemblies"] += 1
                    summary["injected"] += int(result.injected)
                    for error in result.errors:
                        key = "lock_errors_reported" if is_lock_error(error) else "assembly_errors"
                        summary[key] += 1
                        errors.append(error)
                    summary["searches"] += 1
                    store.search_events(session, query.split(), limit=20)
                    store.search_items(session, query.split(), limit=20)
                    count = store.stats(session)["events"]
                except StoreBusyError as exc:
                    summary["lock_errors_raised"] += 1
                    errors.append(f"raised {exc}")
                    continue
                except Exception as exc:
                    summary["raised"] += 1
                    errors.append(f"raised {exc!r}")
                    continue
                if count < last.get(session, 0):
                    summary["counts_went_down"] += 1
                last[session] = count
            summary["loops"] += 1
    finally:
        store.close()
    return {
        "role": "reader",
        "assembly": True,
        **summary,
        "first_errors": errors[:5],
    }


def main() -> None:
    role = sys.argv[1]
    if role == "writer":
        db, index, count, go = sys.argv[2:6]
        result = writer(db, int(index), int(count), Path(go))
    else:
        db, go, stop = sys.argv[2:5]
        result = reader(db, Path(go), Path(stop))
    print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
