"""What a host's parser hands capture: rows to store, or why an envelope was refused.

Its own module so that capture (`events`) and the scrubber (`private`) both use it and
neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lcm_core.store.models import Event


@dataclass(frozen=True, slots=True)
class ParsedRow:
    """One row to store, plus the text to archive for it (None when not archived)."""

    event: Event
    archive_text: str | None = None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """What one envelope became: rows, or a rejection reason, plus repair notes."""

    rows: tuple[ParsedRow, ...] = ()
    seq: int | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    unknown_type: str | None = None


class Parser(Protocol):
    """Turns one host envelope into rows; pure, and never raises on bad input."""

    def __call__(
        self, session_id: str, raw: Any, *, ingested_at: str, archive_limit: int
    ) -> ParseResult: ...
