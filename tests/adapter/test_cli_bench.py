"""`lcm bench retrieval` on a small conversation-QA file (DESIGN.md section 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.main import cli


def dataset(path: Path) -> Path:
    conversations = [
        {
            "id": "c1",
            "turns": [
                {
                    "id": "t0",
                    "speaker": "user",
                    "text": "We drove to Lisbon last weekend; the kids loved the tram.",
                },
                {"id": "t1", "speaker": "assistant", "text": "That sounds lovely."},
                {
                    "id": "t2",
                    "speaker": "user",
                    "text": "Keep the API port at 8080 when running locally.",
                },
                {"id": "t3", "speaker": "user", "text": "预算不超过3000元（含税）。"},
            ],
            "questions": [
                {
                    "id": "q1",
                    "question": "Which port does the local API use?",
                    "evidence": ["t2"],
                    "category": "fact",
                },
                {"id": "q2", "question": "预算是多少？", "evidence": ["t3"], "category": "fact"},
            ],
        },
        {
            "id": "c2",
            "turns": [{"id": "t0", "speaker": "user", "text": "I prefer tea over coffee."}],
            "questions": [
                {"id": "q1", "question": "What does the user drink?", "evidence": ["t0"]},
                # Its evidence names no turn: no ranker could find it, so it is not scored.
                {"id": "q2", "question": "Where is the tram?", "evidence": ["t9"]},
            ],
        },
    ]
    path.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in conversations) + "\n")
    return path


def test_bench_retrieval_both_modes(tmp_path: Path) -> None:
    data_file = dataset(tmp_path / "qa.jsonl")
    result = CliRunner().invoke(cli, ["bench", "retrieval", "--dataset", str(data_file), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["conversations"] == 2 and data["turns"] == 5 and data["questions"] == 3
    assert data["questionsLeftOut"] == 1
    overall = data["report"]["overall"]
    assert {"recall@5", "recall@10", "recall@25", "blockRecall", "blockTokens"} <= set(overall)
    assert {"itemsRecall@10", "baseline@10"} <= set(overall) and overall["baseline@10"] > 0
    table = CliRunner().invoke(cli, ["bench", "retrieval", "--dataset", str(data_file)])
    assert table.exit_code == 0 and re.search(r"^\| overall +\|", table.stdout, re.M)


def test_bench_on_a_file_that_is_not_a_dataset(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\nnot json\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["bench", "retrieval", "--dataset", str(bad)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1


def test_bench_needs_a_dataset() -> None:
    assert CliRunner().invoke(cli, ["bench", "retrieval"]).exit_code == 2


CHAT = Path(__file__).parents[1] / "fixtures" / "bench" / "chat_small.jsonl"


def bench_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["bench", "retrieval", "--dataset", str(CHAT), "--quiet", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_misses_lists_each_question_whose_evidence_is_not_all_in_the_top_10(
    tmp_path: Path,
) -> None:
    """Every missed question, with its evidence turns and the top 10 and where each came from."""
    out = tmp_path / "misses.jsonl"
    data = bench_json("--misses", str(out))
    misses = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    conversations = [json.loads(line) for line in CHAT.read_text(encoding="utf-8").splitlines()]
    turns = {t["id"]: t["text"] for c in conversations for t in c["turns"]}
    assert data["misses"] == len(misses) > 0
    # Exactly the questions below full recall@10 are listed: the counts add up.
    overall = data["report"]["overall"]
    assert overall["recall@10"] < 1.0
    for miss in misses:
        assert miss["recall@10"] < 1.0
        assert any(not e["found"] for e in miss["evidence"])
        for evidence in miss["evidence"]:
            assert evidence["text"] == turns[evidence["turn"]]
        # Up to 10: candidates below the relevance floor (retrieval.relativeMinScore) are not ranked.
        assert 1 <= len(miss["top"]) <= 10
        scores = [entry["score"] for entry in miss["top"]]
        assert scores == sorted(scores, reverse=True)
        for entry in miss["top"]:
            assert entry["source"] in {"item", "raw turn"}
            assert entry["text"] and entry["turns"]
            if entry["source"] == "raw turn":
                assert entry["text"] == turns[entry["turns"][0]]
    per_question = 1.0 / overall["questions"]
    lost = sum(1.0 - m["recall@10"] for m in misses) * per_question
    assert abs((1.0 - overall["recall@10"]) - lost) < 1e-3


def test_ablating_raw_turns_leaves_only_what_items_reach() -> None:
    """With raw turns switched off, the merged ranking is the items' ranking."""
    full = bench_json()["report"]["overall"]
    ablated = bench_json("--ablate", "raw-turns")
    assert ablated["ablated"] == ["raw-turns"]
    overall = ablated["report"]["overall"]
    assert overall["recall@10"] == pytest.approx(full["itemsRecall@10"])
    assert overall["recall@10"] < full["recall@10"]


def test_ablating_items_leaves_raw_turns_only() -> None:
    """With items switched off, no item ranks: items-only recall is zero, raw turns remain."""
    overall = bench_json("--ablate", "items")["report"]["overall"]
    assert overall["itemsRecall@10"] == 0.0 and overall["recall@10"] > 0.0


def test_ablate_names_are_checked_and_listed() -> None:
    """An unknown feature is a usage error naming the known ones; `--ablate list` lists them."""
    bad = CliRunner().invoke(
        cli, ["bench", "retrieval", "--dataset", str(CHAT), "--ablate", "magic"]
    )
    assert bad.exit_code == 2 and "raw-turns" in bad.output
    listed = CliRunner().invoke(
        cli, ["bench", "retrieval", "--dataset", str(CHAT), "--ablate", "list", "--json"]
    )
    assert listed.exit_code == 0
    assert {"raw-turns", "items", "stemming"} <= set(json.loads(listed.stdout)["features"])


def test_both_frozen_references_run_beside_the_pipeline() -> None:
    """BM25 and SQLite FTS5 are scored on the same questions in the same run."""
    data = bench_json()
    overall = data["report"]["overall"]
    assert "fts5" in data["references"]
    assert 0.0 < overall["fts5@10"] <= 1.0 and 0.0 < overall["baseline@10"] <= 1.0


def test_evidence_on_assistant_turns_is_reported(tmp_path: Path) -> None:
    """Two people written as "user" and "assistant" without names: the bench says how much
    evidence sits in assistant messages, which the default evidenceTypes never quotes."""
    line = {
        "id": "pair",
        "turns": [
            {"id": "a", "speaker": "user", "text": "I adopted a cat called Miso"},
            {"id": "b", "speaker": "assistant", "text": "我也养了一只狗，叫豆豆"},
        ],
        "questions": [
            {"id": "q1", "question": "What is the cat called?", "evidence": ["a"]},
            {"id": "q2", "question": "狗叫什么？", "evidence": ["b"]},
        ],
    }
    path = tmp_path / "pair.jsonl"
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["bench", "retrieval", "--dataset", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["evidenceOnAssistant"] == 1
    assert "1 of 2 evidence turns are assistant messages" in result.stderr


def test_budget_runs_the_bench_at_another_budget_and_reports_what_a_token_buys() -> None:
    """`--budget N` assembles at N tokens without a config file; the report gives mean and
    p95 block tokens and recall per 1 000 tokens, overall and per category."""
    small, large = bench_json("--budget", "200"), bench_json("--budget", "3000")
    assert (small["budget"], large["budget"]) == (200, 3000)
    for data in (small, large):
        for row in data["report"].values():
            assert {"blockRecall", "blockTokens", "blockTokensP95", "recallPer1kTokens"} <= set(row)
    s, lg = small["report"]["overall"], large["report"]["overall"]
    assert s["blockTokensP95"] <= 200 < lg["blockTokensP95"]
    assert s["blockTokens"] <= s["blockTokensP95"]
    assert s["blockRecall"] <= lg["blockRecall"]
    assert s["recallPer1kTokens"] == pytest.approx(
        1000 * s["blockRecall"] / s["blockTokens"], rel=1e-3
    )
