"""What README.md and docs/ say lcm prints, stores and accepts is what it does.

The sample block is lines of the demo's block, the doctor line is doctor's, the DSH
session-log example ingests as described, every setting has the documented default,
every plugin key and `/memory` subcommand exists (and every one that exists is
documented), and the data model's lists are the schema's vocabulary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from docs_markdown import (
    DOCS,
    README,
    ROOT,
    code_spans,
    fenced_body,
    marked_block,
    pages,
    table_cells,
    unquote,
)

from lcm_adapter import commands
from lcm_adapter.cli.main import cli
from lcm_core.config import LIMITS, load_config
from lcm_core.store import models

PLUGIN = ROOT / "lcm_adapter" / "dsh" / "plugin.mjs"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """A kept demo database and the English block `lcm demo --language en` printed."""
    db = tmp_path_factory.mktemp("docs") / "demo.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(db), "demo", "--language", "en", "--json"])
    assert result.exit_code == 0, result.output
    return db, json.loads(result.stdout)


def test_the_readme_sample_block_is_what_the_demo_prints(
    demo_db: tuple[Path, dict[str, object]],
) -> None:
    """Each sample line is a line of the demo's English block, in the block's order."""
    block_lines = str(demo_db[1]["block"]).splitlines()
    sample = fenced_body(marked_block(README, "demo-block")).splitlines()
    assert len([line for line in sample if line.strip()]) >= 5
    position = 0
    for line in sample:
        if not line.strip():
            continue
        assert line in block_lines[position:], (
            f"README.md's sample line is not (or no longer in this order) in the block of "
            f"`lcm demo --language en`; copy it again from there: {line!r}"
        )
        position = block_lines.index(line, position) + 1


def test_doctor_lines_quoted_in_the_docs_are_doctor_lines(
    demo_db: tuple[Path, dict[str, object]],
) -> None:
    result = CliRunner().invoke(cli, ["--db", str(demo_db[0]), "doctor"])
    assert result.exit_code == 0, result.output
    printed = {" ".join(line.split()) for line in result.stdout.splitlines()}
    quoted = [c for p in pages() for c in code_spans(p) if c.text.startswith("full-text ")]
    assert quoted, "the docs no longer quote doctor's full-text line"
    for claim in quoted:
        assert " ".join(claim.text.split()) in printed, f"{claim.where()}: doctor prints otherwise"


def test_the_session_log_example_ingests_as_the_page_says(tmp_path: Path) -> None:
    page = DOCS / "dsh.md"
    log = tmp_path / "session.v4.jsonl"
    log.write_text(fenced_body(marked_block(page, "session-log-example")), encoding="utf-8")
    db = tmp_path / "try.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(log), "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    said = re.search(r"`lcm ingest` stores (\d+) events", page.read_text(encoding="utf-8"))
    assert said and report["events"] == report["inserted"] == int(said.group(1))
    assert report["issues"] == [] and report["sessions"] == 1
    searched = CliRunner().invoke(cli, ["--db", str(db), "search", "部署", "--json"])
    kinds = sorted(item["kind"] for item in json.loads(searched.stdout)["items"])
    assert kinds == ["constraint", "decision"]  # "Never deploy on Fridays", 周四下午部署
    items = CliRunner().invoke(cli, ["--db", str(db), "status", "--json"])
    assert json.loads(items.stdout)["items_by_status"]["active"] == 3  # with 日志保留不超过30天


def test_every_setting_in_the_table_exists_with_its_default() -> None:
    table = (DOCS / "settings.md").read_text(encoding="utf-8").split("## Every setting")[1]
    config = load_config()
    rows = [
        (key, default)  # one table per section: each one's header row is left out
        for key, default in zip(table_cells(table), table_cells(table, 1), strict=True)
        if key != "key"
    ]
    assert {unquote(key) for key, _ in rows} == set(LIMITS), "docs/settings.md misses settings"
    for key, default in rows:
        value = config.get(unquote(key))  # a KeyError names a setting that is gone
        written = isinstance(value, list | bool) or value == ""
        shown = json.dumps(value, ensure_ascii=False) if written else value
        assert unquote(default) == str(shown), f"{key}: docs say {default}, the default is {shown}"


_SETTING = re.compile(
    r"^(capture|archive|extraction|retrieval|assembly|diagnostics|compatibility|skills"
    r"|validation|host|memory|hooks)\.([a-z]\w*)$"
)


def test_every_setting_named_anywhere_exists() -> None:
    config = load_config()
    for page in pages():
        for claim in code_spans(page):
            match = _SETTING.match(claim.text)
            if match and match.group(2) not in ("sqlite", "db", "json", "jsonl", "log"):
                try:
                    config.get(claim.text)
                except KeyError:
                    pytest.fail(f"{claim.where()}: no setting {claim.text}")


def test_the_plugin_settings_table_is_the_plugins_keys() -> None:
    table = (DOCS / "dsh.md").read_text(encoding="utf-8").split("## The plugin's settings")[1]
    documented = {unquote(cell) for cell in table_cells(table.split("\n## ", 1)[0])}
    used = set(re.findall(r"\bconfig\.(\w+)", PLUGIN.read_text(encoding="utf-8")))
    assert documented == used, (
        f"only documented: {documented - used}; undocumented: {used - documented}"
    )


def test_every_memory_subcommand_is_documented_and_exists() -> None:
    text = (DOCS / "dsh.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"`/memory (\w+)", text))
    assert shown == set(commands.names())


@pytest.mark.parametrize(
    ("marker", "vocabulary"),
    [
        ("kinds", models.MEMORY_KINDS),
        ("evidence types", models.EVIDENCE_TYPES),
        ("statuses", models.ITEM_STATUSES),
        ("event stores", models.EVENT_STORES),
        ("tables", models.TABLES),
    ],
)
def test_the_data_model_lists_the_schemas_vocabulary(
    marker: str, vocabulary: tuple[str, ...]
) -> None:
    block = marked_block(DOCS / "data-model.md", marker)
    assert [unquote(cell) for cell in table_cells(block)] == list(vocabulary)


def test_the_data_model_lists_every_lifecycle_event() -> None:
    block = marked_block(DOCS / "data-model.md", "lifecycle")
    assert re.findall(r"`(\w+)`", block.split(":", 1)[1]) == list(models.LIFECYCLE_EVENTS)


def test_the_section_order_described_is_the_blocks() -> None:
    from lcm_core.assembly.render import SECTION_ORDER

    text = " ".join((DOCS / "architecture.md").read_text(encoding="utf-8").split())
    found = re.search(r"sections in the fixed order (.+?) under the token", text)
    assert found, "docs/architecture.md no longer states the section order"
    assert [s.strip() for s in found.group(1).split(",")] == list(SECTION_ORDER)
