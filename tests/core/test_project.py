"""Project identity and project scope: which sessions share memory, and what they share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lcm_core import usecases
from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.step import StepMessage
from lcm_core.capture.project import (
    git_top_level,
    project_identity,
    record_project,
    sibling_sessions,
)
from lcm_core.config import load_config
from lcm_core.store.models import Session

PROJECT = load_config({"memory": {"scope": "project"}, "assembly": {"language": "en"}})


def say(text: str) -> list[StepMessage]:
    return [StepMessage("user", text, "user")]


def compact(script: Any, first_seq: int) -> None:
    script.event(first_seq, "compaction/start", "")
    script.event(first_seq + 1, "compaction/summary", "earlier: chatter")
    script.event(first_seq + 2, "compaction/end", "")


def test_git_folder_marks_the_project_from_any_subfolder(tmp_path: Path) -> None:
    """The git top-level is the project, wherever below it the host runs."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    top = str(tmp_path / "repo")
    assert git_top_level(str(deep)) == top
    assert project_identity(str(deep)) == top
    assert project_identity(str(tmp_path / "repo")) == top


def test_worktree_git_file_is_its_own_top_level(tmp_path: Path) -> None:
    """A worktree's `.git` file (`gitdir: ...`) marks its top-level; another file does not."""
    tree = tmp_path / "wt" / "feature"
    (tree / "lib").mkdir(parents=True)
    (tree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/feature\n", encoding="utf-8")
    assert project_identity(str(tree / "lib")) == str(tree)
    junk = tmp_path / "plain"
    junk.mkdir()
    (junk / ".git").write_text("not a git pointer", encoding="utf-8")
    assert project_identity(str(junk)) == str(junk)


def test_user_id_wins_and_prefix_paths_differ(tmp_path: Path) -> None:
    """A set id names the project; without one, /x/app and /x/app2 are two projects."""
    assert project_identity(str(tmp_path), "billing") == "id:billing"
    app, app2 = tmp_path / "app", tmp_path / "app2"
    app.mkdir()
    app2.mkdir()
    assert project_identity(str(app)) != project_identity(str(app2))
    assert project_identity(None) is None
    assert project_identity("  ") is None


def test_record_project_keeps_the_first_project(script: Any, tmp_path: Path) -> None:
    """A later event from another folder does not move a session to another project."""
    first = record_project(script.store, "s1", str(tmp_path / "a"))
    later = record_project(script.store, "s1", str(tmp_path / "b"))
    assert later.project == first.project == str(tmp_path / "a")
    assert script.store.get_session("s1").project == str(tmp_path / "a")
    named = record_project(script.store, "s1", str(tmp_path / "b"), "billing")
    assert named.project == "id:billing"


def test_siblings_never_cross_projects(new_script: Any, tmp_path: Path) -> None:
    """Only sessions with exactly the same project are siblings; no project, no siblings."""
    script = new_script("a")
    store = script.store
    for session_id, folder in (("a", "app"), ("b", "app"), ("c", "app2"), ("d", "app/")):
        record_project(store, session_id, str(tmp_path / folder))
    script.user(1, "x")
    store.upsert_session(Session("loose"))
    assert sorted(s.session_id for s in sibling_sessions(store, "a")) == ["b", "d"]
    assert sibling_sessions(store, "c") == []
    assert sibling_sessions(store, "loose") == []


def test_equal_relevance_ranks_this_session_first(new_script: Any, tmp_path: Path) -> None:
    """The same statement in this session and another one: this session's ranks above."""
    a = new_script("a")
    for session_id in ("a", "b"):
        record_project(a.store, session_id, str(tmp_path / "app"))
    a.user(1, "Never deploy on Fridays.", time="2026-11-20T09:00:00Z")
    a.item("Never deploy on Fridays", [1], kind="constraint")
    b = type(a)(a.store, "b")
    b.user(1, "Never deploy on Fridays, please.", time="2026-11-27T09:00:00Z")
    b.item("Never deploy on Fridays, please", [1], kind="constraint")
    found = usecases.search(a.store, "b", "deploy Fridays", PROJECT, 10)
    assert [r.item.session_id for r in found.items] == ["b", "a"]
    assert found.items[0].score > found.items[1].score
    only = usecases.search(a.store, "b", "deploy Fridays", PROJECT, 10, "session")
    assert [r.item.session_id for r in only.items] == ["b"]


def test_search_all_reaches_other_projects_only_when_asked(new_script: Any, tmp_path: Path) -> None:
    """`all` is every session; `project` never reaches another project."""
    a = new_script("a")
    record_project(a.store, "a", str(tmp_path / "app"))
    record_project(a.store, "c", str(tmp_path / "app2"))
    c = type(a)(a.store, "c")
    c.user(1, "预算不超过3000元（含税）")
    c.item("预算不超过3000元（含税）", [1], kind="constraint")
    a.user(1, "hello")
    assert usecases.search(a.store, "a", "预算", PROJECT, 10, "project").items == ()
    everywhere = usecases.search(a.store, "a", "预算", PROJECT, 10, "all")
    assert [r.item.session_id for r in everywhere.items] == ["c"]


def test_project_constraints_join_the_resident_set(new_script: Any, tmp_path: Path) -> None:
    """After a compaction, the constraints set in another session of the project are restated."""
    a = new_script("a")
    for session_id in ("a", "b", "c"):
        record_project(
            a.store, session_id, str(tmp_path / ("app2" if session_id == "c" else "app"))
        )
    a.user(1, "Deploy only to the Shanghai region.", time="2026-11-20T09:00:00Z")
    a.item("Deploy only to the Shanghai region", [1], kind="constraint")
    a.item("the office is in Porto", [1], kind="fact")
    b = type(a)(a.store, "b")
    for seq in range(1, 4):
        b.user(seq, f"working on step {seq}")
    compact(b, 4)
    step = say("Let's look at file src/module_17.py next")
    block = assemble(a.store, "b", step, PROJECT).text
    assert "Shanghai region" in block and "from session a of this project" in block
    assert "Porto" not in block  # a fact, not a constraint the user set
    assert "Shanghai" not in assemble(a.store, "b", step, load_config()).text
    c = type(a)(a.store, "c")
    for seq in range(1, 4):
        c.user(seq, f"working on step {seq}")
    compact(c, 4)
    assert "Shanghai" not in assemble(a.store, "c", step, PROJECT).text


def test_project_summary_for_status(new_script: Any, tmp_path: Path) -> None:
    """`status` shows the project, the scope and the project's sessions, this one first."""
    a = new_script("a")
    for session_id in ("a", "b"):
        record_project(a.store, session_id, str(tmp_path / "app"))
    summary = usecases.project_summary(a.store, "a", PROJECT).to_dict()
    assert summary == {
        "project": str(tmp_path / "app"),
        "cwd": str(tmp_path / "app"),
        "scope": "project",
        "sessions": ["a", "b"],
    }


def test_a_crowded_store_never_hides_the_project(new_script: Any, tmp_path: Path) -> None:
    """Many matches in another project: this project's item is still found, theirs never."""
    a = new_script("a")
    record_project(a.store, "a", str(tmp_path / "app"))
    record_project(a.store, "b", str(tmp_path / "app"))
    record_project(a.store, "x", str(tmp_path / "elsewhere"))
    a.user(1, "hello")
    b = type(a)(a.store, "b")
    b.user(1, "Deploy only to the Shanghai region.")
    b.item("Deploy only to the Shanghai region", [1], kind="constraint")
    x = type(a)(a.store, "x")
    for seq in range(1, 41):
        x.user(seq, f"deploy region note {seq}")
        x.item(f"deploy region, deploy region {seq}", [seq], kind="constraint")
    found = usecases.search(a.store, "a", "deploy region", PROJECT, 20, "project")
    assert [r.item.session_id for r in found.items] == ["b"]
