"""`lcm skills ingest|list|enable|disable` and `lcm rules list|override` in both output modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli

SKILLS = Path(__file__).resolve().parents[1] / "fixtures" / "skills"


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def run_json(db: Path, *args: str) -> dict:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.sqlite"
    data = run_json(path, "skills", "ingest", str(SKILLS))
    assert "code-review-zh" in data["added"] and data["rules_written"] > 0
    assert any("broken-frontmatter" in m["path"] for m in data["malformed"])
    return path


def test_ingest_again_changes_nothing(db: Path) -> None:
    data = run_json(db, "skills", "ingest", str(SKILLS))
    assert data["added"] == [] and data["updated"] == [] and data["rules_written"] == 0
    text = run(db, "skills", "ingest", str(SKILLS)).stdout
    assert "unchanged" in text and "malformed" in text


def test_ingest_with_include_glob(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    data = run_json(db, "skills", "ingest", str(SKILLS), "--include", "code-review-zh/SKILL.md")
    assert data["added"] == ["code-review-zh"]


def test_list_and_switch(db: Path) -> None:
    skills = {s["name"]: s for s in run_json(db, "skills", "list")["skills"]}
    assert skills["code-review-zh"]["enabled"] and skills["code-review-zh"]["active_rules"] > 0
    assert "代码评审" in run(db, "skills", "list").stdout
    assert run_json(db, "skills", "disable", "code-review-zh") == {
        "name": "code-review-zh",
        "enabled": False,
    }
    assert not {s["name"]: s for s in run_json(db, "skills", "list")["skills"]}["code-review-zh"][
        "enabled"
    ]
    assert run(db, "skills", "enable", "code-review-zh").stdout.strip().endswith("enabled")
    assert run(db, "skills", "enable", "nope").exit_code == 1


def test_rules_list_and_override(db: Path) -> None:
    rules = run_json(db, "rules", "list", "--skill", "code-review-zh")["rules"]
    assert rules and all(r["skill"] == "code-review-zh" for r in rules)
    rule = rules[0]
    changed = run_json(
        db,
        "rules",
        "override",
        rule["id"],
        "--category",
        "safety",
        "--inactive",
        "--scope",
        '{"paths": ["src/payments/**"]}',
    )
    assert changed["category"] == "safety" and changed["active"] is False
    assert all(r["id"] != rule["id"] for r in run_json(db, "rules", "list")["rules"])
    everything = {r["id"]: r for r in run_json(db, "rules", "list", "--all")["rules"]}
    assert everything[rule["id"]]["overridden"] and everything[rule["id"]]["category"] == "safety"
    shown = run_json(db, "inspect", rule["id"])
    assert shown["kind"] == "rule" and shown["effective"]["scope"] == {"paths": ["src/payments/**"]}
    assert "override" in run(db, "inspect", rule["id"]).stdout
    assert "rules (" in run(db, "rules", "list").stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["nope", "--active"], 1),
        (["RULE"], 2),
        (["RULE", "--category", "nonsense"], 2),
        (["RULE", "--scope", "[1]"], 2),
        (["RULE", "--scope", "{bad"], 2),
    ],
)
def test_override_errors(db: Path, args: list[str], code: int) -> None:
    rule_id = run_json(db, "rules", "list")["rules"][0]["id"]
    result = run(db, "rules", "override", *[rule_id if a == "RULE" else a for a in args])
    assert result.exit_code == code
    assert "Traceback" not in result.output


def test_inspect_a_skill(db: Path) -> None:
    data = run_json(db, "inspect", "code-review-zh")
    assert data["kind"] == "skill" and data["versions"][0]["version"] == 1
    assert "versions" in run(db, "inspect", "code-review-zh").stdout
