"""Readable output for people: rich tables and budget bars, plain text when piped.

Colours are used only when stdout is a terminal and `NO_COLOR` is unset; piped output
is plain text at a fixed width (`COLUMNS`, else 100), so it is the same on every run.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

PIPE_WIDTH: Final = 100
BAR_CELLS: Final = 24
FULL: Final = "█"
EMPTY: Final = "░"


def colour_enabled(stream: Any = None) -> bool:
    """True when the stream is a terminal and `NO_COLOR` is not set."""
    if os.environ.get("NO_COLOR", "") != "":
        return False
    target = stream if stream is not None else sys.stdout
    try:
        return bool(target.isatty())
    except (AttributeError, ValueError):
        return False


def _width(colour: bool) -> int:
    if colour:
        return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 40 else PIPE_WIDTH


def to_text(*renderables: RenderableType) -> str:
    """Render to a string: ANSI colours only for a colour terminal, else plain."""
    colour = colour_enabled()
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=colour,
        no_color=not colour,
        color_system="auto" if colour else None,
        width=_width(colour),
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
    )
    for renderable in renderables:
        console.print(renderable)
    lines = buffer.getvalue().rstrip("\n").split("\n")
    return "\n".join(line.rstrip() for line in lines)


# Columns that hold something a person copies into the next command (an item id, a
# session id, `seq:N`, a rule id): never broken across lines, whatever the width, so a
# pasted id is whole. The other columns wrap to make room.
WHOLE_COLUMNS: Final = frozenset(
    {"id", "item", "session", "ref", "source", "rule", "seq", "governs", "said"}
)
# The least width, in cells, each other column needs beside the whole ones; more when
# its text quotes an id (an omission's reason names the item that replaced another).
MIN_FREE: Final = 8
ID_IN_TEXT: Final = re.compile(
    r"\b(?:mem|rule)_\w+|\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b|\bseq:-?\d+"
)


def table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    right: Sequence[str] = (),
) -> RenderableType:
    """A plain table with a header row under an optional title line; `right` aligns right.

    Cells of the `WHOLE_COLUMNS` are kept on one line (a cell with spaces is not an id
    and may still wrap); every other column folds to the width. When the whole cells
    leave the other columns too little room, each row is printed as `column  value`
    lines instead, so an id is never cut at any width.
    """
    cells = [["" if cell is None else str(cell) for cell in row] for row in rows]
    whole = {
        index: max([len(name), *(len(row[index]) for row in cells)])
        for index, name in enumerate(columns)
        if name in WHOLE_COLUMNS and not any(" " in row[index] for row in cells)
    }
    need = sum(
        max([MIN_FREE, *(len(m) for row in cells for m in ID_IN_TEXT.findall(row[index]))])
        for index in range(len(columns))
        if index not in whole
    )
    free = _width(colour_enabled()) - sum(whole.values()) - 3 * (len(columns) - 1)
    if len(whole) < len(columns) and free < need:
        return _records(columns, cells, title)
    out = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for index, name in enumerate(columns):
        justify = "right" if name in right else "left"
        if index in whole:
            out.add_column(name, justify=justify, no_wrap=True, min_width=whole[index])
        else:
            out.add_column(name, justify=justify, overflow="fold")
    for row in cells:
        out.add_row(*row)
    return out if title is None else Group(Text(title, style="bold"), out)


def _records(columns: Sequence[str], cells: list[list[str]], title: str | None) -> Group:
    """The rows of a table too narrow for its ids: one block of `column  value` lines each."""
    blocks: list[RenderableType] = [] if title is None else [Text(title, style="bold")]
    for number, row in enumerate(cells):
        if number:
            blocks.append(Text(""))
        blocks.append(pairs(list(zip(columns, row, strict=False))))
    return Group(*blocks)


def pairs(items: Sequence[tuple[str, Any]], *, title: str | None = None) -> RenderableType:
    """Aligned `key  value` lines under an optional title line."""
    out = Table(box=None, show_header=False, pad_edge=False)
    out.add_column("key", style="bold", no_wrap=True)
    out.add_column("value", overflow="fold")
    for key, value in items:
        out.add_row(key, "" if value is None else str(value))
    return out if title is None else Group(Text(title, style="bold"), out)


def bar(used: int, budget: int, cells: int = BAR_CELLS) -> Text:
    """`█████░░░░ 41%`: the share of the budget used, red when over it."""
    share = 0.0 if budget <= 0 else used / budget
    filled = min(cells, round(share * cells))
    if used > 0 and filled == 0:
        filled = 1  # a used section never looks empty
    text = Text(FULL * filled, style="red" if share > 1 else "green")
    text.append(EMPTY * (cells - filled), style="dim")
    text.append(f" {round(share * 100):>3d}%")
    return text


def budget_table(log: Mapping[str, Any]) -> Table:
    """One row per section of an assembly: entries, tokens and a bar against the budget."""
    budget = int(log.get("budget_tokens") or 0)
    out = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    out.add_column("section", no_wrap=True)
    out.add_column("entries", justify="right", no_wrap=True)
    out.add_column("tokens", justify="right", no_wrap=True)
    out.add_column("share of the budget", no_wrap=True)
    for section in log.get("sections") or []:
        tokens = int(section.get("tokens") or 0)
        out.add_row(
            str(section.get("name", "")),
            str(section.get("entries", "")),
            str(tokens),
            bar(tokens, budget),
        )
    used = int(log.get("used_tokens") or 0)
    out.add_row(Text("total", style="bold"), "", f"{used}/{budget}", bar(used, budget))
    return out


def explain_view(
    log: Mapping[str, Any], ref_text: Mapping[str, str] | None = None
) -> list[RenderableType]:
    """One assembly log (an `AssemblyLog` as a dict): headline, bars, omissions, errors.

    `ref_text` gives a short text per ref, shown beside each omission.
    """
    ref_text = ref_text or {}
    words = [
        "assembly" if log.get("id") is None else f"assembly #{log['id']}",
        str(log.get("trigger")),
    ]
    if log.get("turn") is not None:
        words.append(f"turn {log['turn']} step {log.get('step')}")
    words.append("injected" if log.get("injected") else "not injected")
    words.append(
        f"{log.get('used_tokens')} of {log.get('budget_tokens')} tokens ({log.get('token_source')})"
    )
    parts: list[RenderableType] = [Text(" · ".join(words), style="bold")]
    reasons = list(log.get("reasons") or [])
    query = next((r for r in reasons if r.get("kind") == "query"), None)
    if query and query.get("text"):
        parts.append(Text(f"query: {query['text']}"))
    budget = next((r for r in reasons if r.get("kind") == "budget"), None)
    if budget and budget.get("why"):
        parts.append(Text(f"budget: {budget['why']}"))
    parts.extend(
        Text(f"skipped: {r.get('why')}", style="yellow")
        for r in reasons
        if r.get("kind") == "skipped"
    )
    parts.append(budget_table(log))
    omitted = list(log.get("omitted") or [])
    if omitted:
        parts.append(
            table(
                ("section", "ref", "why it was left out"),
                (
                    (
                        o.get("section"),
                        o.get("ref"),
                        f"{o.get('reason')}\n“{ref_text[o['ref']]}”"
                        if o.get("ref") in ref_text
                        else o.get("reason"),
                    )
                    for o in omitted
                ),
                title=f"left out ({len(omitted)})",
            )
        )
    else:
        parts.append(Text("left out: nothing"))
    parts.extend(Text(f"error: {error}", style="red") for error in log.get("errors") or [])
    return parts


def validation_view(run: Mapping[str, Any]) -> list[RenderableType]:
    """The latest validation run: outcome, counts, and each violation."""
    state = "ok" if run.get("ok") else ("blocked" if run.get("blocked") else "violations")
    head = Text(
        f"validation of seq:{run.get('event_seq')} · {state} · {run.get('checked')} checked, "
        f"{run.get('skipped')} skipped"
        + ("" if run.get("deterministic") else " · non-deterministic"),
        style="bold",
    )
    parts: list[RenderableType] = [head]
    violations = list(run.get("violations") or [])
    if violations:
        parts.append(
            table(
                ("check", "detail"),
                (
                    (
                        v.get("check") or v.get("type") or "-",
                        v.get("message") or v.get("detail") or v,
                    )
                    for v in violations
                ),
            )
        )
    parts.extend(Text(f"error: {error}", style="red") for error in run.get("errors") or [])
    return parts


class Progress:
    """A progress bar on stderr while a long job runs; silent when quiet or piped."""

    def __init__(self, total: int, unit: str, *, quiet: bool = False) -> None:
        self._bar: Any = None
        if quiet or not colour_enabled(sys.stderr) or total <= 0:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn(unit), BarColumn(), MofNCompleteColumn(), console=Console(stderr=True)
        )
        self._task = self._bar.add_task(unit, total=total)
        self._bar.start()

    def advance(self, steps: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, steps)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
