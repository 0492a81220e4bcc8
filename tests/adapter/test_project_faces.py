"""Project memory through the faces: capture records the project, status, search and assemble show it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.ingest import IngestReport, ingest_file
from lcm_adapter.dsh.sample import conversation, write_plain
from lcm_adapter.mcp.server import Tools
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.config import load_config
from lcm_core.store.registry import open_store


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def run_json(db: Path, *args: str) -> dict:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def two_projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sessions A and B in /…/app (a git repo), C in /…/app2; A set the region rule."""
    monkeypatch.delenv("LCM_PROJECT", raising=False)
    app, app2 = tmp_path / "app", tmp_path / "app2"
    (app / ".git").mkdir(parents=True)
    (app / "src").mkdir()
    app2.mkdir()
    db = tmp_path / "m.sqlite"
    runtime = MemoryRuntime.open(str(db))
    turns = {
        "A": [("Rule: deploy only to the Shanghai region, never elsewhere.", "Noted.")],
        "B": [("Let's write the deploy script.", "Sure.")],
        "C": [("Let's write the deploy script for the other app.", "Sure.")],
    }
    folders = {"A": app / "src", "B": app, "C": app2}
    for session_id, pairs in turns.items():
        runtime.cwd = str(folders[session_id])
        runtime.on_events(session_id, conversation(pairs))
    runtime.close()
    return db


def test_capture_records_the_git_top_level(two_projects: Path) -> None:
    """A session run in a subfolder of the repo gets the repo's top-level as its project."""
    store = open_store(str(two_projects))
    try:
        projects = {s.session_id: s.project for s in store.list_sessions()}
    finally:
        store.close()
    app = str(two_projects.parent / "app")
    assert projects == {"A": app, "B": app, "C": str(two_projects.parent / "app2")}


def test_status_shows_project_and_scope(two_projects: Path) -> None:
    data = run_json(two_projects, "status", "--session", "B")
    assert data["project"]["project"] == str(two_projects.parent / "app")
    assert data["project"]["scope"] == "session"
    assert sorted(data["project"]["sessions"]) == ["A", "B"]
    text = run(two_projects, "status", "--session", "B").output
    assert "memory scope" in text and "2 session(s) in this project" in text


def test_search_scope(two_projects: Path) -> None:
    """--scope project reaches A from B, never C's project; all reaches every session."""
    mine = run_json(two_projects, "search", "Shanghai region", "--session", "B")
    assert mine["items"] == []
    shared = run_json(
        two_projects, "search", "Shanghai region", "--session", "B", "--scope", "project"
    )
    assert [i["session"] for i in shared["items"]] == ["A"]
    other = run_json(
        two_projects, "search", "Shanghai region", "--session", "C", "--scope", "project"
    )
    assert other["items"] == []
    everywhere = run_json(
        two_projects, "search", "Shanghai region", "--session", "C", "--scope", "all"
    )
    assert [i["session"] for i in everywhere["items"]] == ["A"]
    bad = run(two_projects, "search", "x", "--scope", "world")
    assert bad.exit_code == 2


def test_assemble_scope(two_projects: Path) -> None:
    query = ["--query", "Which region may we deploy to?"]
    plain = run_json(two_projects, "assemble", "--session", "B", *query)
    assert "Shanghai" not in plain["text"]
    shared = run_json(two_projects, "assemble", "--session", "B", *query, "--scope", "project")
    assert "Shanghai region" in shared["text"] and "from session A" in shared["text"]
    other = run_json(two_projects, "assemble", "--session", "C", *query, "--scope", "project")
    assert "Shanghai" not in other["text"]


def test_mcp_search_scope(two_projects: Path) -> None:
    tools = Tools(str(two_projects), load_config())
    found = tools.search("Shanghai region", "B", 10, "project")
    assert [i["session"] for i in found["items"]] == ["A"]
    assert tools.search("Shanghai region", "B", 10)["items"] == []
    with pytest.raises(ValueError, match="scope"):
        tools.search("Shanghai region", "B", 10, "galaxy")


def test_lcm_project_names_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`LCM_PROJECT` joins sessions from different folders into one project."""
    monkeypatch.setenv("LCM_PROJECT", "billing")
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    for session_id, folder in (("x", "one"), ("y", "two")):
        runtime.cwd = str(tmp_path / folder)
        runtime.on_events(session_id, conversation([("hello there", "hi")]))
    sessions = {s.session_id: s.project for s in runtime.store.list_sessions()}
    runtime.close()
    assert sessions == {"x": "id:billing", "y": "id:billing"}


def test_ingest_reads_the_header_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session log's header `cwd` gives the session its project."""
    monkeypatch.delenv("LCM_PROJECT", raising=False)
    log = write_plain(tmp_path / "logs" / "s1.jsonl", "s1", conversation([("hi", "hello")]))
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    ingest_file(runtime, log, IngestReport())
    session = runtime.store.get_session("s1")
    runtime.close()
    assert session is not None and session.cwd == "/work"
