"""Task-state patches from explicit user statements: goal, progress, blockers, open items."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from lcm_core.store.models import TaskState
from lcm_core.text.languages.en import STOP_WORDS
from lcm_core.text.lazy_regex import Regex, lazy_compile
from lcm_core.text.speakers import speaker_of
from lcm_core.text.tokens import tokenize

MAX_LIST: Final = 20  # newest entries kept per list; the raw events keep everything
_TRAIL: Final = " \t.。!！;；,，:："

_GOAL: Final = (
    lazy_compile(
        r"^(?:the |our |my )?(?:main |overall |end |ultimate )?(?:goal|objective|aim|mission)"
        r"(?: for [\w ]{1,30}?)?(?:\s+(?:is|will be)\b|\s*:)\s*(?:to\s+)?(?P<v>.+)",
        re.I,
    ),
    lazy_compile(
        r"^(?:这次的?|我们的?|本次的?|当前的?|现在的?|今天的?|这周的?)?(?:目标|目的|任务)"
        r"(?:是|为|：|:|改成|改为|变成|换成)\s*(?P<v>.+)"
    ),
)
_PROGRESS: Final = (
    lazy_compile(
        r"^(?:(?:i'm|i am|we're|we are)\s+)?(?:done|finished|through) with (?P<v>.+)"
        r"|^(?:(?:i|we)(?:'ve| have)?\s+)?(?:just |already )?(?:finished|completed|shipped|"
        r"merged|wrapped up) (?P<w>.+)"
        r"|^(?P<done_subject>.+?) (?:is|are) (?:now )?"
        r"(?:done|finished|complete|completed|merged|shipped)\b",
        re.I,
    ),
    lazy_compile(
        r"^(?:已完成[:：]\s*(?P<v>.+)|(?P<w>.+?)(?:已经|都)?(?:写完了|做完了|完成了|搞定了|弄好了|"
        r"改完了|修好了|上线了|合并了|已完成))"
    ),
)
_BLOCKER: Final = (
    lazy_compile(
        r"\b(?:blocked (?:on|by)|stuck (?:on|with)|waiting (?:on|for)|"
        r"can't (?:proceed|continue|move forward) until|blockers? (?:is|are|:))\s*(?P<v>.+)",
        re.I,
    ),
    lazy_compile(r"(?:卡在|阻塞在)(?P<v>.+?)(?:上了?)?$|被(?P<w>.+?)(?:卡住|阻塞|挡住)了?$"),
)
_OPEN_ITEM: Final = (
    lazy_compile(
        r"^(?:todo|to-do|to do|action item|next steps?)\s*[:：\-]\s*(?P<v>.+)"
        r"|^(?:(?:we|i)\s+)?still (?:need|have) to (?!decide|figure out|choose|pick)(?P<w>.+)"
        r"|^(?:remaining|left to do)\s*[:：]\s*(?P<x>.+)",
        re.I,
    ),
    lazy_compile(
        r"^(?:待办|待做)\s*[:：]\s*(?P<v>.+)|^(?:还需要|还得|接下来要|下一步要?)(?P<w>.+)"
    ),
)


# Every pattern above needs one of these words; most sentences have none, so check first.
_TRIGGER: Final = lazy_compile(
    r"goal|objective|aim|mission|done|finished|through|completed|complete|shipped|merged|"
    r"wrapped|blocked|stuck|waiting|blocker|can't|todo|to-do|to do|action item|next step|"
    r"still|remaining|left to do|目标|目的|任务|完成|完了|搞定|弄好|修好|上线|合并|卡在|阻塞|"
    r"卡住|挡住|待办|待做|还需要|还得|接下来|下一步",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TaskPatch:
    """What one user sentence changes in the task state."""

    goal: str | None = None
    progress: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.goal or self.progress or self.blockers or self.open_items)

    def merged(self, other: TaskPatch) -> TaskPatch:
        return TaskPatch(
            goal=other.goal or self.goal,
            progress=(*self.progress, *other.progress),
            blockers=(*self.blockers, *other.blockers),
            open_items=(*self.open_items, *other.open_items),
        )


# A label in front of a status line ("Progress: X is done") is not part of the value.
_STATUS_LABELS: Final = ("progress", "update", "status", "进展", "进度", "更新")
_LABEL: Final = lazy_compile(rf"^(?:{'|'.join(_STATUS_LABELS)})\s*[:：]\s*", re.I)
# Heads of a status or note line, not a speaker's name: "Progress: the exporter is done".
LABEL_HEADS: Final = frozenset(_STATUS_LABELS) | frozenset(
    {
        "todo", "to-do", "to do", "action item",
        "next step", "next steps", "remaining", "left to do", "note", "notes", "blocker",
        "blockers", "goal", "objective", "aim", "mission", "context", "background",
        "summary", "reminder", "fyi", "ps", "edit", "warning", "error", "question",
        "answer", "decision", "idea", "problem", "issue", "result", "results", "plan",
        "step", "steps", "tldr", "done", "finished", "also", "btw", "ok", "okay",
        "待办", "待做", "已完成", "目标", "目的", "任务", "注意",
        "背景", "总结", "提醒", "问题", "结论", "备注", "说明", "计划", "结果",
    }
)  # fmt: skip
# A speaker's name is one or two words ("Emi", "Fahim Khan"); a longer head is a sentence
# with a colon in it ("We're starting ledger-sync: a nightly job …").
_SPEAKER_WORDS: Final = 2


def speaks_for_the_task(text: str) -> bool:
    """False for a line of a transcript ("Emi: I finished the cake"): a speaker's life is
    not the task the user works on with the agent. A label ("Progress:", "Note:") or a
    sentence before the colon heads no transcript line."""
    head = speaker_of(text)
    if head is None:
        return True
    words = head.casefold().split()
    return (
        len(words) > _SPEAKER_WORDS
        or head.casefold() in LABEL_HEADS
        or any(word in STOP_WORDS for word in words)
    )


# An indirect question states no progress: "I wonder how Italian food is done".
_INDIRECT: Final = lazy_compile(r"\b(?:how|what|why|whether|if|when|where)\b", re.I)


def task_patch(sentence: str) -> TaskPatch | None:
    """The task-state change a sentence states explicitly, or None."""
    text = _LABEL.sub("", sentence.strip(_TRAIL))
    if not _TRIGGER.search(text):
        return None
    for field, patterns in (
        ("goal", _GOAL),
        ("open_items", _OPEN_ITEM),
        ("blockers", _BLOCKER),
        ("progress", _PROGRESS),
    ):
        value = _first_value(patterns, text)
        if value:
            if field == "goal":
                return TaskPatch(goal=value)
            if field == "open_items":
                return TaskPatch(open_items=(value,))
            if field == "blockers":
                return TaskPatch(blockers=(value,))
            return TaskPatch(progress=(value,))
    return None


def _first_value(patterns: tuple[Regex, ...], text: str) -> str | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            named, value = next(((k, v) for k, v in match.groupdict().items() if v), ("", ""))
            if named == "done_subject" and _INDIRECT.search(value):
                continue  # "how X is done" says how it is made, not that it is finished
            value = value.strip(_TRAIL)
            if value:
                return value
    return None


def apply_patch(state: TaskState, patch: TaskPatch, seq: int) -> TaskState:
    """The state after `patch`: a new goal retires the old one; finished work leaves open items."""
    goal, superseded = state.goal, state.superseded
    if patch.goal and patch.goal != state.goal:
        if state.goal:
            superseded = _capped((*superseded, state.goal))
        goal = patch.goal
    done = patch.progress
    open_items = tuple(i for i in state.open_items if not any(_same_work(i, d) for d in done))
    blockers = tuple(b for b in state.blockers if not any(_same_work(b, d) for d in done))
    return replace(
        state,
        goal=goal,
        superseded=superseded,
        progress=_capped(_added(state.progress, done)),
        blockers=_capped(_added(blockers, patch.blockers)),
        open_items=_capped(_added(open_items, patch.open_items)),
        updated_by_seq=seq,
        updated_at="",
    )


def _added(existing: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*existing, *new)))


def _capped(values: tuple[str, ...]) -> tuple[str, ...]:
    return values[-MAX_LIST:]


def _same_work(entry: str, done: str) -> bool:
    """Finished work closes an entry when most of the entry's words are in it."""
    entry_terms = set(tokenize(entry))
    if not entry_terms:
        return False
    shared = entry_terms & set(tokenize(done))
    return len(shared) * 2 > len(entry_terms)
