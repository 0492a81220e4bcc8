"""Child of the crash test: capture the standard stream and acknowledge each commit.

Usage: rel_crash_child.py DB SESSION START STOP SEED

Captures seqs START <= seq < STOP of the standard stream.

Writes `READY` once the store is open, then one line `ACK <seq> <seq> ...` after every
capture call that returned without errors (the rows are committed by then), or
`ERR <reason>` when one reported errors. After STOP it keeps replaying random windows
below STOP (duplicates, still real transactions) so the parent's kill always lands while
the child is writing. The parent ends it with SIGKILL.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

from rel_support import stream_event

from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_core.config import load_config
from lcm_store_sqlite import SQLiteMemoryStore

try:  # extraction is someone else's module; exercise it too once it exists
    from lcm_core.extraction.run import run_extraction as _run_extraction
except ImportError:
    _run_extraction = None

OUT = sys.stdout.fileno()


def say(line: str) -> None:
    """One line to the parent in a single write (atomic on a pipe below PIPE_BUF)."""
    os.write(OUT, (line + "\n").encode("utf-8"))


def capture(store: Any, session: str, events: list[dict[str, Any]], config: Any) -> None:
    if len(events) == 1:
        report = capture_event(store, session, events[0], config)
    else:
        report = capture_batch(store, session, events, config)
    if report.errors:
        say("ERR " + report.errors[0].reason.replace("\n", " "))
        return
    say("ACK " + " ".join(str(event["seq"]) for event in events))
    if _run_extraction is not None and any(e["type"] == "user/message" for e in events):
        try:
            _run_extraction(store, session, config)
        except Exception as exc:  # not this test's figure; note it for the parent
            say(f"XERR {type(exc).__name__}: {exc}".replace("\n", " "))


def main() -> None:
    path, session, start, stop, seed = sys.argv[1:6]
    rng = random.Random(int(seed))
    config = load_config()
    store = SQLiteMemoryStore(path)
    say("READY")
    seq, end = int(start), int(stop)
    while seq < end:
        size = 1 if rng.random() < 0.5 else rng.randint(2, 24)
        batch = [stream_event(s) for s in range(seq, min(seq + size, end))]
        capture(store, session, batch, config)
        seq += len(batch)
    say("DONE")
    while True:  # replay until killed
        first = rng.randrange(0, end)
        batch = [stream_event(s) for s in range(first, min(first + rng.randint(1, 24), end))]
        capture(store, session, batch, config)


if __name__ == "__main__":
    main()
