"""One `lcm hook EVENT` call, from the stdin bytes to what it prints.

Shared by the click command (`lcm_adapter.cli.faces.hook`) and the fast entry
(`lcm_adapter.entry`), which answers hooks without importing the command line at all.
"""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass, field

from lcm_adapter.claude import hooks
from lcm_adapter.settings import SettingsError, read_settings_file
from lcm_core.config import load_config


@dataclass(slots=True)
class HookRun:
    """The reply line for stdout (None prints nothing) and the lines for stderr."""

    reply: str | None = None
    errors: list[str] = field(default_factory=list)


def run_hook(
    event: str | None, db_url: str, config_path: str | None, raw: bytes, *, named: bool = True
) -> HookRun:
    """Answer one hook; never raises, so the agent never stops because of memory.

    `named`: the user named the database; only the default one may get its folder made.
    """
    run = HookRun()
    name = hooks.event_name(event or "")
    problems: list[str] = []
    reply = None
    # Anything printed while we work goes to stderr: stdout carries only the reply.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            config = load_config(read_settings_file(config_path))
            run.errors.extend(f"lcm: config: {warning}" for warning in config.warnings)
        except SettingsError as exc:
            problems.append(f"{exc}; using the default settings")
            config = load_config()
        try:
            payload = hooks.parse_payload(raw)
        except (ValueError, OSError) as exc:
            payload = None
            problems.append(f"bad hook input: {exc}")
        if name is None:
            problems.append(f"unknown hook event {event!r}; use one of {', '.join(hooks.EVENTS)}")
        elif payload is not None:
            outcome = hooks.handle(name, payload, db_url, config, named=named)
            reply = outcome.reply
            problems.extend(outcome.problems)
        run.errors.extend(hooks.log_problems(db_url, name or str(event), problems))
    if reply is not None:
        run.reply = json.dumps(reply, ensure_ascii=False, sort_keys=True)
    return run
