"""A long turn is quoted by the sentences that answer the question, so more turns fit."""

from __future__ import annotations

from typing import Any

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.snippet import ELLIPSIS, sentence_spans, snippet
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.text.relevance import query_terms

S = "sess"
FILLER = (
    "We spent the morning sorting boxes in the garage. "
    "The weather was grey and nobody wanted to go outside. "
    "Later my cousin called about the wedding seating plan. "
)
ANSWER = "The kayak we bought last spring cost 640 euros at the harbour shop. "
LONG_TURN = FILLER + ANSWER + FILLER


def ask(text: str) -> list[StepMessage]:
    return [StepMessage("user", text, "user")]


def test_a_short_text_is_quoted_whole() -> None:
    text = "The kayak cost 640 euros."
    assert snippet(text, query_terms("kayak").weights, 160) == text


def test_a_long_turn_keeps_the_matching_sentence_and_marks_the_cuts() -> None:
    quoted = snippet(LONG_TURN, query_terms("How much did the kayak cost?").weights, 160)
    assert quoted == f"{ELLIPSIS} {ANSWER.strip()} {ELLIPSIS}"
    assert len(quoted) <= 160


def test_a_sentence_with_an_exact_term_comes_first() -> None:
    """A number the question names outweighs sentences that only share its words."""
    text = (
        "The harbour shop sells kayaks, paddles and kayak covers for the whole family. " * 3
        + "Ours was 640 euros in the end."
    )
    quoted = snippet(text, query_terms("kayak 640").weights, 100, exact=("640",))
    assert "Ours was 640 euros in the end." in quoted


def test_a_chinese_turn_keeps_the_sentence_that_answers() -> None:
    text = (
        "今天上午我们开了很长的会。大家讨论了下个季度的招聘计划。"
        "预算不超过3000元（含税）。"
        "下午还要去机场接客户，晚上可能要加班到很晚。" * 3
    )
    quoted = snippet(text, query_terms("预算是多少？").weights, 60)
    assert "预算不超过3000元（含税）。" in quoted
    assert quoted.startswith(ELLIPSIS) and quoted.endswith(ELLIPSIS)
    assert "招聘" not in quoted


def test_a_turn_no_sentence_of_which_matches_is_quoted_from_its_start() -> None:
    quoted = snippet(LONG_TURN, query_terms("zebra").weights, 80)
    assert quoted == LONG_TURN[:80].rstrip() + ELLIPSIS


def test_sentences_split_at_latin_and_cjk_marks_and_line_breaks() -> None:
    text = "One. Two! 三。四？\nfive"
    assert [text[a:b] for a, b in sentence_spans(text)] == ["One.", "Two!", "三。", "四？", "five"]


def test_the_block_quotes_the_answering_sentence_of_a_long_turn(script: Any) -> None:
    """The model gets the sentence that answers, with the turn's date, not the filler."""
    script.user(1, LONG_TURN, time="2026-03-02T09:15:00+08:00")
    script.user(2, "see you tomorrow then")
    result = assemble(script.store, S, ask("How much did the kayak cost?"))
    assert result.injected and "seq:1" in result.evidence_refs
    assert "### 2026-03-02\n- [ev seq:1] “… The kayak" in result.text
    assert ANSWER.strip() in result.text
    assert "wedding seating plan" not in result.text
    whole = load_config({"assembly": {"snippetChars": 0}})
    full = assemble(script.store, S, ask("How much did the kayak cost?"), whole)
    assert "wedding seating plan" in full.text and full.used_tokens > result.used_tokens


def test_a_chinese_block_quotes_the_answering_sentence(script: Any) -> None:
    text = "今天上午我们开了很长的会，大家讨论了下个季度的招聘计划。预算不超过3000元（含税）。" + (
        "下午还要去机场接客户，晚上可能要加班到很晚。" * 8
    )
    script.user(1, text, time="2026-03-02T09:15:00+08:00")
    result = assemble(script.store, S, ask("预算是多少？"))
    assert result.injected and "seq:1" in result.evidence_refs
    assert (
        "预算不超过3000元（含税）。" in result.text
        and "### 2026-03-02\n- [ev seq:1] “… 预算" in result.text
    )
    assert "去机场接客户" not in result.text
