"""Capture of DSH session events: the core's capture with the DSH envelope parser bound."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lcm_adapter.envelope.parse import parse_envelope
from lcm_core.capture import events as core
from lcm_core.capture.events import CaptureReport, Clock
from lcm_core.config import Config
from lcm_core.store.ports import MemoryStore


def capture_batch(
    store: MemoryStore,
    session_id: str,
    events: Iterable[Any],
    config: Config,
    *,
    clock: Clock | None = None,
) -> CaptureReport:
    """Capture many DSH envelopes (a replay or backfill) in one transaction; never raises."""
    return core.capture_batch(store, session_id, events, config, parse=parse_envelope, clock=clock)


def capture_event(
    store: MemoryStore,
    session_id: str,
    event: Any,
    config: Config,
    *,
    clock: Clock | None = None,
) -> CaptureReport:
    """Capture one DSH envelope from the live stream; never raises."""
    return core.capture_event(store, session_id, event, config, parse=parse_envelope, clock=clock)
