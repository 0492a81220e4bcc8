"""`lcm demo`: the first command for a newcomer; no network, no host, no model."""

from __future__ import annotations

from typing import Any

import click
from rich.console import RenderableType
from rich.rule import Rule
from rich.text import Text

from lcm_adapter import render
from lcm_adapter.cli.base import emit, json_option, state
from lcm_adapter.demo import run_demo


@click.command()
@json_option
@click.pass_context
def demo(ctx: click.Context, as_json: bool) -> None:
    """Ingest a bundled DSH session (EN/中文) and show the memory block of its next step."""
    explicit = ctx.find_root().params.get("db")
    result = run_demo(explicit or None, state(ctx).config())
    emit(as_json, result.to_dict(), _render)


def _render(data: dict[str, Any]) -> str:
    intro: list[RenderableType] = [
        Text(f"Ingested the bundled DSH session {data['session']} into {data['db']}"),
        Text(
            f"{data['inserted']} events stored: constraints, numbers with conditions, two "
            "corrections, tool output with an injection attempt, and a compaction.",
            style="dim",
        ),
        *(Text(f"issue: {issue}", style="yellow") for issue in data["issues"]),
        Rule("the memory block the next step gets", align="left"),
    ]
    # The block is printed verbatim: never wrapped, cropped or parsed for markup.
    pieces = [render.to_text(*intro), data["block"] or "(nothing injected)"]
    if data["explain"]["assembly"] is not None:
        pieces.append(
            render.to_text(
                Rule("explain: what went in, and what was left out and why", align="left"),
                *render.explain_view(data["explain"]["assembly"], data["explain"]["ref_text"]),
                Rule(style="dim"),
            )
        )
    pieces.append(
        f"Explore it: lcm --db {data['db']} status | explain | search 批大小 | inspect ID"
    )
    return "\n".join(pieces)


def register(group: click.Group) -> None:
    """Add `demo` to the `lcm` group."""
    group.add_command(demo)
