"""`lcm mcp | hook | bench`: the faces other programs talk to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from lcm_adapter.cli.base import emit, fail, json_option, state
from lcm_adapter.paths import resolve_db_url
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
    session-start, pre-compact, stop or session-end. Reads the hook JSON on stdin, writes the reply on stdout, and
    always exits 0 so the agent never stops because of memory (errors go to hooks.log).
    """
    from lcm_adapter.claude.client import stdin_bytes
    from lcm_adapter.claude.run import run_hook

    cli_state = state(ctx)
    run = run_hook(
        event, cli_state.db, cli_state.config_path, stdin_bytes(), named=cli_state.db_given
    )
    for line in run.errors:
        click.echo(line, err=True)
    if run.reply is not None:
        click.echo(run.reply)


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
@click.option(
    "--budget",
    type=click.IntRange(50, 200_000),
    metavar="N",
    help="Assemble the blocks at this token budget (no config file needed).",
)
@click.option("--quiet", is_flag=True, help="No progress bar on stderr.")
@json_option
@click.pass_context
def bench_retrieval(
    ctx: click.Context,
    dataset: Path,
    misses_path: Path | None,
    ablate: tuple[str, ...],
    budget: int | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Evidence recall@k of the pipeline, of items alone and of the block, beside references.

    Each conversation is evaluated on its own in-memory store; the frozen references
    are Okapi BM25 over the raw turns (`lcm_core.bench.bm25`, as
    `benchmarks/retrieval_bench.py`) and SQLite FTS5 (porter unicode61, stop words out).
    """
    from lcm_adapter.views import with_budget
    from lcm_core.bench.bm25 import BM25Baseline
    from lcm_core.bench.dataset import assistant_evidence, load_dataset
    from lcm_core.bench.retrieval import ablation_config, format_table, run
    from lcm_core.config import budget_tokens
    from lcm_core.retrieval.quoting import quotes_type
    from lcm_core.retrieval.signals import ABLATIONS
    from lcm_core.store.registry import reference_rankers

    config = with_budget(state(ctx).config(), budget)
    if "list" in ablate:
        emit(as_json, {"features": ABLATIONS}, _feature_lines)
        return
    try:
        ablation_config(config, ablate)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        conversations = load_dataset(dataset)
    except (ValueError, KeyError, TypeError) as exc:
        fail(f"{dataset}: not a conversation-QA dataset ({exc})")
    on_assistant, evidence = assistant_evidence(conversations)
    quoted = [str(t) for t in config.assembly.evidence_types]
    if on_assistant and not quotes_type("assistant/message", quoted):
        click.echo(
            f"lcm: bench: {on_assistant} of {evidence} evidence turns are assistant messages,"
            " which assembly.evidenceTypes does not quote; if both sides are people, give"
            " each turn its name",
            err=True,
        )
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
            config,
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
        "questionsLeftOut": sum(c.left_out for c in conversations),
        "evidenceOnAssistant": on_assistant,
        "baseline": "bm25 over raw turns (Okapi, k1 1.5, b 0.75)",
        "references": {name: getattr(r, "name", name) for name, r in references.items()},
        "ablated": sorted(ablate),
        "budget": budget_tokens(config),
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
