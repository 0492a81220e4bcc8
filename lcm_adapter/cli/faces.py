"""`lcm mcp | hook | bench`: the faces other programs talk to."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from lcm_adapter.cli.base import CommandError, emit, fail, json_option, state
from lcm_adapter.paths import resolve_db_url
from lcm_core.config import load_config
from lcm_core.store.registry import open_store


@click.command()
@click.option("--db", "db", metavar="URL", help="Database (overrides the global --db and LCM_DB).")
@click.pass_context
def mcp(ctx: click.Context, db: str | None) -> None:
    """Serve memory_search/inspect/explain/status/assemble as MCP tools on stdio."""
    try:
        from lcm_adapter.mcp.server import serve
    except ImportError as exc:
        fail(
            f"the MCP server needs the mcp extra ({exc}): pip install 'long-conversation-memory[mcp]'"
        )
    cli_state = state(ctx)
    serve(resolve_db_url(db) if db else cli_state.db, cli_state.config())


@click.command()
@click.argument("event", required=False, metavar="EVENT")
@click.pass_context
def hook(ctx: click.Context, event: str | None) -> None:
    """Answer a Claude-Code-style hook: user-prompt-submit, pre-tool-use, post-tool-use,
    session-start or stop. Reads the hook JSON on stdin, writes the reply on stdout, and
    always exits 0 so the agent never stops because of memory (errors go to hooks.log).
    """
    from lcm_adapter.claude import hooks

    cli_state = state(ctx)
    name = hooks.event_name(event or "")
    problems: list[str] = []
    reply: dict[str, Any] | None = None
    # Anything printed while we work goes to stderr: stdout carries only the reply.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            config = cli_state.config()
        except CommandError as exc:
            problems.append(f"{exc.format_message()}; using the default settings")
            config = load_config()
        try:
            payload = hooks.parse_payload(_stdin_bytes())
        except (ValueError, OSError) as exc:
            payload = None
            problems.append(f"bad hook input: {exc}")
        if name is None:
            problems.append(f"unknown hook event {event!r}; use one of {', '.join(hooks.EVENTS)}")
        elif payload is not None:
            outcome = hooks.handle(name, payload, cli_state.db, config)
            reply = outcome.reply
            problems.extend(outcome.problems)
        for line in hooks.log_problems(cli_state.db, name or str(event), problems):
            click.echo(line, err=True)
    if reply is not None:
        click.echo(json.dumps(reply, ensure_ascii=False, sort_keys=True))


def _stdin_bytes() -> bytes:
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return bytes(buffer.read())
    return stream.read().encode("utf-8", errors="replace")


@click.group()
def bench() -> None:
    """Benchmarks that report quality figures."""


@bench.command("retrieval")
@click.option(
    "--dataset",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Conversation-QA JSONL (DESIGN.md section 9).",
)
@click.option(
    "--misses",
    "misses_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every question whose evidence is not all in the top 10 here (JSONL).",
)
@click.option(
    "--ablate",
    multiple=True,
    metavar="FEATURE",
    help="Switch one ranking feature off by name (repeatable); `--ablate list` names them.",
)
@click.option("--quiet", is_flag=True, help="No progress bar on stderr.")
@json_option
@click.pass_context
def bench_retrieval(
    ctx: click.Context,
    dataset: Path,
    misses_path: Path | None,
    ablate: tuple[str, ...],
    quiet: bool,
    as_json: bool,
) -> None:
    """Evidence recall@k of the pipeline, of items alone and of the block, beside references.

    Each conversation is evaluated on its own in-memory store; the frozen references
    are Okapi BM25 over the raw turns (`lcm_core.bench.bm25`, as
    `benchmarks/retrieval_bench.py`) and SQLite FTS5 (porter unicode61, stop words out).
    """
    from lcm_core.bench.bm25 import BM25Baseline
    from lcm_core.bench.retrieval import ablation_config, format_table, load_dataset, run
    from lcm_core.retrieval.rank import ABLATIONS
    from lcm_core.store.registry import reference_rankers

    if "list" in ablate:
        emit(as_json, {"features": ABLATIONS}, _feature_lines)
        return
    try:
        ablation_config(state(ctx).config(), ablate)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        conversations = load_dataset(dataset)
    except (ValueError, KeyError, TypeError) as exc:
        fail(f"{dataset}: not a conversation-QA dataset ({exc})")
    references = {name: build() for name, build in reference_rankers().items()}
    from lcm_adapter import render  # rich: only `bench` draws progress

    progress = render.Progress(len(conversations), "conversations", quiet=quiet)

    def fresh_store() -> Any:
        progress.advance()
        return open_store(":memory:")

    misses: list[dict[str, Any]] | None = [] if misses_path is not None else None
    try:
        report = run(
            conversations,
            fresh_store,
            BM25Baseline(),
            state(ctx).config(),
            references=references,
            ablate=ablate,
            misses=misses,
        )
    finally:
        progress.close()
    if misses_path is not None and misses is not None:
        try:
            misses_path.write_text(
                "".join(json.dumps(m, ensure_ascii=False, sort_keys=True) + "\n" for m in misses),
                encoding="utf-8",
            )
        except OSError as exc:
            fail(f"{misses_path}: cannot write the misses ({exc.strerror or exc})")
    data = {
        "dataset": str(dataset),
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions": report["overall"]["questions"],
        "baseline": "bm25 over raw turns (Okapi, k1 1.5, b 0.75)",
        "references": {name: getattr(r, "name", name) for name, r in references.items()},
        "ablated": sorted(ablate),
        "misses": len(misses) if misses is not None else None,
        "report": report,
    }
    emit(as_json, data, lambda d: format_table(d["report"]))


def _feature_lines(data: dict[str, Any]) -> str:
    return "\n".join(f"{name:16} {what}" for name, what in data["features"].items())


def register(group: click.Group) -> None:
    """Add `mcp`, `hook` and `bench` to the `lcm` group."""
    for command in (mcp, hook, bench):
        group.add_command(command)
