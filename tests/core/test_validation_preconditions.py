"""Preconditions before file tool operations: allow, or deny with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.validation.preconditions import check_preconditions, paths_in_args


def rules(*entries: Any) -> Any:
    return load_config({"validation": {"preconditions": list(entries)}})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "设计.md").write_text("# 设计\n", encoding="utf-8")
    return tmp_path


def test_must_exist_denies_editing_a_missing_file_and_allows_an_existing_one(project: Path) -> None:
    """Editing src/missing.py is denied with the pattern named; src/app.py is allowed."""
    config = rules(
        {"id": "edit-existing", "pathPattern": "src/**/*.py", "mustExist": True, "tools": ["Edit"]}
    )
    denied = check_preconditions(config, "Edit", {"file_path": "src/missing.py"}, base_dir=project)
    assert not denied.allow and denied.precondition == "edit-existing"
    assert (
        denied.reason
        == "precondition edit-existing: src/missing.py must already exist before Edit (pattern src/**/*.py)"
    )
    assert denied.to_host() == {"kind": "deny", "reason": denied.reason}
    allowed = check_preconditions(
        config, "edit", {"file_path": str(project / "src" / "app.py")}, base_dir=project
    )
    assert allowed.allow and allowed.to_host() == {"kind": "allow"}


def test_must_not_exist_denies_overwriting_and_custom_reason_is_used(project: Path) -> None:
    """A fresh-file rule denies a write over an existing Chinese-named doc, with the configured reason."""
    config = rules(
        {
            "pathPattern": "docs/*.md",
            "mustNotExist": True,
            "tools": ["Write"],
            "reason": "设计文档只能新建，不能覆盖",
        }
    )
    denied = check_preconditions(config, "Write", {"path": "docs/设计.md"}, base_dir=project)
    assert (
        not denied.allow
        and denied.reason == "precondition precondition#0: 设计文档只能新建，不能覆盖"
    )
    assert check_preconditions(config, "Write", {"path": "docs/新文档.md"}, base_dir=project).allow


def test_tools_filter_and_non_matching_paths_allow(project: Path) -> None:
    """A rule for other tools, a path outside the pattern, or a call without a path is allowed."""
    config = rules({"pathPattern": "src/**", "mustExist": True, "tools": ["Edit", "MultiEdit"]})
    assert check_preconditions(
        config, "Read", {"file_path": "src/missing.py"}, base_dir=project
    ).allow
    assert check_preconditions(
        config, "Edit", {"file_path": "lib/missing.py"}, base_dir=project
    ).allow
    assert check_preconditions(config, "Edit", {"command": "ls"}, base_dir=project).allow
    everything = rules({"pathPattern": "src/**", "mustExist": True})
    assert not check_preconditions(
        everything, "AnyTool", {"paths": ["src/app.py", "src/nope.py"]}, base_dir=project
    ).allow


def test_absolute_patterns_and_dot_segments(project: Path) -> None:
    """An absolute pattern matches the absolute path; `..` segments are resolved before matching."""
    config = rules({"pathPattern": f"{project.as_posix()}/src/*.py", "mustExist": True})
    assert not check_preconditions(
        config, "Edit", {"path": "docs/../src/gone.py"}, base_dir=project
    ).allow
    assert check_preconditions(
        config, "Edit", {"path": "docs/../src/app.py"}, base_dir=project
    ).allow


def test_bad_rules_are_reported_and_never_deny(project: Path) -> None:
    """Rules without a pattern, with both or neither flag, or with bad tools are skipped with errors."""
    config = rules(
        "nope",
        {"mustExist": True},
        {"pathPattern": "src/**", "mustExist": True, "mustNotExist": True},
        {"pathPattern": "src/**"},
        {"pathPattern": "src/**", "mustExist": True, "tools": "Edit"},
    )
    decision = check_preconditions(config, "Edit", {"path": "src/missing.py"}, base_dir=project)
    assert decision.allow and len(decision.errors) == 5
    assert "needs a 'pathPattern'" in decision.errors[1] and "exactly one" in decision.errors[2]


def test_paths_in_args_reads_the_usual_keys_once() -> None:
    """Path arguments of common file tools are found in key order without duplicates."""
    assert paths_in_args({"file_path": "a.py", "path": "b.py", "paths": ["b.py", "c.py", 3]}) == [
        "b.py",
        "a.py",
        "c.py",
    ]
    assert paths_in_args(["a.py"]) == [] and paths_in_args({"path": "  "}) == []
