"""Capture and its follow-up: store host events, then extract and validate what is new.

A session captured for the first time gets its project (the host's folder or the id
the user set). Extraction is cursor based, so running it after a user message is enough: the cursor
makes the next run pick up anything an earlier failure left behind. Validation reads
the assistant's messages, so it runs after one. A duplicate delivery derives nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lcm_core.capture.events import CaptureReport, Clock, capture_batch
from lcm_core.capture.project import record_project
from lcm_core.capture.rows import Parser
from lcm_core.config import Config
from lcm_core.extraction.run import run_extraction
from lcm_core.store.ports import MemoryStore

EXTRACT_AFTER: Final = "user/message"
VALIDATE_AFTER: Final = "assistant/message"


@dataclass(frozen=True, slots=True)
class FollowUp:
    """What ran after a capture, and what went wrong (the error's repr, for status)."""

    extracted: bool = False
    validated: bool = False
    project_error: str | None = None
    extraction_error: str | None = None
    validation_error: str | None = None


def capture(
    store: MemoryStore,
    session_id: str,
    events: Sequence[Any],
    config: Config,
    parse: Parser,
    *,
    clock: Clock | None = None,
) -> CaptureReport:
    """Store host events (one live event, or a replayed batch) in one transaction; never raises."""
    return capture_batch(store, session_id, events, config, parse=parse, clock=clock)


def after_capture(
    store: MemoryStore,
    session_id: str,
    report: CaptureReport,
    config: Config,
    event_types: Collection[str | None],
    *,
    base_dir: str | None = None,
    project: str = "",
) -> FollowUp:
    """Record a new session's project, extract after a user message, validate after an
    assistant message; never raises.

    `event_types` are the captured events' types; `base_dir` is the host's working
    folder (the project's, and where validation resolves paths); `project` the id the
    user set ("" for none).
    """
    if report.inserted == 0:
        return FollowUp()  # a duplicate delivery: nothing new to derive
    project_error = extraction_error = validation_error = None
    try:
        session = store.get_session(session_id)
        if (session is None or not session.project) and (project or base_dir):
            record_project(store, session_id, base_dir, project)
    except Exception as exc:
        project_error = repr(exc)
    extract, validate = EXTRACT_AFTER in event_types, VALIDATE_AFTER in event_types
    if extract:
        try:
            run = run_extraction(store, session_id, config)
            if run.errors:  # failed events are queued for retry; the run counts as an error
                raise RuntimeError(run.errors[0])
        except Exception as exc:
            extraction_error = repr(exc)
    if validate:
        try:
            from lcm_core.validation.validate import run_validation  # post-step only

            run_validation(store, session_id, config, base_dir=base_dir)
        except Exception as exc:
            validation_error = repr(exc)
    return FollowUp(extract, validate, project_error, extraction_error, validation_error)
