"""What capture keeps out of the store: private spans, and secrets when `capture.redact` is on.

Every face (the DSH sidecar's live stream, `lcm ingest`, a hook's transcript) stores
events through `capture_batch`, which passes each parsed row through `scrub_row`
before anything is written, so no face can skip it. Assembly passes the step's own
messages through `scrub_text` too: a pre-step sees the user's newest message before
it is captured, and its query is logged for `lcm explain`.

Each event's text and archived text is scrubbed, whatever the event's type: a model or
a tool that repeats a marked span keeps the marking. The content hash is taken again
from the scrubbed text, so no digest of the clear text is stored either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lcm_core.capture.rows import ParsedRow
from lcm_core.config import Config
from lcm_core.text.private import hide_private
from lcm_core.text.redact import redact
from lcm_core.text.tokens import sha256_hex


@dataclass(frozen=True, slots=True)
class Scrubber:
    """The capture settings that decide what text is withheld."""

    patterns: tuple[str, ...] = ()
    redact: bool = False

    @classmethod
    def of(cls, config: Config) -> Scrubber:
        """The scrubber a configuration asks for."""
        return cls(tuple(config.capture.private_patterns), config.capture.redact)

    def text(self, text: str) -> str:
        """The text as it may be stored: private spans hidden, then secrets redacted if asked."""
        if not text:
            return text
        hidden = hide_private(text, self.patterns)
        return redact(hidden) if self.redact else hidden


def scrub_text(text: str, config: Config) -> str:
    """One text as capture would store it under this configuration."""
    return Scrubber.of(config).text(text)


def scrub_row(row: ParsedRow, scrubber: Scrubber) -> ParsedRow:
    """The row with its event text and archive text scrubbed; unchanged rows are returned as is."""
    event = row.event
    text = scrubber.text(event.text)
    archive = None if row.archive_text is None else scrubber.text(row.archive_text)
    if text == event.text and archive == row.archive_text:
        return row
    return replace(
        row, event=replace(event, text=text, content_hash=sha256_hex(text)), archive_text=archive
    )
