"""`lcm rules standing`: the user's rules in force, as every step restates them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_core.capture.project import record_project
from lcm_core.config import load_config
from lcm_core.extraction.run import run_extraction
from lcm_core.store.models import Event
from lcm_core.store.registry import open_store

DAY_MS = 86_400_000
START_MS = 1_796_000_000_000


def say(path: Path, session: str, day: int, *texts: str) -> None:
    """The user says `texts` in a session of the project /w/app on `day`; extraction runs."""
    store = open_store(str(path))
    record_project(store, session, "/w/app")
    store.insert_events(
        Event(
            session,
            seq,
            "user/message",
            text,
            role="user",
            source_kind="user",
            time=str(START_MS + day * DAY_MS + seq * 1000),
        )
        for seq, text in enumerate(texts)
    )
    assert run_extraction(store, session, load_config()).errors == []
    store.close()


def standing(db: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--db", str(db), "rules", "standing", "--json", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_the_rules_in_force_latest_version_only_across_the_project(tmp_path: Path) -> None:
    """An English convention corrected in Chinese in a later session: the project scope
    lists the correction alone, with the subject it governs and the day it was said."""
    db = tmp_path / "memory.sqlite"
    say(db, "one", 0, "Always end method names with '_a'.", "Add docstrings to every method.")
    say(db, "two", 2, "以后方法名改成以 '_p' 结尾。", "今天天气不错。")
    rules = standing(db, "--session", "two", "--scope", "project")["rules"]
    by_key = {r["key"]: r for r in rules}
    assert "'_p'" in by_key["naming/method/suffix"]["content"]
    assert not any("'_a'" in r["content"] for r in rules)
    assert by_key["docstrings/method"]["session_id"] == "one"
    assert by_key["naming/method/suffix"]["said"] == "2026-12-02"
    only_two = standing(db, "--session", "two", "--scope", "session")["rules"]
    assert [r["key"] for r in only_two] == ["naming/method/suffix"]


def test_the_table_keeps_ids_and_subjects_whole_and_a_bad_session_is_one_line(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.sqlite"
    say(db, "one", 0, "Never write to the production database, connect to the read replica only.")
    result = CliRunner().invoke(cli, ["--db", str(db), "rules", "standing"])
    assert result.exit_code == 0, result.output
    rule = standing(db)["rules"][0]
    assert rule["id"] in result.output and rule["key"] in result.output
    missing = CliRunner().invoke(cli, ["--db", str(db), "rules", "standing", "--session", "nope"])
    assert missing.exit_code == 1 and missing.output.strip().count("\n") == 0
    assert "no session 'nope'" in missing.output
