"""`lcm forget | remember | pin | unpin`: the user decides what memory keeps.

The work is done by `lcm_core.extraction.control` through the use cases; this module
parses options and lays out what happened.
"""

from __future__ import annotations

from typing import Any

import click

from lcm_adapter.cli.base import emit, fail, json_option, opened_store, resolve_session
from lcm_core import usecases
from lcm_core.extraction import control
from lcm_core.extraction.control import REMEMBER_KINDS, ControlError
from lcm_core.store.errors import StoreNotFoundError


@click.command()
@click.argument("item_id", metavar="ID", required=False)
@click.option("--reason", default="", metavar="TEXT", help="Why, kept on the tombstone.")
@click.option(
    "--event", "event_seq", type=int, metavar="SEQ", help="Forget one raw event instead of an item."
)
@click.option("--session", "session", metavar="ID", help="The session of --event.")
@json_option
@click.pass_context
def forget(
    ctx: click.Context,
    item_id: str | None,
    reason: str,
    event_seq: int | None,
    session: str | None,
    as_json: bool,
) -> None:
    """Erase a memory item and the text of its source events; the rows stay as tombstones."""
    if (item_id is None) == (event_seq is None):
        raise click.UsageError("give either an item ID or --event SEQ (with --session)")
    with opened_store(ctx) as store:
        try:
            if event_seq is not None:
                session_id = resolve_session(store, session)
                report = control.forget_event(store, session_id, event_seq, reason)
            else:
                report = control.forget_item(store, str(item_id), reason)
        except StoreNotFoundError as exc:
            fail(str(exc))
    emit(as_json, report.to_dict(), _render_forget)


def _render_forget(d: dict[str, Any]) -> str:
    if d["already_forgotten"]:
        return "already forgotten: nothing changed"
    lines = [
        f"forgot {len(d['items'])} item(s): {', '.join(d['items']) or 'none'}",
        f"erased the text of {len(d['events'])} event(s) of session {d['session_id']}: "
        + (", ".join(f"seq:{s}" for s in d["events"]) or "none"),
    ]
    lines.extend(
        f"{old} stays superseded: the item that replaced it was forgotten, and it does not "
        "become current again (say it again, or `lcm remember` it, to restore it)"
        for old in d["still_superseded"]
    )
    if d["kept_from_same_events"]:
        lines.append(
            "kept (their source text is gone, their own content stays): "
            + ", ".join(d["kept_from_same_events"])
        )
    if d["task_entries_removed"]:
        lines.append(f"removed {d['task_entries_removed']} task-state entries quoting it")
    if d["log_entries_erased"]:
        lines.append(f"erased it from {d['log_entries_erased']} assembly log(s) that recorded it")
    lines.append(f"file: {d['scrub'].get('checkpoint', 'not scrubbed')}")
    return "\n".join(lines)


@click.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--kind", type=click.Choice(REMEMBER_KINDS), help="What it is (default: guessed).")
@click.option("--session", "session", metavar="ID", help="The session (default: the latest).")
@json_option
@click.pass_context
def remember(
    ctx: click.Context, text: tuple[str, ...], kind: str | None, session: str | None, as_json: bool
) -> None:
    """Store TEXT as the user's own memory item, with a manual source event."""
    # Only a named session may start a new database; the latest session needs one already.
    with opened_store(ctx, create=session is not None) as store:
        session_id = session or resolve_session(store, None)
        try:
            found = usecases.remember(store, session_id, " ".join(text), kind)
        except ControlError as exc:
            fail(str(exc))
    data = found.to_dict()
    emit(as_json, data, _render_remember)


def _render_remember(d: dict[str, Any]) -> str:
    item = d["item"]
    if not d["created"]:
        return f"already remembered as {item['id']} ({item['kind']}): {item['content']}"
    return (
        f"remembered {item['id']} ({item['kind']}, {item['evidence_type']}) "
        f"from seq:{d['seq']}: {item['content']}"
    )


def _pin_command(pinned: bool) -> click.Command:
    verb = "pin" if pinned else "unpin"

    @click.command(name=verb)
    @click.argument("item_id", metavar="ID")
    @json_option
    @click.pass_context
    def command(ctx: click.Context, item_id: str, as_json: bool) -> None:
        with opened_store(ctx) as store:
            try:
                change = control.set_pin(store, item_id, pinned)
            except (StoreNotFoundError, ControlError) as exc:
                fail(str(exc))
        emit(as_json, change.to_dict(), _render_pin)

    command.help = (
        "Put an item first in the resident set restated after a compaction."
        if pinned
        else "Take an item out of the pinned resident set."
    )
    return command


def _render_pin(d: dict[str, Any]) -> str:
    state = "pinned" if d["pinned"] else "unpinned"
    head = f"{d['item_id']} {state}" if d["changed"] else f"{d['item_id']} was already {state}"
    return f"{head}; pinned now: {', '.join(d['pins']) or 'none'}"


pin = _pin_command(True)
unpin = _pin_command(False)


def register(group: click.Group) -> None:
    """Add the control commands to the `lcm` group."""
    for command in (forget, remember, pin, unpin):
        group.add_command(command)
