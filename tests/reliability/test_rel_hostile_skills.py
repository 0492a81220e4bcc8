"""Hostile SKILL.md files: parsing fails only with `SkillParseError`, ingest never raises.

Generated files mix frontmatter syntax (quotes, block scalars, flow lists, bad
indentation), Markdown (fences, comments, lists, headings) and arbitrary characters;
some are random bytes. Every file must end up either ingested or listed as malformed.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import rel_support as rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_core.config import load_config
from lcm_store_sqlite import SQLiteMemoryStore

skill_parse = pytest.importorskip("lcm_core.skills.parse")
skill_ingest = pytest.importorskip("lcm_core.skills.ingest")

EXAMPLES = rs.scaled(200, 2_000)
_CASES = itertools.count()
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",))
PIECES = st.sampled_from(
    [
        "---",
        "name:",
        "description:",
        "when_to_use:",
        "when-to-use:",
        "invocation:",
        "allowed-tools:",
        "|",
        "|-",
        ">",
        "[",
        "]",
        "[a, 'b', \"c\"]",
        '"',
        "'",
        ": ",
        "- ",
        "  ",
        "\t",
        "#",
        "## Rules",
        "1. ",
        "* ",
        "```",
        "~~~",
        "<!--",
        "-->",
        "**",
        "必须",
        "不要",
        "Always ",
        "Never ",
        "\\",
        "\\u00",
        "\r\n",
        "\x00",
        "\ufeff",
    ]
)
LINE = st.lists(st.one_of(PIECES, st.text(ANY_CHAR, max_size=12)), max_size=6).map("".join)
DOC = st.lists(LINE, max_size=25).map("\n".join)
SKILL_TEXT = st.one_of(DOC, st.builds(lambda a, b: f"---\n{a}\n---\n{b}", DOC, DOC))


@SETTINGS
@given(text=SKILL_TEXT)
def test_parse_skill_raises_only_its_own_error(text: str) -> None:
    """A malformed file raises `SkillParseError`; a readable one gives a one-line name."""
    rs.bump("hypothesis.skill_parse.examples")
    try:
        doc = skill_parse.parse_skill(text, fallback_name="fallback")
    except skill_parse.SkillParseError:
        return
    assert doc.name and "\n" not in doc.name
    lines = doc.body.split("\n")
    for candidate in skill_parse.rule_candidates(doc.body, doc.body_line):
        assert doc.body_line <= candidate.line < doc.body_line + len(lines)
        assert candidate.text.strip()


@settings(SETTINGS, max_examples=rs.scaled(60, 600))
@given(
    files=st.lists(
        st.one_of(SKILL_TEXT.map(lambda t: t.encode("utf-8")), st.binary(max_size=300)),
        min_size=1,
        max_size=4,
    )
)
def test_ingest_of_hostile_skill_folders_never_raises(tmp_path: Path, files: list[bytes]) -> None:
    """Each file is either ingested or reported malformed; the store stays healthy."""
    rs.bump("hypothesis.skill_ingest.examples")
    case = tmp_path / f"case{next(_CASES)}"
    for index, data in enumerate(files):
        folder = case / "skills" / f"s{index}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(data)
    config = load_config({"skills": {"include": ["skills/*/SKILL.md"]}})
    store = SQLiteMemoryStore(":memory:")
    try:
        report = skill_ingest.ingest_skills(store, config, case)
        assert report.warnings == []
        assert len(report.added) + len(report.malformed) == len(files)
        assert len(store.list_skill_files()) == len(report.added)
        assert store.integrity_check() == []
    finally:
        store.close()
