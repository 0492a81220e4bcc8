"""Reading a conversation-QA dataset (DESIGN.md section 9) as people and converters write it.

One JSON object per line: a conversation's turns and its questions with their evidence
turn ids. A turn's `speaker` is a role ("user", "assistant"; "human", "ai" and the like
are read as those) or, as a converter of a chat between people may write it, a person's
name. In a chat between people every person's turn becomes a user message headed by the
name (`headed`). Evidence ids that name no turn are dropped, a string listing several
ids gives each, and a question left with none is counted, not scored (`left_out`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from lcm_core.text.speakers import speaker_of, writes_names


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    speaker: str
    text: str
    time: str | None = None
    name: str | None = None


# Speaker values that name a role: the user's side, and the model's (system included).
USER_ROLES: Final = frozenset({"user", "human", "用户"})
ASSISTANT_ROLES: Final = frozenset({"assistant", "system", "ai", "bot", "model", "助手", "系统"})
# Names that stand for a role, not a person: such a conversation is a user's session.
ROLE_NAMES: Final = USER_ROLES | ASSISTANT_ROLES


def spoken(speaker: str, name: str | None) -> tuple[str, str | None]:
    """(role, name) of a turn's `speaker` value: a role as the format has it, or, as a
    converter of a chat between people may write it ("speaker": "Caroline"), a person:
    a user turn by that name. Without this every such turn was an assistant message."""
    value = speaker.strip()
    if value.casefold() in USER_ROLES:
        return "user", name
    if value.casefold() in ASSISTANT_ROLES:
        return "assistant", name
    return "user", name or value or None


def headed(turns: Sequence[Turn]) -> tuple[Turn, ...]:
    """The turns of a chat between people as a chat log shows them.

    When two or more named people speak (the `name` field, or the "Name:" head of the
    text when the turns read as a chat log) and none is named for a role, every named
    turn is a user message, whichever side a converter put it on: a person's words are
    what someone said, not an assistant's proposals. Its text begins with the name
    (`Name: text`) unless it already does, so who said what stays searchable. A session
    between a user and an assistant is left as it is: the role tells who spoke, and a
    host never writes the user's name before each message.
    """
    chat_log = writes_names(turn.text for turn in turns)
    names = [turn.name or (speaker_of(turn.text) if chat_log else None) for turn in turns]
    people = {name for name in names if name}
    if len(people) < 2 or any(name.casefold() in ROLE_NAMES for name in people):
        return tuple(turns)
    return tuple(
        turn if name is None else _said_by(turn, name)
        for turn, name in zip(turns, names, strict=True)
    )


def _said_by(turn: Turn, name: str) -> Turn:
    """A person's turn: a user message headed by the person's name."""
    text = turn.text
    if not text.lstrip().casefold().startswith(name.casefold()):
        text = f"{name}: {text}"
    return replace(turn, speaker="user", text=text)


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    evidence: tuple[str, ...]
    category: str = "uncategorised"


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    # Questions of the line whose evidence names no turn: no ranker can find it.
    left_out: int = 0


# Between evidence ids that one string lists ("D8:6; D9:17").
_ID_SEPARATORS: Final = re.compile(r"[;,\s]+")


def resolved(evidence: Sequence[object], ids: Collection[str]) -> tuple[str, ...]:
    """The evidence ids that name a turn, in order; a string that lists several ids
    ("D8:6; D9:17") gives each. An id naming no turn could never be retrieved."""
    found: list[str] = []
    for value in evidence:
        text = str(value).strip()
        parts = [text] if text in ids else _ID_SEPARATORS.split(text)
        found.extend(part for part in parts if part in ids and part not in found)
    return tuple(found)


def parse_line(line: str, number: int = 0) -> Conversation:
    """One dataset line; a malformed line raises ValueError naming the line and the field."""
    where = f"line {number}" if number else "conversation"
    try:
        raw = json.loads(line)
        turns = headed([_turn(t) for t in raw["turns"]])
        ids = {turn.id for turn in turns}
        asked = [
            Question(
                str(q["id"]),
                str(q["question"]),
                resolved(q["evidence"], ids),
                str(q.get("category") or "uncategorised"),
            )
            for q in raw["questions"]
        ]
        questions = tuple(q for q in asked if q.evidence)
        return Conversation(str(raw["id"]), turns, questions, len(asked) - len(questions))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{where}: not a conversation-QA record ({exc!r})") from exc


def _turn(raw: dict[str, Any]) -> Turn:
    """One turn of a dataset line (`parse_line` says which line a bad one is on)."""
    name = str(raw["name"]).strip() or None if raw.get("name") else None
    role, name = spoken(str(raw["speaker"]), name)
    time = str(raw["time"]) if raw.get("time") else None
    return Turn(str(raw["id"]), role, str(raw.get("text") or ""), time, name)


def assistant_evidence(conversations: Sequence[Conversation]) -> tuple[int, int]:
    """(evidence turns that are assistant messages, all evidence turns), counted once each.

    Assistant messages are not quoted by default (`assembly.evidenceTypes`): a dataset
    whose two people were written as "user" and "assistant" without names hides half its
    evidence, and the person measuring should hear of it.
    """
    on_assistant = total = 0
    for conv in conversations:
        speakers = {turn.id: turn.speaker for turn in conv.turns}
        wanted = {turn_id for q in conv.questions for turn_id in q.evidence}
        total += len(wanted)
        on_assistant += sum(1 for turn_id in wanted if speakers[turn_id] == "assistant")
    return on_assistant, total


def load_dataset(path: Path) -> list[Conversation]:
    """Read a JSONL dataset; blank lines are skipped."""
    text = path.read_text(encoding="utf-8")
    return [parse_line(line, n) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
