"""benchmarks/convert_realtalk.py on a tiny chat written here in the REALTALK file shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def turn(dia: str, who: str, text: str, stamp: str, **extra: Any) -> dict[str, Any]:
    return {
        "clean_text": text,
        "speaker": who,
        "date_time": stamp,
        "img_file": [],
        "dia_id": dia,
        **extra,
    }


CHAT: dict[str, Any] = {
    "name": {"speaker_1": "Ana", "speaker_2": "Bo"},
    "session_1": [
        turn("D1:1", "Ana", "Hi Bo!", "02.01.2024, 10:00:00"),
        turn(
            "D1:2",
            "Bo",
            "I baked bread",
            "02.01.2024, 10:01:00",
            img_file=["x.jpg"],
            blip_caption="a loaf of bread on a table",
        ),
        turn("D1:3", "Ana", "我下周去上海出差", "02.01.2024, 10:02:00"),
    ],
    "session_1_date_time": "02.01.2024, 10:00:00",
    "session_2": [turn("D2:1", "Bo", "Back from the trip", "05.01.2024, 09:00:00")],
    "session_2_date_time": "05.01.2024, 09:00:00",
    "events_session_1": {"agent_a": [], "agent_b": []},
    "qa": [
        {"question": "What did Bo bake?", "evidence": ["D1:2"], "category": 1},
        {"question": "Where is Ana going?", "evidence": ["D1:3; D2:1", "D9:9"], "category": 2},
        {"question": "Range?", "evidence": ["D1:1-D1:3."], "category": 3},
        {"question": "Lost?", "evidence": ["D7:1", ""], "category": 1},
    ],
}


@pytest.fixture
def converter(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("convert_realtalk")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "REALTALK" / "data"
    folder.mkdir(parents=True)
    (folder / "Chat_1_Ana_Bo.json").write_text(json.dumps(CHAT, ensure_ascii=False), "utf-8")
    (folder / "notes.json").write_text("{}", "utf-8")  # not a chat: never read
    return folder


def test_converts_both_speakers_to_named_user_turns_with_dates(
    data_dir: Path, tmp_path: Path, converter: ModuleType
) -> None:
    """Names at the start of each turn, the session's ISO date, a photo's caption kept."""
    out = tmp_path / "out.jsonl"
    assert converter.main([str(data_dir), str(out)]) == 0
    (record,) = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    turns = record["turns"]
    assert [t["speaker"] for t in turns] == ["user"] * 4
    assert turns[0]["text"] == "Ana: Hi Bo!" and turns[0]["name"] == "Ana"
    assert turns[1]["text"] == "Bo: I baked bread [photo: a loaf of bread on a table]"
    assert turns[2]["text"] == "Ana: 我下周去上海出差"
    assert [t["time"] for t in turns] == ["2024-01-02"] * 3 + ["2024-01-05"]


def test_evidence_lists_ranges_and_unresolved_questions(
    data_dir: Path, tmp_path: Path, converter: ModuleType
) -> None:
    """Lists and ranges are split, unknown ids dropped, a question with none left is counted."""
    out = tmp_path / "out.jsonl"
    module = converter
    record, left_out = module.convert_chat(data_dir / "Chat_1_Ana_Bo.json")
    evidence = {q["question"]: q["evidence"] for q in record["questions"]}
    assert evidence == {
        "What did Bo bake?": ["D1:2"],
        "Where is Ana going?": ["D1:3", "D2:1"],
        "Range?": ["D1:1", "D1:2", "D1:3"],
    }
    assert left_out == 1
    assert module.main([str(data_dir), str(out)]) == 0


@pytest.mark.parametrize("where", ["locomo", "elsewhere"])
def test_refuses_any_folder_but_the_top_level_data(
    tmp_path: Path, where: str, converter: ModuleType
) -> None:
    """The held-out copy under data/locomo/ (or any other folder) is never read."""
    folder = tmp_path / "data" / "locomo" if where == "locomo" else tmp_path / "elsewhere"
    folder.mkdir(parents=True)
    (folder / "Chat_1_Ana_Bo.json").write_text(json.dumps(CHAT), "utf-8")
    module = converter
    with pytest.raises(module.ConvertError):
        module.chat_files(folder)
    assert module.main([str(folder), str(tmp_path / "o.jsonl")]) == 1
    assert not (tmp_path / "o.jsonl").exists()
