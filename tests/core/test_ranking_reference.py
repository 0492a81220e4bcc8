"""Each ranking signal is declared once, and docs/ranking.md is what the code gives.

`lcm_core.retrieval.signals` names every signal with its stage, setting and ablation;
the formula is `scoring`'s docstring. The page, `--ablate list` and the bench's check of
ablation names all come from that one list.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_core.bench.retrieval import ablation_config
from lcm_core.config import load_config
from lcm_core.config.declare import declared
from lcm_core.config.sections import RetrievalSettings
from lcm_core.retrieval import reference as ref
from lcm_core.retrieval import scoring
from lcm_core.retrieval.retriever import RETRIEVERS
from lcm_core.retrieval.signals import ABLATIONS, SIGNALS, STAGES, Signal, ablated, strength

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ranking.md"


def test_the_ranking_page_is_what_the_code_gives() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert ref.refreshed(text) == text, f"docs/ranking.md is stale; run: {ref.COMMAND}"


def test_every_signal_names_a_real_setting_and_stage_once() -> None:
    names = [signal.name for signal in SIGNALS]
    assert len(names) == len(set(names))
    settings = {field.name for field in fields(RetrievalSettings)}
    for signal in SIGNALS:
        assert signal.stage in STAGES, signal.name
        assert not signal.setting or signal.setting in settings, signal.name
    assert set(ABLATIONS) == set(names)


def test_strength_is_the_setting_until_the_signal_is_switched_off() -> None:
    config = load_config({"retrieval": {"speakerWeight": 1.5}})
    assert strength(config.retrieval, "speaker") == 1.5
    off = ablation_config(config, ["speaker"])
    assert strength(off.retrieval, "speaker") == 0.0
    assert ablated(off.retrieval, "speaker") and not ablated(off.retrieval, "day")
    with pytest.raises(KeyError):
        ablated(config.retrieval, "speakers")  # a typo in the code is caught, not ignored


def test_the_bench_refuses_a_name_no_signal_has() -> None:
    with pytest.raises(ValueError, match="answer-kind"):
        ablation_config(load_config(), ["answer-kinds"])


def test_ablate_list_prints_every_signal(tmp_path: Path) -> None:
    from lcm_adapter.cli.main import cli

    dataset = tmp_path / "empty.jsonl"
    dataset.write_text("", encoding="utf-8")
    args = ["bench", "retrieval", "--dataset", str(dataset), "--ablate", "list", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    for signal in SIGNALS:
        assert signal.name in result.output


def test_check_fails_when_a_signal_is_added_without_rewriting_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "ranking.md"
    page.write_text(PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    assert ref.main(["--check", "--page", str(page)]) == 0
    added = Signal("时间", "lift", "turns", "day_weight", "一个新的信号", "switched off")
    monkeypatch.setattr(ref, "SIGNALS", (*SIGNALS, added))
    assert ref.main(["--check", "--page", str(page)]) == 1
    assert ref.COMMAND in capsys.readouterr().err
    assert ref.main(["--write", "--page", str(page)]) == 0
    assert "一个新的信号" in page.read_text(encoding="utf-8")
    assert ref.main(["--check", "--page", str(page)]) == 0


def test_the_formula_names_constants_the_page_shows() -> None:
    """Every upper-case name the formula uses is a constant the page lists with its value,
    and its figures in words are the defaults: a changed constant cannot hide in prose."""
    import re

    doc = scoring.__doc__ or ""
    shown = {name for _, names in ref.CONSTANTS for name in names}
    named = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", doc))
    assert named and named <= shown
    defaults = {e.attribute: e.default for e in declared("retrieval", RetrievalSettings)}
    said = (
        f"at most {defaults['prior_share']:.0%}, recency by {defaults['recency_boost']:.0%}, "
        f"a\nsupersession link takes {scoring.SUPERSESSION_PENALTY:.0%} and a redundant "
        f"item {defaults['redundancy_penalty']:.0%}"
    )
    assert said in doc


def test_every_retriever_choice_is_a_retriever() -> None:
    (entry,) = [e for e in declared("retrieval", RetrievalSettings) if e.attribute == "retriever"]
    assert set(RETRIEVERS) == set(entry.limit.choices or ())


def test_switching_off_a_share_that_lowers_an_offer_keeps_the_offer_whole() -> None:
    off = ablation_config(load_config(), ["speaker-neighbours"])
    assert strength(off.retrieval, "speaker-neighbours") == 1.0
    with pytest.raises(ValueError, match="no setting"):
        strength(off.retrieval, "supersession")
