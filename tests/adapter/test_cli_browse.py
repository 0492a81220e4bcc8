"""`lcm browse`: Datasette serves the memory file read-only, with its tables, queries and search."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.browse import metadata_for
from lcm_adapter.cli.main import cli

pytest.importorskip("datasette")

SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(base: str, path: str, **params: str) -> Any:
    url = f"{base}{path}?{urllib.parse.urlencode(params)}" if params else f"{base}{path}"
    with urllib.request.urlopen(url, timeout=30) as response:
        body = response.read().decode("utf-8")
    return json.loads(body) if ".json" in path else body


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("browse") / "memory.sqlite"
    assert CliRunner().invoke(cli, ["--db", str(db), "demo"]).exit_code == 0
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LCM_", "DSH_"))}
    entry = "from lcm_adapter.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", entry, "--db", str(db), "browse", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):  # bounded: up to ~60 s on a loaded machine
            if proc.poll() is not None:
                pytest.fail(f"lcm browse exited with {proc.returncode}")
            try:
                _get(base, "/-/versions.json")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        else:
            pytest.fail("lcm browse did not answer within 60 s")
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_tables_are_described_and_items_faceted(served: str) -> None:
    page = _get(served, "/memory/memory_items")
    assert "Typed memory derived from user messages" in page
    data = _get(served, "/memory/memory_items.json", _facet="kind")
    kinds = {f["value"] for f in data["facet_results"]["kind"]["results"]}
    assert {"constraint", "decision"} <= kinds
    status = _get(served, "/memory/memory_items.json")["facet_results"]
    assert "status" in status  # facets from the metadata, without asking


def test_search_on_events_and_items(served: str) -> None:
    events = _get(served, "/memory/events.json", _search="8080", _shape="array")
    assert events and all("8080" in e["text"] for e in events)
    chinese = _get(served, "/memory/events.json", _search="批大小", _shape="array")
    assert chinese and all("批大小" in e["text"] for e in chinese)
    items = _get(served, "/memory/memory_items.json", _search="port", _shape="array")
    assert items and any("8080" in i["content"] for i in items)


def test_canned_queries_answer(served: str) -> None:
    timeline = _get(served, "/memory/session_timeline.json", session=SESSION, _shape="array")
    seqs = [row["seq"] for row in timeline]
    assert len(seqs) > 100 and seqs == sorted(seqs)
    chains = _get(served, "/memory/supersession_chains.json", session="", _shape="array")
    heads = [r for r in chains if r["depth"] == 0]
    assert heads and all(r["status"] == "active" for r in heads)
    assert any(r["depth"] >= 1 and r["status"] == "superseded" for r in chains)
    latest = _get(served, "/memory/latest_assemblies.json", session="", _shape="array")
    assert latest and [r["id"] for r in latest] == sorted((r["id"] for r in latest), reverse=True)
    left_out = _get(served, "/memory/assembly_omissions.json", session="", _shape="array")
    assert left_out and all(r["reason"] and r["section"] for r in left_out)


def test_the_file_is_served_read_only(served: str) -> None:
    databases = _get(served, "/-/databases.json")
    assert [d["is_mutable"] for d in databases if d["name"] == "memory"] == [False]


def test_metadata_is_keyed_by_the_file_name() -> None:
    data = metadata_for(Path("/x/team-memory.sqlite"))
    assert list(data["databases"]) == ["team-memory"]  # type: ignore[call-overload]


def test_browse_refuses_what_it_cannot_serve(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["--db", str(tmp_path / "none.sqlite"), "browse"])
    assert missing.exit_code == 1 and "no database" in missing.output
    assert not (tmp_path / "none.sqlite").exists()
    memory = CliRunner().invoke(cli, ["--db", ":memory:", "browse"])
    assert memory.exit_code == 1 and "SQLite memory file" in memory.output
