"""Skill ingestion, versioning, overrides, the resident core and task-relevant rule selection."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.skills.select import (
    CURRENT_STATE_WARNING,
    effective_rules,
    ingest_skills,
    malformed_skills,
    resident_core,
    rule_id,
    rule_key,
    select_rules,
    set_rule_override,
    set_skill_enabled,
)
from lcm_store_sqlite import SQLiteMemoryStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "skills"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def store() -> Iterator[SQLiteMemoryStore]:
    handle = SQLiteMemoryStore(":memory:")
    yield handle
    handle.close()


def fixture_config(**skills: Any) -> Any:
    values = {"include": EXPECTED["include"], "exclude": EXPECTED["exclude"], **skills}
    return load_config({"skills": values})


@pytest.fixture
def ingested(store: SQLiteMemoryStore) -> SQLiteMemoryStore:
    ingest_skills(store, fixture_config(), FIXTURES)
    return store


@pytest.fixture(scope="module")
def shared() -> Iterator[SQLiteMemoryStore]:
    """The fixture tree ingested once, for tests that only read."""
    handle = SQLiteMemoryStore(":memory:")
    ingest_skills(handle, fixture_config(), FIXTURES)
    yield handle
    handle.close()


def write_skill(
    folder: Path, body: str, name: str = "notes", description: str = "Notes skill."
) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")
    return path


# --- the fixture tree -----------------------------------------------------------------


def test_fixture_tree_ingests_every_wellformed_skill_and_reports_the_broken_one(
    store: SQLiteMemoryStore,
) -> None:
    """Six good skills land, the malformed header is reported with its line, drafts are excluded."""
    report = ingest_skills(store, fixture_config(), FIXTURES)
    assert sorted(report.added) == sorted(EXPECTED["skills"])
    assert [(m.path, m.line) for m in report.malformed] == [
        (m["path"], m["line"]) for m in EXPECTED["malformed"]
    ]
    assert "experimental" not in {s.name for s in store.list_skill_files()}
    assert [(m.path, m.line) for m in malformed_skills(store)] == [
        (m["path"], m["line"]) for m in EXPECTED["malformed"]
    ]


@pytest.mark.parametrize("name", sorted(EXPECTED["skills"]))
def test_fixture_skill_header_and_rules_match_expectations(
    shared: SQLiteMemoryStore, name: str
) -> None:
    """Header fields, rule lines, texts, scopes and (but for listed misses) categories are as judged by hand."""
    expected = EXPECTED["skills"][name]
    skill = shared.get_skill_file(name)
    assert skill is not None
    assert (skill.path, skill.description, skill.when_to_use, skill.invocation) == (
        expected["path"],
        expected["description"],
        expected["when_to_use"],
        expected["invocation"],
    )
    rules = effective_rules(shared, skill_name=name)
    if "rule_count" in expected:
        assert len(rules) == expected["rule_count"]
        assert dict(Counter(r.category for r in rules)) == expected["category_counts"]
    misses = {(m["skill"], m["line"]): m for m in EXPECTED["known_misses"]}
    got = rules[: len(expected["rules"])]
    assert [(r.source_line, r.text) for r in got] == [
        (e["line"], e["text"]) for e in expected["rules"]
    ]
    for rule, want in zip(got, expected["rules"], strict=True):
        miss = misses.get((name, rule.source_line))
        # A known miss must stay exactly as recorded: a fix or a new error both show up.
        assert rule.category == (miss["classifier"] if miss else want["category"]), rule.text
        assert rule.scope == {
            "targets": want["targets"],
            "paths": want["paths"],
            "tools": want["tools"],
        }
        assert rule.source_path == expected["path"]


def test_duplicate_rule_lines_collapse_into_one_rule_each(shared: SQLiteMemoryStore) -> None:
    """Lines differing only in case, spacing or emphasis are one rule, kept at their first line."""
    rules = effective_rules(shared, skill_name="duplicate-rules")
    assert [r.source_line for r in rules] == [8, 9, 11]
    assert len({r.rule_key for r in rules}) == 3
    assert rule_key("always  run the **linter** before pushing.") == rule_key(
        "Always run the linter before pushing."
    )


def test_huge_skill_is_capped_with_a_warning(store: SQLiteMemoryStore) -> None:
    """A skill with more rules than the cap keeps the first ones and says where it stopped."""
    report = ingest_skills(store, fixture_config(include=["huge-handbook/SKILL.md"]), FIXTURES)
    assert len(effective_rules(store)) == 400
    assert any("more than 400 rules" in w for w in report.warnings)


# --- versioning and idempotence ----------------------------------------------------------


def test_reingest_of_unchanged_tree_writes_nothing(ingested: SQLiteMemoryStore) -> None:
    """A second ingest of the same files changes no row, timestamps included."""
    before = {t: list(ingested.export_rows(t)) for t in ("skill_versions", "skill_files", "rules")}
    report = ingest_skills(ingested, fixture_config(), FIXTURES)
    after = {t: list(ingested.export_rows(t)) for t in ("skill_versions", "skill_files", "rules")}
    assert report.added == report.updated == [] and report.rules_written == 0
    assert sorted(report.unchanged) == sorted(EXPECTED["skills"])
    assert before == after


def test_three_edits_make_three_linked_versions_and_deactivate_vanished_rules(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """Each distinct content is a version superseding the previous; removed rules go inactive, not away."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    path = write_skill(tmp_path, "## Steps\n\n1. Run the tests first.\n2. 然后提交代码。\n")
    ingest_skills(store, config, tmp_path)
    path.write_text(
        path.read_text(encoding="utf-8") + "3. Finally, tag the release.\n", encoding="utf-8"
    )
    ingest_skills(store, config, tmp_path)
    text = path.read_text(encoding="utf-8").replace("2. 然后提交代码。\n", "")
    path.write_text(text, encoding="utf-8")
    report = ingest_skills(store, config, tmp_path)

    versions = store.list_skill_versions("notes")
    assert [v.version for v in versions] == [1, 2, 3]
    assert [v.supersedes for v in versions] == [None, versions[0].id, versions[1].id]
    skill = store.get_skill_file("notes")
    assert skill is not None and (skill.version, skill.version_id) == (3, versions[2].id)
    assert report.updated == ["notes"] and report.rules_deactivated == 1
    state = {r.text: r.active for r in store.list_rules(skill_name="notes")}
    assert state == {
        "Run the tests first.": True,
        "然后提交代码。": False,
        "Finally, tag the release.": True,
    }


def test_rule_that_returns_is_reactivated_under_the_same_id(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """Deleting and restoring a line gives back the same rule id, active again."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    path = write_skill(tmp_path, "## Rules\n\n- Never log tokens.\n- Keep logs for 30 days.\n")
    ingest_skills(store, config, tmp_path)
    original = {r.text: r.id for r in store.list_rules()}
    path.write_text(
        path.read_text(encoding="utf-8").replace("- Keep logs for 30 days.\n", ""), encoding="utf-8"
    )
    ingest_skills(store, config, tmp_path)
    path.write_text(
        path.read_text(encoding="utf-8") + "- Keep logs for 30 days.\n", encoding="utf-8"
    )
    ingest_skills(store, config, tmp_path)
    assert {r.text: (r.id, r.active) for r in store.list_rules()} == {
        text: (rid, True) for text, rid in original.items()
    }


def test_skill_whose_file_vanishes_has_its_rules_deactivated(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """A skill no longer selected keeps its rows but none of its rules stay active."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    write_skill(tmp_path, "- Always cite the source.\n", name="gone")
    write_skill(tmp_path, "- 必须注明数据来源。\n", name="kept")
    ingest_skills(store, config, tmp_path)
    shutil.rmtree(tmp_path / "gone")
    report = ingest_skills(store, config, tmp_path)
    assert report.removed == ["gone"]
    assert [r.skill_name for r in effective_rules(store)] == ["kept"]
    assert store.get_skill_file("gone") is not None


def test_a_skill_that_turns_malformed_keeps_its_last_good_rules(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """Breaking the header of an ingested skill reports it and leaves its rules as they were."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    path = write_skill(tmp_path, "- Always cite the source.\n")
    ingest_skills(store, config, tmp_path)
    path.write_text(
        "---\nname: notes\ndescription: [unclosed\n---\n- Different rule.\n", encoding="utf-8"
    )
    report = ingest_skills(store, config, tmp_path)
    assert [m.path for m in report.malformed] == ["notes/SKILL.md"]
    assert [r.text for r in effective_rules(store)] == ["Always cite the source."]
    assert len(store.list_skill_versions("notes")) == 1


def test_malformed_skill_does_not_stop_the_others(store: SQLiteMemoryStore, tmp_path: Path) -> None:
    """Broken files of several kinds are each reported once; the good skill after them still lands."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    (tmp_path / "a-bad").mkdir()
    (tmp_path / "a-bad" / "SKILL.md").write_text("no header at all\n- rule\n", encoding="utf-8")
    (tmp_path / "b-bytes").mkdir()
    (tmp_path / "b-bytes" / "SKILL.md").write_bytes(b"---\nname: x\n---\n\xff\xfe broken")
    write_skill(tmp_path, "- Always cite the source.\n", name="c-good")
    write_skill(tmp_path, "- Another rule.\n", name="d-twin").write_text(
        "---\nname: c-good\n---\n- Same name twice.\n", encoding="utf-8"
    )
    report = ingest_skills(store, config, tmp_path)
    reasons = {m.path: m.reason for m in report.malformed}
    assert set(reasons) == {"a-bad/SKILL.md", "b-bytes/SKILL.md", "d-twin/SKILL.md"}
    assert "frontmatter" in reasons["a-bad/SKILL.md"]
    assert "UTF-8" in reasons["b-bytes/SKILL.md"]
    assert "already defined" in reasons["d-twin/SKILL.md"]
    assert report.added == ["c-good"]


# --- overrides and enabled flags ---------------------------------------------------------


def test_override_changes_category_scope_and_active_and_survives_reingest(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """An override applies on read, outlives a file edit around its rule, and leaves the stored rule alone."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    path = write_skill(tmp_path, "## Rules\n\n- Never log tokens.\n- 回复使用中文。\n")
    ingest_skills(store, config, tmp_path)
    target = next(r for r in store.list_rules() if r.text == "Never log tokens.")
    other = next(r for r in store.list_rules() if r.text == "回复使用中文。")
    set_rule_override(store, target.id, category="safety")
    set_rule_override(
        store, target.id, scope={"targets": ["body"], "paths": ["logs/**"], "tools": []}
    )
    set_rule_override(store, other.id, active=False)

    path.write_text(
        path.read_text(encoding="utf-8") + "- A new line after them.\n", encoding="utf-8"
    )
    ingest_skills(store, config, tmp_path)

    rules = {r.text: r for r in effective_rules(store)}
    assert rules["Never log tokens."].category == "safety"
    assert rules["Never log tokens."].scope["paths"] == ["logs/**"]
    assert "回复使用中文。" not in rules
    stored = next(r for r in store.list_rules() if r.id == target.id)
    assert (stored.category, stored.scope["paths"], stored.active) == ("constraint", [], True)


def test_override_rejects_unknown_category(ingested: SQLiteMemoryStore) -> None:
    """Only the six categories may be set."""
    with pytest.raises(ValueError, match="unknown rule category"):
        set_rule_override(ingested, rule_id("git-workflow", "x"), category="vibes")


def test_disabled_skill_drops_out_of_core_and_selection(ingested: SQLiteMemoryStore) -> None:
    """Disabling a skill hides its description, workflow lines and rules; re-ingest keeps it disabled."""
    assert set_skill_enabled(ingested, "git-workflow", False)
    ingest_skills(ingested, fixture_config(), FIXTURES)
    config = fixture_config()
    assert "git-workflow" not in {line.skill_name for line in resident_core(ingested, config)}
    assert not [
        s
        for s in select_rules(ingested, ["force-push", "secrets"])
        if s.rule.skill_name == "git-workflow"
    ]
    assert not set_skill_enabled(ingested, "no-such-skill", True)


# --- what assembly reads -----------------------------------------------------------------


def test_resident_core_is_descriptions_then_workflow_lines_in_skill_order(
    shared: SQLiteMemoryStore,
) -> None:
    """Per skill by name: the description, then at most `coreLinesPerSkill` workflow rules by line."""
    lines = resident_core(shared, fixture_config(coreLinesPerSkill=2))
    assert [line.skill_name for line in lines if line.kind == "description"] == sorted(
        EXPECTED["skills"]
    )
    git = [(line.kind, line.text) for line in lines if line.skill_name == "git-workflow"]
    assert git == [
        ("description", "Branching, committing and pull-request routine for this repository."),
        ("workflow", "Run `git status` first and read what is staged."),
        ("workflow", "Run the test suite with `pytest -q` before every commit."),
    ]
    assert resident_core(shared, fixture_config(coreLinesPerSkill=2)) == lines


def test_select_rules_finds_task_relevant_rules_with_current_state_warning(
    shared: SQLiteMemoryStore,
) -> None:
    """A Chinese task about the alert threshold selects the current_state rule and flags it."""
    picked = select_rules(shared, ["告警", "阈值", "延迟"], limit=3)
    assert picked and picked[0].rule.text.startswith("当前告警阈值")
    assert picked[0].warning == CURRENT_STATE_WARNING
    assert set(picked[0].matched) >= {"告警", "阈值"}
    assert all(s.warning is None for s in picked if s.rule.category != "current_state")


def test_select_rules_matches_paths_and_skips_core_lines(shared: SQLiteMemoryStore) -> None:
    """A task path inside a rule's glob selects it; rules already in the core are not repeated."""
    picked = select_rules(shared, ["edit"], paths=["data/raw/2026/week48.csv"], limit=5)
    assert picked[0].rule.text.startswith("Never edit files under `data/raw/**`")
    assert "paths data/raw/**, data/derived/" in picked[0].scope_note
    config = fixture_config()
    core_ids = {line.rule_id for line in resident_core(shared, config) if line.rule_id}
    with_core = select_rules(shared, ["run", "tests", "commit", "pytest"], limit=50)
    without_core = select_rules(
        shared, ["run", "tests", "commit", "pytest"], limit=50, config=config
    )
    assert core_ids & {s.rule.id for s in with_core}
    assert not core_ids & {s.rule.id for s in without_core}


def test_select_rules_ignores_function_words_and_orders_deterministically(
    shared: SQLiteMemoryStore,
) -> None:
    """Stopwords alone select nothing; equal scores sort by skill, line, key."""
    assert select_rules(shared, ["the", "and", "to", "的"]) == []
    picked = select_rules(shared, ["branch"], limit=10)
    assert [s.rule.source_line for s in picked] == sorted(s.rule.source_line or 0 for s in picked)
    assert select_rules(shared, ["branch"], limit=10) == picked


def test_rule_provider_feeds_assembly_core_lines_and_compact_rules(
    shared: SQLiteMemoryStore,
) -> None:
    """The provider gives plain core lines and rules whose scope keeps only what narrows them."""
    from lcm_core.assembly.assemble import assemble
    from lcm_core.skills.select import rule_provider
    from lcm_core.text.query import query_signals

    config = fixture_config(coreLinesPerSkill=1, ruleLimit=3)
    core, rules = rule_provider(
        shared, query_signals("整理 data/raw/week48.csv 里的告警阈值"), config
    )
    assert core[:2] == [
        "- code-review-zh: 代码评审助手：按团队规范审查改动，指出风险并给出修改建议。",
        "  - [rule "
        + rule_id("code-review-zh", rule_key("首先阅读改动说明和关联的需求单。"))
        + "] 首先阅读改动说明和关联的需求单。",
    ]
    assert [r.text[:10] for r in rules] == ["Never edit", "当前告警阈值为 p9"]
    assert rules[0].scope == {"paths": ["data/raw/**", "data/derived/"]}
    assert rules[1].scope == {} and rules[1].category == "current_state"

    result = assemble(
        shared, "s-empty", config=config, query="告警阈值是多少？", rules=rule_provider
    )
    assert "## 技能: 常驻要点" in result.text and "## 技能: 相关规则" in result.text
    assert "当前告警阈值" in result.text


def test_cached_rules_follow_overrides_from_another_handle(tmp_path: Path) -> None:
    """A reader's cached rule set is dropped when another handle on the same file changes a rule."""
    config = load_config({"skills": {"include": ["*/SKILL.md"]}})
    write_skill(tmp_path / "skills", "- Always cite the source.\n- 必须注明数据来源。\n")
    reader = SQLiteMemoryStore(tmp_path / "m.sqlite")
    writer = SQLiteMemoryStore(tmp_path / "m.sqlite")
    try:
        ingest_skills(writer, config, tmp_path / "skills")
        assert len(effective_rules(reader)) == 2
        target = effective_rules(reader)[0]
        set_rule_override(writer, target.id, active=False)
        assert [r.text for r in effective_rules(reader)] == ["必须注明数据来源。"]
        set_skill_enabled(writer, "notes", False)
        assert effective_rules(reader) == []
    finally:
        reader.close()
        writer.close()


def test_plural_query_words_select_rules_written_with_the_singular() -> None:
    """a query word arrives stemmed ("percentages" -> "percentag"); rules still match it."""
    from lcm_core.skills.select import _matched_terms, _rule_terms
    from lcm_core.text.query import query_signals, search_terms

    terms = frozenset(search_terms(query_signals("what about percentages?")))
    assert _matched_terms(terms, _rule_terms("Every percentage keeps one decimal place"))
    assert not _matched_terms(terms, _rule_terms("Every ratio keeps one decimal place"))
