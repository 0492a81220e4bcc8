"""Convert the public REALTALK chats into the conversation-QA format of `lcm bench retrieval`.

REALTALK (the `danny911kr/REALTALK` repository) holds ten two-person chats over about
21 days, each with questions whose evidence are turn ids. Only the top-level
`data/Chat_*.json` files are read: the repository's `data/locomo/` folder is a copy of a
held-out acceptance set, so this script refuses any other folder and any other file
name. The repository has no licence file: the output is for local measurement only and
is never committed.

    python benchmarks/convert_realtalk.py REALTALK/data realtalk.jsonl

Mapping (DESIGN.md section 9):
- both speakers become user turns; each turn's text starts with its speaker's name, as
  people write names in a chat log ("Emi: Hey! How are you?");
- a shared photo becomes its caption, after the turn's words ("[photo: ...]");
- every turn keeps its session's date as `time` (ISO `YYYY-MM-DD`);
- evidence strings are split on `;` `,` and spaces, trailing dots dropped, and a range
  `D3:4-D3:7` expanded; ids that name no turn are dropped, and a question left with no
  evidence at all is left out and counted (705 of the 728 questions keep evidence);
- the category is the dataset's own number, as text.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

FILE_PATTERN: Final = re.compile(r"Chat_\d+_[A-Za-z]+_[A-Za-z]+\.json")
_SESSION_KEY: Final = re.compile(r"session_(\d+)")
_RANGE: Final = re.compile(r"D(\d+):(\d+)\s*-\s*D(\d+):(\d+)")
_DATE: Final = re.compile(r"(\d{2})\.(\d{2})\.(\d{4})")


class ConvertError(Exception):
    """A path or file this converter must not, or cannot, read."""


def chat_files(data_dir: Path) -> list[Path]:
    """The `Chat_*.json` files directly inside a folder named `data`, and nothing else."""
    resolved = data_dir.resolve()
    if not resolved.is_dir():
        raise ConvertError(f"{data_dir}: not a folder")
    if resolved.name != "data" or "locomo" in {p.lower() for p in resolved.parts}:
        raise ConvertError(
            f"{data_dir}: give the REALTALK repository's top-level data/ folder "
            "(its locomo/ copy is a held-out set and is never read)"
        )
    files = sorted(
        (p for p in resolved.iterdir() if p.is_file() and FILE_PATTERN.fullmatch(p.name)),
        key=lambda p: int(p.name.split("_")[1]),
    )
    if not files:
        raise ConvertError(f"{data_dir}: no Chat_*.json files")
    return files


def iso_date(stamp: str) -> str:
    """`29.12.2023, 22:42:04` -> `2023-12-29`."""
    match = _DATE.match(stamp.strip())
    if match is None:
        raise ConvertError(f"unreadable date {stamp!r}")
    day, month, year = match.groups()
    return f"{year}-{month}-{day}"


def evidence_ids(raw: str) -> list[str]:
    """The turn ids one evidence string names (lists, ranges and stray dots allowed)."""
    ids: list[str] = []
    for part in re.split(r"[;,]|\s+(?=D)", raw):
        part = part.strip().rstrip(".").strip()
        if not part:
            continue
        span = _RANGE.fullmatch(part)
        if span is not None and span[1] == span[3]:
            ids.extend(f"D{span[1]}:{n}" for n in range(int(span[2]), int(span[4]) + 1))
        else:
            ids.append(part)
    return ids


def turn_text(turn: dict[str, Any]) -> str:
    """The speaker's name, the words, then a shared photo's caption."""
    text = f"{turn['speaker']}: {turn['clean_text'].strip()}"
    caption = (turn.get("blip_caption") or "").strip()
    if turn.get("img_file") and caption:
        text += f" [photo: {caption}]"
    return text


def convert_chat(path: Path) -> tuple[dict[str, Any], int]:
    """One chat as a conversation record, and how many questions were left out."""
    chat = json.loads(path.read_text(encoding="utf-8"))
    sessions = sorted(
        (int(m[1]), key)
        for key in chat
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(chat[key], list)
    )
    turns: list[dict[str, Any]] = []
    for number, key in sessions:
        date = iso_date(chat[f"session_{number}_date_time"])
        for turn in chat[key]:
            turns.append(
                {
                    "id": turn["dia_id"],
                    "speaker": "user",
                    "name": turn["speaker"],
                    "text": turn_text(turn),
                    "time": date,
                }
            )
    known = {t["id"] for t in turns}
    questions: list[dict[str, Any]] = []
    left_out = 0
    for index, qa in enumerate(chat.get("qa", [])):
        evidence = [e for raw in qa.get("evidence", []) for e in evidence_ids(str(raw))]
        evidence = list(dict.fromkeys(e for e in evidence if e in known))
        if not evidence:
            left_out += 1
            continue
        questions.append(
            {
                "id": f"{path.stem}:q{index}",
                "question": qa["question"],
                "evidence": evidence,
                "category": str(qa.get("category", "uncategorised")),
            }
        )
    return {"id": path.stem, "turns": turns, "questions": questions}, left_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="the REALTALK repository's data/ folder")
    parser.add_argument("out", type=Path, help="the JSONL file to write (never commit it)")
    args = parser.parse_args(argv)
    try:
        files = chat_files(args.data_dir)
        records = [convert_chat(path) for path in files]
    except (ConvertError, OSError, ValueError, KeyError) as exc:
        print(f"convert_realtalk: {exc}", file=sys.stderr)
        return 1
    with args.out.open("w", encoding="utf-8") as out:
        for record, _ in records:
            out.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    kept = sum(len(r["questions"]) for r, _ in records)
    dropped = sum(n for _, n in records)
    turns = sum(len(r["turns"]) for r, _ in records)
    print(
        f"{len(records)} conversations, {turns} turns, {kept} questions "
        f"({dropped} left out: no evidence id resolves to a turn) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
