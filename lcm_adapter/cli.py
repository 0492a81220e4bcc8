"""The `lcm` command line: readable output for people, `--json` for machines."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lcm_adapter import cli_dsh
from lcm_adapter.paths import resolve_db_url
from lcm_core.errors import StoreError
from lcm_core.registry import open_store, parse_store_url

EXIT_FAILURE = 1


def _fail(message: str) -> None:
    click.echo(f"lcm: {message}", err=True)
    sys.exit(EXIT_FAILURE)


def _emit(as_json: bool, data: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))
    else:
        click.echo(render(data))


@click.group()
@click.option(
    "--db",
    "db",
    metavar="URL",
    help="Database: a path, sqlite:///PATH or duckdb:///PATH (env LCM_DB).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """Durable, deterministic memory for long agent conversations."""
    ctx.obj = {"db": resolve_db_url(db)}


def _file_mode(path: Path) -> str | None:
    try:
        return oct(stat.S_IMODE(os.stat(path).st_mode))
    except OSError:
        return None


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Open the store and report its path, schema version, integrity and file modes."""
    url = ctx.obj["db"]
    try:
        store = open_store(url)
    except StoreError as exc:
        _fail(str(exc))
        return
    try:
        location = parse_store_url(url).location
        problems = store.integrity_check()
        data: dict[str, Any] = {
            "url": store.url,
            "path": location,
            "schema_version": store.schema_version(),
            "integrity": problems if problems else "ok",
            "file_mode": None if location == ":memory:" else _file_mode(Path(location)),
            "folder_mode": None if location == ":memory:" else _file_mode(Path(location).parent),
            "counts": store.stats(),
        }
    except StoreError as exc:
        _fail(str(exc))
        return
    finally:
        store.close()

    def render(d: dict[str, Any]) -> str:
        integrity = d["integrity"] if d["integrity"] == "ok" else "; ".join(d["integrity"])
        lines = [
            f"database   {d['path']}",
            f"schema     v{d['schema_version']}",
            f"integrity  {integrity}",
            f"file mode  {d['file_mode']}  (folder {d['folder_mode']})",
            "rows       " + ", ".join(f"{k}={v}" for k, v in d["counts"].items() if v),
        ]
        return "\n".join(lines)

    _emit(as_json, data, render)
    if problems:
        sys.exit(EXIT_FAILURE)


# The DSH commands (`serve`, `dsh install`, `ingest`) live in their own module.
cli_dsh.register(cli)


def main() -> None:
    """Console entry point."""
    cli(prog_name="lcm")
