"""A lean block: it stops where relevance runs out, quotes a few turns of one shape and
names the rest, and says each thing once."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.repeats import SIMILAR_QUOTED
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.retrieval.scoring import floor_ratio
from lcm_core.text.tokens import estimate_tokens

S = "sess"
EN_BLOCK = load_config({"assembly": {"language": "en"}})


def ask(text: str) -> list[StepMessage]:
    return [StepMessage("user", text, "user")]


def quoted(text: str) -> list[str]:
    """The `[ev seq:N]` refs the block quotes, in order."""
    return [line.split("]", 1)[0][6:] for line in text.splitlines() if line.startswith("- [ev ")]


@pytest.mark.parametrize(
    ("line", "question"),
    [
        ("I refactored src/module_{n}.py and added tests for it", "Let's look at src/module_45.py"),
        ("我重构了 src/module_{n}.py，还补了测试", "接下来看一下 src/module_45.py 这个文件"),
    ],
)
def test_a_navigation_step_over_fifty_similar_turns_quotes_at_most_five(
    script: Any, line: str, question: str
) -> None:
    """Fifty turns that differ only in a number: the exact one first and at most a few
    more; with no relevance floor at all, the best five of the shape are quoted and one
    line says how many more there are and names them."""
    for n in range(1, 51):
        script.user(n, line.format(n=n), turn=n)
    result = assemble(script.store, S, ask(question), EN_BLOCK, turn=51)
    refs = quoted(result.text)
    assert 1 <= len(refs) <= SIMILAR_QUOTED and refs[0] == "seq:45"
    floors = {"minScore": 0.0, "relativeMinScore": 0.0}
    loose = load_config({"assembly": {"language": "en"}, "retrieval": floors})
    result = assemble(script.store, S, ask(question), loose, turn=51)
    refs = quoted(result.text)
    assert len(refs) == SIMILAR_QUOTED and refs[0] == "seq:45"
    summary = [ln for ln in result.text.splitlines() if "more turns like [ev seq:45]" in ln]
    assert len(summary) == 1 and summary[0].startswith(f"- {50 - SIMILAR_QUOTED} more turns like")
    left = {o.ref for o in result.omitted if "turns like seq:45" in o.reason}
    assert len(left) == 50 - SIMILAR_QUOTED and not left & set(refs)


def test_turns_of_different_shapes_are_not_collapsed(script: Any) -> None:
    """Only turns that differ in their numbers alone are one shape: different words stay."""
    for n in range(1, 9):
        script.user(n, f"the deploy script {n} needs a review by someone new", turn=n)
    script.user(20, "the deploy script must never run on Fridays", turn=20)
    result = assemble(script.store, S, ask("what about the deploy script?"), EN_BLOCK, turn=21)
    assert "seq:20" in quoted(result.text)
    assert len([r for r in quoted(result.text) if r != "seq:20"]) <= SIMILAR_QUOTED


@pytest.mark.parametrize(
    ("strong", "weak", "question"),
    [
        (
            "the invoice exporter writes Parquet files to the finance bucket",
            "I had coffee with the team at the office",
            "where does the invoice exporter write its Parquet files?",
        ),
        (
            "发票导出程序把 Parquet 文件写到财务的存储桶",
            "今天和团队在办公室喝了咖啡，文件很多",
            "发票导出程序把 Parquet 文件写到哪里？",
        ),
    ],
)
def test_the_block_stops_where_relevance_runs_out(
    script: Any, strong: str, weak: str, question: str
) -> None:
    """A turn that matches the question only by a common word scores far below the best:
    under `retrieval.relativeMinScore` (0.3 here, a leaner block than the default 0.1) it
    is left out with that reason, not packed because the budget has room; a lower ratio
    lets it in."""
    script.user(1, strong, turn=1)
    for n in range(2, 8):
        script.user(n, f"{weak} #{n}", turn=n)
    lean = load_config({"assembly": {"language": "en"}, "retrieval": {"relativeMinScore": 0.3}})
    result = assemble(script.store, S, ask(question), lean, turn=8)
    assert quoted(result.text)[0] == "seq:1"
    cut = [o for o in result.omitted if "retrieval.relativeMinScore" in o.reason]
    assert cut and all(o.ref not in quoted(result.text) for o in cut)
    assert result.used_tokens < 0.2 * result.budget_tokens
    loose = load_config({"assembly": {"language": "en"}, "retrieval": {"relativeMinScore": 0.0}})
    everything = assemble(script.store, S, ask(question), loose, turn=8)
    assert len(quoted(everything.text)) > len(quoted(result.text))


def test_a_quoted_turn_is_one_line_and_a_tool_result_says_what_it_is(script: Any) -> None:
    """A user's turn needs no type label: `- [ev seq:N] “words”` under its day's heading;
    any other quotable type names itself, so the model can tell a tool's words from the
    user's."""
    script.user(1, "the staging port is 5433", turn=1, time="2026-11-30T09:00:00Z")
    script.tool(2, "psql: connected to staging on port 5433", turn=1)
    config = load_config({"assembly": {"language": "en", "evidenceTypes": ["*"]}})
    result = assemble(script.store, S, ask("which port does staging use?"), config, turn=2)
    lines = result.text.splitlines()
    assert "- [ev seq:1] “the staging port is 5433”" in lines
    assert lines[lines.index("- [ev seq:1] “the staging port is 5433”") - 1] == "### 2026-11-30"
    tool = [ln for ln in lines if ln.startswith("- [ev seq:2] ")]
    assert len(tool) == 1 and tool[0].startswith("- [ev seq:2] tool result")


def test_a_smaller_budget_asks_more_relevance_of_each_entry() -> None:
    """`relativeMinScore` is the ratio at 3000 tokens; a smaller block raises it in
    proportion, up to 0.3, and a larger one never lowers it."""
    config = load_config()
    ratio = config.retrieval.relative_min_score
    assert (
        floor_ratio(config.retrieval, 3000)
        == floor_ratio(config.retrieval, 12_000)
        == floor_ratio(config.retrieval)
        == ratio
    )
    assert floor_ratio(config.retrieval, 300) == 0.3
    loose = load_config({"retrieval": {"relativeMinScore": 0.1}})
    assert floor_ratio(loose.retrieval, 1500) == pytest.approx(0.2)
    assert floor_ratio(loose.retrieval, 300) == 0.3
    strict = load_config({"retrieval": {"relativeMinScore": 0.6}})
    assert floor_ratio(strict.retrieval, 600) == 0.6


@pytest.mark.parametrize(
    ("strong", "weak", "question"),
    [
        (
            "the invoice exporter writes Parquet files to the finance bucket",
            "the exporter was slow again this morning",
            "where does the invoice exporter write its Parquet files?",
        ),
        (
            "发票导出程序把 Parquet 文件写到财务的存储桶",
            "今天早上的程序又很慢",
            "发票导出程序把 Parquet 文件写到哪里？",
        ),
    ],
)
def test_a_small_block_keeps_the_clear_match_and_drops_the_weak_ones(
    script: Any, strong: str, weak: str, question: str
) -> None:
    """With a loose floor at 3 000 tokens a weaker match still comes in; at 600 tokens (a
    host with a small context) the floor rises and only the clear match does, the others
    left out with the floor's reason."""
    script.user(1, strong, turn=1)
    for n in range(2, 6):
        script.user(n, f"{weak} #{n}", turn=n)
    # A loose floor at 3 000 tokens (the default's is 0.25) lets the weak matches in.
    loose = {"retrieval": {"relativeMinScore": 0.1}}
    small = load_config({**loose, "assembly": {"language": "en", "softBudgetTokens": 600}})
    large_config = load_config({**loose, "assembly": {"language": "en"}})
    large = assemble(script.store, S, ask(question), large_config, turn=6)
    tight = assemble(script.store, S, ask(question), small, turn=6)
    assert quoted(tight.text)[0] == quoted(large.text)[0] == "seq:1"
    assert len(quoted(tight.text)) < len(quoted(large.text))
    assert any("raised for a budget under 3000" in o.reason for o in tight.omitted)


@pytest.mark.parametrize(
    ("said", "question"),
    [
        ("the {w} deploy to staging used port 54{n}", "which port did the staging deploy use?"),
        ("{w}部署到预发环境用了端口54{n}", "部署到预发环境用了哪个端口？"),
    ],
)
def test_the_turns_of_one_day_say_their_date_once(script: Any, said: str, question: str) -> None:
    """Quoted turns stand under the day they were said, oldest first, the date once per
    day; the heading is paid for, so a tight budget still holds."""
    days = ["2026-11-29", "2026-11-30"]
    for seq in range(1, 9):
        time = f"{days[seq % 2]}T0{seq}:00:00Z"
        word = ["red", "blue", "green", "gold", "grey", "pink", "teal", "jade"][seq - 1]
        script.user(seq, said.format(w=word, n=10 + seq), turn=seq, time=time)
    config = load_config({"assembly": {"language": "en"}})
    result = assemble(script.store, S, ask(question), config, turn=9)
    lines = result.text.splitlines()
    assert [line for line in lines if line.startswith("### ")] == [f"### {d}" for d in days]
    entries = [line for line in lines if line.startswith("- [ev seq:")]
    seqs = [int(line.split("seq:")[1].split("]")[0]) for line in entries]
    assert len(seqs) == 8 and seqs == sorted(seqs, key=lambda s: (days[s % 2], s))
    assert not any(day in line for line in entries for day in days)
    for budget in range(150, 400, 7):
        assembly = {"language": "en", "softBudgetTokens": budget, "minBudgetTokens": 50}
        block = assemble(
            script.store, S, ask(question), load_config({"assembly": assembly}), turn=9
        )
        assert block.budget_tokens == budget and block.used_tokens <= budget
        assert estimate_tokens(block.text) <= block.used_tokens
