"""`lcm demo`: the first command for a newcomer; no network, no host, no model."""

from __future__ import annotations

from typing import Any, Final

import click
from rich.console import RenderableType
from rich.rule import Rule
from rich.text import Text

from lcm_adapter import render
from lcm_adapter.cli.base import emit, json_option, state
from lcm_adapter.demo import (
    LANGUAGES,
    demo_database,
    explore_commands,
    language_hint,
    run_demo,
    with_language,
)

# Where the "explore it" commands build a demo that stays, when the demo's own was removed.
REUSE_DB: Final = "lcm-demo.sqlite"


@click.command()
@click.option(
    "--keep", is_flag=True, help="Keep the temporary database (removed at exit otherwise)."
)
@click.option(
    "--language",
    type=click.Choice(LANGUAGES),
    default=None,
    help="The block's headings: auto (the user's language), zh or en (sets assembly.language).",
)
@json_option
@click.pass_context
def demo(ctx: click.Context, keep: bool, language: str | None, as_json: bool) -> None:
    """Ingest a bundled DSH session (EN/中文) and show the memory block of its next step."""
    explicit = ctx.find_root().params.get("db")
    config = with_language(state(ctx).config(), language)
    with demo_database(explicit or None, keep) as (url, temporary):
        result = run_demo(url, config)
    data = result.to_dict()
    data["language"] = result.language
    data["language_hint"] = language_hint(config.assembly.language, result.language)
    removed = temporary and not keep
    assembly = (result.explained or {}).get("assembly") or {}
    first_item = next(iter(assembly.get("item_ids") or []), None)
    data["temporary"] = temporary
    data["removed"] = removed
    # A removed database cannot be explored: point at a file the user keeps instead.
    data["explore"] = (
        [f"lcm --db {REUSE_DB} demo", *explore_commands(REUSE_DB, first_item)[:3]]
        if removed
        else explore_commands(url, first_item)
    )
    emit(as_json, data, _render)


def _render(data: dict[str, Any]) -> str:
    intro: list[RenderableType] = [
        Text(f"Ingested the bundled DSH session {data['session']} into {data['db']}"),
        Text(
            f"{data['inserted']} events stored: constraints, numbers with conditions, two "
            "corrections, tool output with an injection attempt, and a compaction.",
            style="dim",
        ),
        *(Text(f"issue: {issue}", style="yellow") for issue in data["issues"]),
        *([Text(data["language_hint"], style="dim")] if data["language_hint"] else []),
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
    if data["removed"]:
        pieces.append(
            f"The demo used a temporary database, {data['db']}, now removed\n"
            "(`lcm demo --keep` keeps it). To explore a demo database of your own:"
        )
    else:
        pieces.append(f"The demo database is {data['db']}. Explore it:")
    pieces.extend(f"  {command}" for command in data["explore"])
    return "\n".join(pieces)


def register(group: click.Group) -> None:
    """Add `demo` to the `lcm` group."""
    group.add_command(demo)
