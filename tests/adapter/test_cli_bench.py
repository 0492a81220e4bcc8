"""`lcm bench retrieval` on a small conversation-QA file (DESIGN.md section 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

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
                {"id": "q1", "question": "What does the user drink?", "evidence": ["t0"]}
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
