"""The one place the core reads the wall clock, so tests and replays can pin it."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now_iso() -> str:
    """Current UTC time as ISO 8601 with milliseconds, e.g. `2026-11-30T02:35:00.123+00:00`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
