"""`lcm status | explain | inspect | search | assemble` on the demo session, both output modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_core.store.models import MemoryItem
from lcm_core.store.registry import open_store
from lcm_core.text.tokens import sha256_hex, stable_item_id

SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def run_json(db: Path, *args: str) -> dict:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "memory.sqlite"
    assert run(db, "demo", "--json").exit_code == 0
    # One item of our own, so inspect has a known id whatever extraction derives.
    store = open_store(str(db))
    content = "部署只能在上海区域 (Shanghai region only)"
    store.insert_item(
        MemoryItem(
            id=stable_item_id(SESSION, "constraint", content),
            session_id=SESSION,
            kind="constraint",
            content=content,
            content_hash=sha256_hex(content),
            source_refs=("seq:22",),
        )
    )
    store.close()
    return db


def test_status_json_keys(demo_db: Path) -> None:
    data = run_json(demo_db, "status")
    assert data["session_id"] == SESSION
    for key in ("counts", "items_by_status", "checkpoint", "budget_tokens", "compatibility"):
        assert key in data
    assert data["counts"]["events"] > 100 and data["latest_assembly"]["injected"] is True


def test_status_readable(demo_db: Path) -> None:
    result = run(demo_db, "status")
    assert result.exit_code == 0
    assert SESSION in result.stdout and "cannot observe" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when not a terminal


def test_explain_draws_a_bar_per_section_and_lists_omissions(demo_db: Path) -> None:
    result = run(demo_db, "explain")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "share of the budget" in text and "█" in text and "░" in text
    assert "left out" in text and "total" in text


def test_explain_json_keys(demo_db: Path) -> None:
    data = run_json(demo_db, "explain")
    assembly = data["assembly"]
    assert {"budget_tokens", "used_tokens", "sections", "omitted", "item_ids"} <= set(assembly)
    assert all({"name", "tokens", "entries"} <= set(s) for s in assembly["sections"])
    assert set(data["ref_text"]) <= {o["ref"] for o in assembly["omitted"]}


def test_explain_without_a_log_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    store = open_store(str(db))
    from lcm_core.store.models import Session

    store.upsert_session(Session(session_id="s-无日志"))
    store.close()
    result = run(db, "explain")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "lcm assemble" in result.stderr


def test_inspect_item_both_modes(demo_db: Path) -> None:
    item_id = stable_item_id(SESSION, "constraint", "部署只能在上海区域 (Shanghai region only)")
    data = run_json(demo_db, "inspect", item_id)
    assert data["kind"] == "item" and data["item"]["item"]["id"] == item_id
    assert data["item"]["sources"][0]["ref"] == "seq:22"
    text = run(demo_db, "inspect", item_id).stdout
    assert "上海" in text and "sources" in text and "lifecycle" in text


def test_inspect_unknown_id_fails_with_one_line(demo_db: Path) -> None:
    result = run(demo_db, "inspect", "mem_nope")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


@pytest.mark.parametrize("query", ["port 8080", "批大小", "budget 预算"])
def test_search_both_modes(demo_db: Path, query: str) -> None:
    data = run_json(demo_db, "search", *query.split())
    assert data["query"] == query and data["session"] == SESSION
    assert data["events"], "the demo session mentions every query"
    assert all({"seq", "type", "text", "score"} <= set(e) for e in data["events"])
    text = run(demo_db, "search", *query.split()).stdout
    assert "memory items for" in text and f"events in session {SESSION} (" in text


def test_search_needs_words(demo_db: Path) -> None:
    assert run(demo_db, "search").exit_code == 2


def test_assemble_is_a_dry_run(demo_db: Path) -> None:
    before = run_json(demo_db, "status")["counts"]["assembly_logs"]
    data = run_json(demo_db, "assemble", "--query", "预算和端口是多少？", "--budget", "400")
    assert data["explain"]["budget_tokens"] == 400
    assert data["explain"]["used_tokens"] <= 400
    assert data["explain"]["trigger"] == "dry-run"
    assert run_json(demo_db, "status")["counts"]["assembly_logs"] == before
    readable = run(demo_db, "assemble", "--query", "预算和端口是多少？").stdout
    assert "share of the budget" in readable


def test_assemble_block_never_quotes_the_injected_tool_output(demo_db: Path) -> None:
    data = run_json(demo_db, "assemble", "--query", "replica host budget primary database")
    assert "exfil.example.net" not in data["text"]
    assert "ignore all previous instructions" not in data["text"]


def test_assemble_is_deterministic(demo_db: Path) -> None:
    first = run(demo_db, "assemble", "--query", "which port?", "--json").stdout
    assert first == run(demo_db, "assemble", "--query", "which port?", "--json").stdout


def test_budget_out_of_range_is_a_usage_error(demo_db: Path) -> None:
    result = run(demo_db, "assemble", "--budget", "3")
    assert result.exit_code == 2


def test_session_defaults_to_the_most_recent(demo_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "two.sqlite"
    run(db, "demo")
    store = open_store(str(db))
    from lcm_core.store.models import Session

    store.upsert_session(Session(session_id="newer-会话"))
    store.close()
    assert run_json(db, "status")["session_id"] == "newer-会话"
    assert run_json(db, "status", "--session", SESSION)["session_id"] == SESSION


def test_unknown_session_fails(demo_db: Path) -> None:
    result = run(demo_db, "status", "--session", "nope")
    assert result.exit_code == 1 and "nope" in result.stderr


def test_empty_database_says_what_to_do(tmp_path: Path) -> None:
    """Status of an empty store is the first-run screen (exit 0, as a fresh install);
    a command that needs a session says which command gives it one."""
    open_store(str(tmp_path / "empty.sqlite")).close()
    result = run(tmp_path / "empty.sqlite", "status")
    assert result.exit_code == 0 and "lcm demo" in result.stdout
    needs = run(tmp_path / "empty.sqlite", "explain")
    assert needs.exit_code == 1 and "lcm demo" in needs.stderr
