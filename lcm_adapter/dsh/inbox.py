"""Input of `lcm serve`: lines read by a thread, and batching of waiting capture events."""

from __future__ import annotations

import json
import queue
import threading
from collections import deque
from typing import IO, Any


class Inbox:
    """Input lines, read by a thread so the loop can see which lines are already waiting."""

    def __init__(self, stdin: IO[bytes]) -> None:
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._ahead: deque[str | None] = deque()
        threading.Thread(target=self._read, args=(stdin,), daemon=True, name="lcm-serve-in").start()

    def _read(self, stdin: IO[bytes]) -> None:
        try:
            for raw in stdin:
                self._queue.put(raw.decode("utf-8", "replace"))
        except (OSError, ValueError):
            pass  # a closed or broken stdin is the same as its end
        finally:
            self._queue.put(None)

    def get(self) -> str | None:
        """The next line, waiting for it; None at the end of input."""
        return self._ahead.popleft() if self._ahead else self._queue.get()

    def waiting(self) -> str | bool | None:
        """The next line if it has already arrived, else False; None at the end of input."""
        if self._ahead:
            return self._ahead.popleft()
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return False

    def push_back(self, line: str | None) -> None:
        self._ahead.appendleft(line)


def event_of(line: str) -> tuple[str, Any] | None:
    """(session id, event) when the line is an `event` notification, else None."""
    if '"event"' not in line:
        return None  # cheap pre-check: most other lines never need a second parse
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "event" or "id" in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    session = params.get("sessionId")
    return (session, params.get("event")) if isinstance(session, str) and session else None


def take_batch(inbox: Inbox, first: tuple[str, Any], limit: int) -> list[Any]:
    """The first event plus the events of the same session already waiting behind it.

    Capturing them in one transaction costs far less than one each, and stops at the
    first other line, so a pre-step still sees every event sent before it.
    """
    session, events = first[0], [first[1]]
    while len(events) < limit:
        line = inbox.waiting()
        if line is False:
            break
        nxt = event_of(line) if isinstance(line, str) else None
        if nxt is None or nxt[0] != session:
            inbox.push_back(line if isinstance(line, str) else None)
            break
        events.append(nxt[1])
    return events
