"""`lcm browse`: Datasette over the memory file, read-only, on loopback (the `browse` extra)."""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from importlib import resources
from pathlib import Path

import click

from lcm_adapter.cli.base import fail, state
from lcm_adapter.paths import missing_database
from lcm_core.store.errors import StoreError
from lcm_core.store.registry import open_store, parse_store_url

HOST = "127.0.0.1"  # loopback only: the memory holds the user's own words
METADATA = "browse_metadata.json"
DATABASE_KEY = "@DATABASE@"


def metadata_for(path: Path) -> dict[str, object]:
    """The shipped metadata, keyed by the name Datasette gives the file (its stem)."""
    text = resources.files("lcm_adapter.data").joinpath(METADATA).read_text(encoding="utf-8")
    data = json.loads(text)
    databases = data["databases"]
    databases[path.stem] = databases.pop(DATABASE_KEY)
    return dict(data)


def _sqlite_path(url: str) -> Path:
    try:
        parsed = parse_store_url(url)
    except StoreError as exc:
        fail(str(exc))
    if parsed.scheme != "sqlite" or parsed.location == ":memory:":
        fail(f"lcm browse reads a SQLite memory file; {url} is not one")
    missing = missing_database(url)
    if missing is not None:
        fail(f"no database at {missing}")
    return Path(parsed.location).expanduser()


@click.command()
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8001, show_default=True, help="Local port."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a web browser.")
@click.pass_context
def browse(ctx: click.Context, port: int, open_browser: bool) -> None:
    """Browse memory in Datasette, read-only, at http://127.0.0.1:PORT (extra `browse`):
    tables described, timelines, supersession chains, assemblies and their omissions,
    full-text search on events and memory items. Ctrl-C stops it.
    """
    if importlib.util.find_spec("datasette") is None:
        fail("lcm browse needs Datasette: pip install 'long-conversation-memory[browse]'")
    url = state(ctx).db
    path = _sqlite_path(url)
    try:
        # Opening once brings an older file to the current schema (its FTS tables are the
        # ones Datasette recognises) and refuses a file that is not an lcm database.
        open_store(url).close()
    except StoreError as exc:
        fail(str(exc))
    from datasette import cli as datasette_cli

    with tempfile.TemporaryDirectory(prefix="lcm-browse-") as folder:
        meta = Path(folder) / "metadata.json"
        meta.write_text(json.dumps(metadata_for(path), ensure_ascii=False), encoding="utf-8")
        os.chmod(meta, 0o600)
        args = ["serve", "-i", str(path), "--metadata", str(meta), "--host", HOST]
        args += ["--port", str(port), "--setting", "sql_time_limit_ms", "5000"]
        if open_browser:
            args.append("--open")
        click.echo(
            f"lcm: serving {path} read-only at http://{HOST}:{port}/ (Ctrl-C stops)", err=True
        )
        # In-process: uvicorn turns SIGINT/SIGTERM into a clean return, so the temporary
        # metadata file is removed on the way out.
        datasette_cli.cli.main(args=args, prog_name="datasette", standalone_mode=False)


def register(group: click.Group) -> None:
    """Add `browse` to the `lcm` group."""
    group.add_command(browse)
