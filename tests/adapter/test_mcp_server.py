"""`lcm mcp`: the server runs as a subprocess and the MCP SDK's own client talks to it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("mcp")
import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from lcm_adapter.cli.main import cli
from lcm_core.store.models import SCHEMA_VERSION

READ_TOOLS = {
    "memory_search",
    "memory_inspect",
    "memory_explain",
    "memory_status",
    "memory_assemble",
}
WRITE_TOOLS = {"memory_forget", "memory_remember"}
TOOLS = READ_TOOLS | WRITE_TOOLS
SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp") / "memory.sqlite"
    assert CliRunner().invoke(cli, ["--db", str(path), "demo"]).exit_code == 0
    return path


def _schema(tool: Any) -> dict[str, Any]:
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
    assert isinstance(schema, dict)
    return schema


def _is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


async def _session(params: StdioServerParameters, calls: list[tuple[str, dict]]) -> dict:
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            out["init"] = await session.initialize()
            out["tools"] = (await session.list_tools()).tools
            out["results"] = [await session.call_tool(n, a) for n, a in calls]
    return out


def talk(params: StdioServerParameters, calls: list[tuple[str, dict]]) -> dict:
    return anyio.run(_session, params, calls)


def server(args: list[str], env: dict[str, str] | None = None) -> StdioServerParameters:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LCM_", "DSH_"))}
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", "from lcm_adapter.cli.main import main; main()", *args],
        env={**base, **(env or {})},
    )


def test_round_trip_every_tool(db: Path) -> None:
    calls = [
        ("memory_status", {}),
        ("memory_search", {"query": "批大小", "limit": 5}),
        ("memory_explain", {"session": SESSION}),
        ("memory_assemble", {"query": "which port did we settle on?", "budget": 800}),
    ]
    out = talk(server(["mcp", "--db", str(db)]), calls)
    tools = {tool.name: tool for tool in out["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        schema = _schema(tool)
        assert schema["type"] == "object" and tool.description
    assert _schema(tools["memory_search"])["required"] == ["query"]
    assert _schema(tools["memory_inspect"])["required"] == ["id"]
    texts = [result.content[0].text for result in out["results"]]
    assert not any(_is_error(r) for r in out["results"])
    status, search, explain, assembled = (json.loads(t) for t in texts)
    assert status["session_id"] == SESSION and status["counts"]["events"] > 100
    assert search["events"] and search["query"] == "批大小"
    assert explain["assembly"]["budget_tokens"] == 3000
    assert assembled["explain"]["budget_tokens"] == 800 and assembled["text"]


def test_inspect_an_item_found_by_search(db: Path) -> None:
    out = talk(server(["mcp", "--db", str(db)]), [("memory_search", {"query": "port 8080"})])
    items = json.loads(out["results"][0].content[0].text)["items"]
    assert items
    out = talk(server(["mcp", "--db", str(db)]), [("memory_inspect", {"id": items[0]["id"]})])
    shown = json.loads(out["results"][0].content[0].text)
    assert shown["kind"] == "item" and shown["item"]["sources"]


def test_errors_come_back_as_tool_errors(db: Path) -> None:
    calls = [
        ("memory_inspect", {"id": "mem_nope"}),
        ("memory_status", {"session": "nope"}),
        ("memory_search", {"query": "   "}),
    ]
    out = talk(server(["mcp", "--db", str(db)]), calls)
    assert all(_is_error(r) for r in out["results"])
    assert "mem_nope" in out["results"][0].content[0].text
    assert "nope" in out["results"][1].content[0].text


def test_database_from_lcm_db(db: Path) -> None:
    out = talk(server(["mcp"], {"LCM_DB": str(db)}), [("memory_status", {})])
    assert json.loads(out["results"][0].content[0].text)["session_id"] == SESSION


def _get(obj: Any, *names: str) -> Any:
    """An attribute by its Python name, whichever spelling this SDK uses."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise AttributeError(names[0])


def test_server_describes_itself_and_its_tools_as_clients_expect(db: Path) -> None:
    from importlib import metadata

    out = talk(server(["mcp", "--db", str(db)]), [("memory_search", {"query": "端口 port"})])
    info = _get(out["init"], "server_info", "serverInfo")
    assert info.name == "long-conversation-memory"
    assert info.version == metadata.version("long-conversation-memory") != ""
    for tool in out["tools"]:
        assert tool.title, tool.name
        hints = tool.annotations
        reads = tool.name in READ_TOOLS
        assert hints is not None and _get(hints, "read_only_hint", "readOnlyHint") is reads
        destroys = tool.name == "memory_forget"
        assert _get(hints, "destructive_hint", "destructiveHint") is destroys
        schema = _get(tool, "output_schema", "outputSchema")
        assert isinstance(schema, dict) and schema["type"] == "object", tool.name
        # A real schema of the result's keys, not `{result: string}` around a JSON text.
        assert "result" not in schema.get("properties", {}), tool.name
    schemas = {t.name: _get(t, "output_schema", "outputSchema") for t in out["tools"]}
    assert {"session", "query", "terms", "items", "events"} <= set(
        schemas["memory_search"]["required"]
    )
    assert {"session_id", "schema_version", "counts"} <= set(schemas["memory_status"]["properties"])
    assert "text" in schemas["memory_assemble"]["properties"]


def test_results_are_structured_and_match_the_text(db: Path) -> None:
    calls = [("memory_status", {}), ("memory_search", {"query": "批大小", "limit": 3})]
    out = talk(server(["mcp", "--db", str(db)]), calls)
    status, search = (_get(r, "structured_content", "structuredContent") for r in out["results"])
    assert status["session_id"] == SESSION and status["schema_version"] == SCHEMA_VERSION
    assert status["counts"]["events"] > 100 and "config_warnings" in status
    assert search["query"] == "批大小" and search["events"]
    assert json.loads(out["results"][1].content[0].text) == search


# --- the two tools that write -------------------------------------------------------
CTL = "会话-mcp"
SECRET = "紫檀木-Zanzibar7731"


def _data(result: object) -> dict:
    return _get(result, "structured_content", "structuredContent")


@pytest.fixture
def fresh_db(tmp_path: Path) -> Path:
    """A session whose second message names a secret, extracted into items."""
    from lcm_core.config import load_config
    from lcm_core.extraction.run import run_extraction
    from lcm_core.store.models import Event
    from lcm_core.store.registry import open_store

    path = tmp_path / "m.sqlite"
    store = open_store(str(path))
    for seq, text in enumerate(
        ("staging 数据库的端口是 6432。", f"我们决定用 {SECRET} 作为部署代号。")
    ):
        store.insert_event(Event(CTL, seq, "user/message", text, role="user", source_kind="user"))
    run_extraction(store, CTL, load_config({}))
    store.close()
    return path


def test_forget_over_mcp_then_search_never_finds_it(fresh_db: Path) -> None:
    """memory_forget erases the item; memory_search and memory_inspect show only a tombstone."""
    query = {"query": "紫檀木 Zanzibar7731", "session": CTL}
    (found,) = talk(server(["mcp", "--db", str(fresh_db)]), [("memory_search", query)])["results"]
    (item,) = [i for i in _data(found)["items"] if SECRET in i["content"]]
    calls = [
        ("memory_forget", {"id": item["id"], "reason": "用户要求 user asked"}),
        ("memory_search", query),
        ("memory_inspect", {"id": item["id"]}),
        ("memory_inspect", {"id": "seq:1", "session": CTL}),
        ("memory_forget", {"id": item["id"]}),
        ("memory_forget", {"id": "mem_nope"}),
    ]
    out = talk(server(["mcp", "--db", str(fresh_db)]), calls)
    forgot, search, inspected, event, again, missing = out["results"]
    assert not _is_error(forgot) and _data(forgot)["items"] == [item["id"]]
    assert _data(forgot)["events"] == [1]
    assert _data(search)["items"] == [] and _data(search)["events"] == []
    tomb = _data(inspected)["item"]
    assert tomb["item"]["status"] == "forgotten" and tomb["item"]["content"] == ""
    assert tomb["lifecycle"][-1]["actor"] == "mcp"
    assert _data(event)["kind"] == "event" and _data(event)["event"]["text"] == ""
    assert _data(again)["already_forgotten"] is True
    assert _is_error(missing) and "mem_nope" in missing.content[0].text
    assert SECRET.encode() not in fresh_db.read_bytes()


def test_remember_over_mcp_is_found_and_kept_once(fresh_db: Path) -> None:
    """memory_remember stores a user_explicit item; the same text again stores nothing."""
    said = "回复时先给结论，再给细节 conclusions first"
    calls = [
        ("memory_remember", {"text": said, "kind": "preference", "session": CTL}),
        ("memory_remember", {"text": said, "session": CTL}),
        ("memory_search", {"query": "结论 细节 conclusions", "session": CTL}),
        ("memory_remember", {"text": "   ", "session": CTL}),
    ]
    first, second, search, empty = talk(server(["mcp", "--db", str(fresh_db)]), calls)["results"]
    item = _data(first)["item"]
    assert _data(first)["created"] and item["evidence_type"] == "user_explicit"
    assert item["kind"] == "preference" and item["source_refs"] == ["seq:-1"]
    assert not _data(second)["created"] and _data(second)["item"]["id"] == item["id"]
    assert item["id"] in [i["id"] for i in _data(search)["items"]]
    assert _is_error(empty) and "nothing to remember" in empty.content[0].text
