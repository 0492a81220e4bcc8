"""The `memory` command a host exposes: status, explain, inspect, search, export, purge,
forget, remember, pin, unpin.

This module parses the command line and does export and purge; the text of the other
answers is laid out in `memory_text` from the core's reports. Every answer is one
`CommandResult`; bad input gets a one-line usage message.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from lcm_adapter.memory_text import explain_text, inspect_text, search_text, status_text
from lcm_core import usecases
from lcm_core.extraction import control
from lcm_core.extraction.control import ControlError
from lcm_core.store.errors import StoreError, StoreNotFoundError

if TYPE_CHECKING:
    from lcm_adapter.runtime_state import RuntimeView
    from lcm_core.reports.export import ExportResult

USAGE: Final = (
    "usage: memory status | explain | inspect <item-id|seq:N> | search <words> | "
    "export [FOLDER] | purge [--yes] | forget <item-id>|--event SEQ [reason] | "
    "remember [--kind K] <text> | pin <item-id> | unpin <item-id>"
)
SEARCH_LIMIT: Final = 10


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command printed, and whether it succeeded."""

    ok: bool
    text: str


Handler = Callable[["RuntimeView", str, list[str]], CommandResult]


def split_input(raw: str) -> list[str]:
    """Split a command line the way a shell would; unbalanced quotes fall back to spaces."""
    try:
        return shlex.split(raw)
    except ValueError:
        return raw.split()


def run_command(runtime: RuntimeView, session_id: str, argv: list[str]) -> CommandResult:
    """Dispatch one `memory ...` command line (the leading `memory` is optional)."""
    if argv and argv[0] in ("memory", "/memory"):
        argv = argv[1:]
    if not argv:
        argv = ["status"]
    name, args = argv[0].lower(), argv[1:]
    handler = _HANDLERS.get(name)
    if handler is None:
        return CommandResult(False, f"memory: unknown command {name!r}\n{USAGE}")
    return handler(runtime, session_id, args)


def _status(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    if args:
        return CommandResult(False, "memory: status takes no arguments")
    return CommandResult(True, status_text(runtime, session_id))


def _explain(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    if args:
        return CommandResult(False, "memory: explain takes no arguments")
    return CommandResult(True, explain_text(runtime, session_id))


def _inspect(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    if len(args) != 1:
        return CommandResult(False, "memory: inspect takes one item id (see memory search)")
    text = inspect_text(runtime, args[0], session_id)
    if text is None:
        return CommandResult(False, f"memory: no memory item {args[0]!r}")
    return CommandResult(True, text)


def _search(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    query = " ".join(args).strip()
    if not query:
        return CommandResult(False, "memory: search needs some words")
    return CommandResult(True, search_text(runtime, session_id, query, SEARCH_LIMIT))


def _export(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    if len(args) > 1:
        return CommandResult(False, "memory: export takes at most one folder name")
    target = Path(args[0]).expanduser() if args else default_export_path(runtime, session_id)
    try:
        result = export_session(runtime, session_id, target)
    except StoreError as exc:  # a refused target, a folder that is not an export, a disk error
        return CommandResult(False, f"memory: {exc}")
    detail = ", ".join(f"{table}={n}" for table, n in result.tables.items() if n)
    return CommandResult(
        True,
        f"exported {result.rows} rows to {target}"
        + (f" ({detail})" if detail else "")
        + f"; `lcm import {target}` reads it back",
    )


def _purge(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    unknown = [a for a in args if a != "--yes"]
    if unknown:
        return CommandResult(False, f"memory: purge takes only --yes (got {unknown[0]!r})")
    counts = runtime.store.stats(session_id)
    if "--yes" not in args:
        return CommandResult(
            True,
            f"purge would delete session {session_id}: {counts.get('events', 0)} events, "
            f"{counts.get('memory_items', 0)} memory items and all rows derived from them; "
            "run `memory purge --yes` to do it",
        )
    deleted = usecases.purge(runtime.store, session_id)
    runtime.shown.forget(session_id)
    runtime.surface.forget(session_id)
    return CommandResult(True, f"purged {sum(deleted.values())} rows of session {session_id}")


def _forget(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    if not args or (args[0] == "--event" and (len(args) < 2 or not _is_int(args[1]))):
        return CommandResult(
            False, "memory: forget takes an item id, or --event SEQ (see memory search)"
        )
    try:
        if args[0] == "--event":
            report = control.forget_event(
                runtime.store, session_id, int(args[1]), " ".join(args[2:])
            )
        else:
            report = control.forget_item(runtime.store, args[0], " ".join(args[1:]))
    except StoreNotFoundError as exc:
        return CommandResult(False, f"memory: {exc}")
    if report.already_forgotten:
        return CommandResult(True, f"{args[0]} was already forgotten")
    lines = [
        f"forgot {', '.join(report.items) or 'no item'}; erased the text of "
        + ", ".join(f"seq:{seq}" for seq in report.events)
    ]
    lines.extend(
        f"{old} stays superseded (the item that replaced it was forgotten)"
        for old in report.still_superseded
    )
    return CommandResult(True, "\n".join(lines))


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


def _remember(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
    kind = None
    if len(args) >= 2 and args[0] == "--kind":
        kind, args = args[1], args[2:]
    try:
        found = usecases.remember(runtime.store, session_id, " ".join(args), kind)
    except ControlError as exc:
        return CommandResult(False, f"memory: {exc}")
    item = found.item
    if not found.created:
        return CommandResult(True, f"already remembered as {item.id}: {item.content}")
    return CommandResult(True, f"remembered {item.id} ({item.kind}): {item.content}")


def _pin(pinned: bool) -> Handler:
    def handler(runtime: RuntimeView, session_id: str, args: list[str]) -> CommandResult:
        verb = "pin" if pinned else "unpin"
        if len(args) != 1:
            return CommandResult(False, f"memory: {verb} takes one item id")
        try:
            change = control.set_pin(runtime.store, args[0], pinned)
        except (StoreNotFoundError, ControlError) as exc:
            return CommandResult(False, f"memory: {exc}")
        state = "pinned" if pinned else "unpinned"
        head = f"{args[0]} {state}" if change.changed else f"{args[0]} was already {state}"
        return CommandResult(True, f"{head}; pinned now: {', '.join(change.pins) or 'none'}")

    return handler


def default_export_path(runtime: RuntimeView, session_id: str) -> Path:
    """`exports/<session>` beside the database (or the working folder in memory)."""
    from lcm_core.store.registry import parse_store_url

    location = parse_store_url(runtime.store.url).location
    base = Path.cwd() if location == ":memory:" else Path(location).parent
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:120]
    return base / "exports" / (safe or "session")


def export_session(runtime: RuntimeView, session_id: str, target: Path) -> ExportResult:
    """The session as a JSONL export folder, written by the core's exporter: what `lcm
    export --format jsonl --session` writes and `lcm import` reads. An earlier export
    at the same place is replaced; any other file or folder there is refused."""
    from lcm_core.reports.export import export_store  # only an export needs the exporter

    again = (target / "export.json").is_file()
    return export_store(runtime.store, "jsonl", target, session_id=session_id, force=again)


_HANDLERS: Final[dict[str, Handler]] = {
    "status": _status,
    "explain": _explain,
    "inspect": _inspect,
    "search": _search,
    "export": _export,
    "purge": _purge,
    "forget": _forget,
    "remember": _remember,
    "pin": _pin(True),
    "unpin": _pin(False),
}


def names() -> Sequence[str]:
    """The subcommands, for help text."""
    return tuple(_HANDLERS)
