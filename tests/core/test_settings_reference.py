"""Each setting is declared once, and docs/settings.md is what the declarations give.

The declarations (`lcm_core.config.sections`) are the one place a setting's default,
bounds and help are written; a declaration missing its help or breaking its own bounds
fails at import, and the reference page fails its check until it is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lcm_core.config import DEFAULTS, LIMITS, SETTINGS, json_schema, load_config
from lcm_core.config import reference as ref
from lcm_core.config.declare import Section, declared, setting
from lcm_core.config.sections import SECTIONS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


@dataclass(frozen=True, slots=True)
class _HooksWithANewSetting(Section):
    """`hooks.*`: the hooks section as it would be with one setting added."""

    max_context_chars: int = setting(8000, low=500, high=1_000_000, help="as declared")
    greeting: str = setting("你好", help="问候语 shown first (a mixed-language help)")


def test_the_settings_page_is_what_the_declarations_give() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert ref.refreshed(text) == text, f"docs/settings.md is stale; run: {ref.COMMAND}"


def test_the_page_lists_every_setting_once_with_its_default_and_help() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for entry in SETTINGS:
        rows = [line for line in text.splitlines() if line.startswith(f"| `{entry.path}` |")]
        assert len(rows) == 1, entry.path
        assert entry.help.replace("|", "\\|") in rows[0], entry.path
    assert len(SETTINGS) == len(LIMITS) == 54


def test_check_fails_when_a_setting_is_added_without_rewriting_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "settings.md"
    page.write_text(PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    assert ref.main(["--check", "--page", str(page)]) == 0
    monkeypatch.setattr(ref, "SECTIONS", {**SECTIONS, "hooks": _HooksWithANewSetting})
    assert ref.main(["--check", "--page", str(page)]) == 1
    assert ref.COMMAND in capsys.readouterr().err
    assert ref.main(["--write", "--page", str(page)]) == 0
    assert ref.main(["--check", "--page", str(page)]) == 0
    written = page.read_text(encoding="utf-8")
    assert (
        "| `hooks.greeting` | `你好` | a string | 问候语 shown first (a mixed-language help) |"
        in (written)
    )
    # Only the generated block changed: the prose around it is the page's own.
    before, after = PAGE.read_text(encoding="utf-8").split("<!-- settings")
    assert written.startswith(before)
    assert written.endswith(after.split("<!-- /settings -->")[1])


def test_a_page_without_the_markers_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "settings.md"
    page.write_text("# Settings\n\nno tables here\n", encoding="utf-8")
    assert ref.main(["--write", "--page", str(page)]) == 2
    assert page.read_text(encoding="utf-8") == "# Settings\n\nno tables here\n"
    error = capsys.readouterr().err
    assert "no <!-- settings -->" in error and error.count("\n") == 1


def test_the_derived_tables_agree_with_the_declarations() -> None:
    """DEFAULTS, LIMITS, the typed sections and the schema all come from one declaration."""
    config = load_config()
    schema = json_schema()["properties"]
    for entry in SETTINGS:
        section, _, leaf = entry.path.rpartition(".")
        assert LIMITS[entry.path] == entry.limit
        assert (DEFAULTS[section] if section else DEFAULTS)[leaf] == entry.default
        leaf_schema = (schema[section]["properties"] if section else schema)[leaf]
        assert leaf_schema["default"] == entry.default
        assert leaf_schema["description"] == entry.help
        typed = getattr(getattr(config, section) if section else config, entry.attribute)
        assert (list(typed) if isinstance(typed, tuple) else typed) == entry.default


def test_the_schema_default_is_a_copy() -> None:
    json_schema()["properties"]["assembly"]["properties"]["evidenceTypes"]["default"].append("x")
    assert DEFAULTS["assembly"]["evidenceTypes"] == ["user/message"]


@dataclass(frozen=True, slots=True)
class _Undeclared(Section):
    """A section with a field written the plain dataclass way."""

    plain: int = 3


@dataclass(frozen=True, slots=True)
class _OutOfBounds(Section):
    """A default outside its own bounds."""

    size: int = setting(10, low=20, high=30, help="too small a default")


@dataclass(frozen=True, slots=True)
class _IntForFloat(Section):
    """An int default on a float field: a clamped value would change type."""

    share: float = setting(1, low=0.0, high=2.0, help="share")


@dataclass(frozen=True, slots=True)
class _BadChoice(Section):
    """A default that is not one of its choices."""

    language: str = setting("fr", choices=("zh", "en"), help="语言")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (_Undeclared, "_Undeclared.plain: declare it with setting(...)"),
        (_OutOfBounds, "demo.size: the default 10 is below its bound"),
        (_IntForFloat, "demo.share: the default 1 of a float field must be a float"),
        (_BadChoice, "demo.language: the default 'fr' is not one of its choices"),
    ],
)
def test_a_faulty_declaration_is_refused_with_its_name(section: Any, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        declared("demo", section)
    assert str(raised.value) == message


def test_the_typed_section_keeps_the_declaration_order() -> None:
    """Warnings come out in declaration order, which is the order the page lists."""
    config = load_config({"retrieval": {"limit": "many", "minScore": "high"}, "hooks": []})
    assert [w.split(":")[0] for w in config.warnings] == [
        "retrieval.minScore",
        "retrieval.limit",
        "hooks",
    ]
