"""`assembly.language`: the block's headings follow the user's language, or the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.sample import conversation, write_plain
from lcm_core.text.block_words import EN, ZH, detect_language

ENGLISH_TURNS = [
    ("Keep the nightly export under 300 dollars a month", "Noted: under 300 dollars a month."),
    ("The staging cluster should run 2 replicas for now", "Okay, 2 replicas on staging."),
]
CHINESE_TURNS = [
    ("夜间导出每月费用不超过三百元", "好的，每月不超过三百元。"),
    ("staging 集群先跑 2 个副本", "好的，staging 先 2 个副本。"),
]


def ingested(tmp_path: Path, name: str, turns: list[tuple[str, str]]) -> Path:
    db = tmp_path / f"{name}.sqlite"
    log = write_plain(tmp_path / name / "session.v4.jsonl", name, conversation(turns))
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(log), "--quiet"])
    assert result.exit_code == 0, result.output
    return db


def block(db: Path, query: str, *config: Path) -> str:
    args = ["--db", str(db), *(a for c in config for a in ("--config", str(c)))]
    result: Result = CliRunner().invoke(cli, [*args, "assemble", "--query", query, "--json"])
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["text"])


@pytest.mark.parametrize(
    ("texts", "language"),
    [
        (["Keep the export under 300 dollars"], "en"),
        (["夜间导出不超过三百元"], "zh"),
        (["把 config/deploy.yaml 里的 replicas 改成 3"], "zh"),
        (["Ask the 北京 office about the long list of staging replicas to keep"], "en"),
        ([], "zh"),
        (["12345 ..."], "zh"),
    ],
)
def test_detect_language(texts: list[str], language: str) -> None:
    assert detect_language(texts) == language


def test_auto_follows_the_user_and_a_setting_overrides_it(tmp_path: Path) -> None:
    english = ingested(tmp_path, "english", ENGLISH_TURNS)
    chinese = ingested(tmp_path, "chinese", CHINESE_TURNS)
    assert block(english, "export budget").startswith(EN.header)
    assert block(chinese, "导出 费用").startswith(ZH.header)
    forced = tmp_path / "zh.toml"
    forced.write_text('[assembly]\nlanguage = "zh"\n', encoding="utf-8")
    assert block(english, "export budget", forced).startswith(ZH.header)
    english_setting = tmp_path / "en.json"
    english_setting.write_text('{"assembly": {"language": "en"}}', encoding="utf-8")
    text = block(chinese, "导出 费用", english_setting)
    assert text.startswith(EN.header) and EN.section_titles["standing"] in text
    assert "夜间导出每月费用不超过三百元" in text  # quotes keep their own language


def test_an_unknown_language_is_a_warning_and_auto(tmp_path: Path) -> None:
    english = ingested(tmp_path, "english", ENGLISH_TURNS)
    bad = tmp_path / "bad.json"
    bad.write_text('{"assembly": {"language": "fr"}}', encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["--db", str(english), "--config", str(bad), "assemble", "--query", "export"]
    )
    assert result.exit_code == 0, result.output
    assert "assembly.language" in result.stderr
    assert result.stdout.startswith(EN.header.splitlines()[0])
