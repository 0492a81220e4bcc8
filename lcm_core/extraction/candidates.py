"""From one message to candidate memories: pure rules over text, no store, no clock.

User input (source kind absent or a user kind) yields facts, decisions, constraints,
preferences and open questions, corrections, task-state patches and confirmations.
Assistant text yields proposals only. Generated sources (other plugins, this plugin's own
block, compaction summaries) yield nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.capture.events import is_generated, is_user_input
from lcm_core.extraction.chatter import is_chatter
from lcm_core.extraction.clauses import clauses, clean_content, scope_of, sentences
from lcm_core.extraction.correct import CorrectionCue, correction_cue, stops_using, strip_replaced
from lcm_core.extraction.rules import (
    Verdict,
    classify,
    is_confirmation,
    is_one_off_request,
    is_proposal,
    is_question,
)
from lcm_core.extraction.standing import RULE_SCOPE_KEY, RuleSubject, rule_subject
from lcm_core.extraction.subject import SubjectFact, overrides_choice, subject_fact
from lcm_core.extraction.task import TaskPatch, speaks_for_the_task, task_patch
from lcm_core.store.models import Event
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.numbers import Quantity, quantities_and_conditions

MIN_CLAUSE_CHARS: Final = 5
# A clause that only says what follows lasts: "From now on", "以后", "Update".
_LASTING_ONLY: Final = lazy_compile(
    r"(?:from now on|going forward|moving forward|from today(?: on)?|update|quick update|"
    r"change of plans|以后|今后|从今天起|从现在起|更新一下|改一下)[\s:：]*",
    re.IGNORECASE,
)
MAX_CANDIDATES: Final = 100  # per message; the raw event keeps everything
_DIGIT: Final = lazy_compile(r"[0-9０-９]")
# A clause whose object is only a pronoun restates agreement, not a memory.
_BARE_PRONOUN: Final = lazy_compile(
    r"^(?:(?:let's|let us|we'll|we will|please|ok|okay|yes|sure)\s+)*(?:do|go with|use|try|"
    r"keep)\s+(?:it|that|this|them|those)(?:\s+(?:then|first|now|instead))?$|"
    r"^(?:就)?(?:这么办|这样|这么做|按这个来)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory a message states, before it meets the store. `kind` None: take the target's."""

    kind: str | None
    content: str
    evidence_type: str
    conditions: tuple[str, ...] = ()
    scope: dict[str, Any] = field(default_factory=dict)
    quantities: tuple[Quantity, ...] = ()
    replaced: tuple[Quantity, ...] = ()
    correction: CorrectionCue | None = None
    strength: int = 0
    subject: str = ""  # the subject key of a plain statement of fact (`extraction_subject`)
    rule: RuleSubject | None = None  # what a standing rule governs (`extraction.standing`)


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything one message contributes: candidates, a task patch, whether it confirms."""

    candidates: tuple[Candidate, ...] = ()
    task: TaskPatch | None = None
    confirmation: bool = False

    @property
    def empty(self) -> bool:
        return not self.candidates and self.task is None and not self.confirmation


def extract_message(event: Event) -> Extraction:
    """The extraction of one stored event; anything but real user or assistant text gives none."""
    if event.type == "user/message" and is_user_input(event):
        return _from_user(event.text)
    if event.type == "assistant/message" and not is_generated(event):
        return _from_assistant(event.text)
    return Extraction()


def extract_text(text: str, role: str = "user", source_kind: str | None = "user") -> Extraction:
    """Convenience for tests and tools: extract from bare text as if it were a stored message."""
    event = Event(
        session_id="", seq=0, type=f"{role}/message", text=text, role=role, source_kind=source_kind
    )
    return extract_message(event)


def _from_user(text: str) -> Extraction:
    if is_confirmation(text):
        return Extraction(confirmation=True)
    found: list[Candidate] = []
    patch: TaskPatch | None = None
    for_task = speaks_for_the_task(text)
    for sentence in sentences(text):
        sentence_patch = task_patch(clean_content(sentence)) if for_task else None
        if sentence_patch is not None:
            patch = sentence_patch if patch is None else patch.merged(sentence_patch)
            continue
        if (is_question(sentence) or is_chatter(sentence)) and not _sets_rule(sentence):
            # "提交信息用中文" is a convention, though 提交 also steers ("提交一下"); "can you
            # run pyright over your changes as a matter of course?" asks for one.
            continue
        if is_one_off_request(sentence) and not _states_or_rules(clean_content(sentence)):
            continue  # "test suite takes 6 min" states a fact; "test the parser" asks
        found.extend(_user_sentence(sentence))
    return Extraction(candidates=_bounded(found), task=patch)


def _user_sentence(sentence: str) -> list[Candidate]:
    cue = correction_cue(sentence)
    body = cue.body if cue is not None else sentence
    found: list[Candidate] = []
    segments = _segments(body)
    pending = cue  # the correction goes with the first segment that says something new
    for index, (segment, verdict) in enumerate(segments):
        if index + 1 < len(segments) and not strip_replaced(clean_content(segment)):
            continue  # "— we're retiring '_c'": the old value, named beside the new one
        correction, pending = pending, None
        explicit = correction is not None and (correction.explicit or bool(correction.replaced))
        stated = None
        if _may_state_fact(verdict) or (verdict is not None and verdict.kind == "decision"):
            stated = subject_fact(clean_content(segment))
        if stated is not None and not _may_state_fact(verdict):
            stated = stated if overrides_choice(stated, segment) else None
        if stated is not None:
            verdict = Verdict("fact", 1)  # a subject bound to a value, with or without a cue
        standing = rule_subject(clean_content(segment), verdict.kind if verdict else None)
        if standing is not None and standing.stated:
            verdict = verdict or Verdict("fact", 1)  # "the timeout is 60s": a setting's value
        elif standing is not None:
            stated = None  # a rule's subject is what it governs, not a fact's subject
            if verdict is None or verdict.kind == "fact":
                verdict = Verdict("constraint", 4)  # "end method names with '_p'" instructs
        if verdict is None and not explicit:
            continue
        candidate = _candidate(segment, verdict, "user_explicit", correction, stated, standing)
        if candidate is not None:
            found.append(candidate)
    return found


def _states_or_rules(sentence: str) -> bool:
    """Whether a sentence shaped like a request states a fact or sets a standing rule
    ("add docstrings to every method"), so it is not a one-off."""
    return subject_fact(sentence) is not None or _sets_rule(sentence)


def _sets_rule(sentence: str) -> bool:
    clean = clean_content(sentence)
    verdict = classify(clean)
    return rule_subject(clean, verdict.kind if verdict else None) is not None


def _may_state_fact(verdict: Verdict | None) -> bool:
    """Only a clause with no stronger cue than a fact's may be read as subject and value."""
    return verdict is None or verdict.kind == "fact"


def _segments(body: str) -> list[tuple[str, Verdict | None]]:
    """Group clauses that state one thing; a clause with a different kind starts a new group.

    An undecided clause ("…，还没决定") turns the group before it into an open question.
    """
    groups: list[tuple[list[str], Verdict | None]] = []
    governs: str = ""  # the subject key of the group's standing rule, if it sets one
    for clause in clauses(body):
        verdict = classify(clause)
        standing = rule_subject(clean_content(clause), verdict.kind if verdict else None)
        key = standing.key if standing is not None else ""
        if not groups:
            groups.append(([clause], verdict))
            governs = key
            continue
        members, current = groups[-1]
        short = not _substantial(clause)
        if short and _remark(verdict, current):
            verdict = None  # too short to stand alone ("合规要求"): a remark on the last clause
        if key and (key == governs or (not governs and _leads_in(members))):
            # "不要再用 print 调试了，用 logging": two clauses, one rule; "From now on, …" and
            # "Scratch '_m'; …" lead into the rule that follows.
            members.append(clause)
            groups[-1] = (members, verdict if not governs and verdict else current or verdict)
            governs = key
            continue
        if key and governs and key != governs:
            # "… start function names with 'y_', and keep CamelCase for classes": two rules.
            groups.append(([clause], verdict or Verdict("constraint", 4)))
            governs = key
        elif verdict is None or current is None or verdict.kind == current.kind:
            governs = governs or key
            members.append(clause)
            groups[-1] = (members, current or verdict)
        elif verdict.kind == "open_question":
            members.append(clause)
            groups[-1] = (members, verdict)
        else:
            groups.append(([clause], verdict))
            governs = key
    if len(groups) == 1:
        return [(body, groups[0][1])]
    return [(_rejoin(body, members), verdict) for members, verdict in groups]


def _leads_in(members: list[str]) -> bool:
    """Clauses that only lead into what follows: a lasting marker or a retired value."""
    text = clean_content(" ".join(members))
    return bool(_LASTING_ONLY.fullmatch(text)) or stops_using(text)


def _remark(verdict: Verdict | None, current: Verdict | None) -> bool:
    """Whether a short clause's cue only remarks on the group before it. Not an open
    question, and not a rule after a mere statement ("今天要下雨了，记得带伞")."""
    if verdict is None or current is None or verdict.kind == "open_question":
        return False
    return not (verdict.kind == "constraint" and current.kind == "fact")


def _substantial(clause: str) -> bool:
    stripped = clean_content(clause)
    return (
        len(stripped) >= MIN_CLAUSE_CHARS or " " in stripped or _DIGIT.search(stripped) is not None
    )


def _rejoin(body: str, members: list[str]) -> str:
    """The stretch of the original text that the grouped clauses cover."""
    start = body.find(members[0])
    last = body.find(members[-1], start)
    return body[start : last + len(members[-1])] if start >= 0 and last >= 0 else " ".join(members)


def _from_assistant(text: str) -> Extraction:
    found: list[Candidate] = []
    for sentence in sentences(text):
        if is_question(sentence) or not is_proposal(sentence):
            continue
        candidate = _candidate(sentence, Verdict("proposal", 0), "assistant_proposal", None)
        if candidate is not None:
            found.append(candidate)
    return Extraction(candidates=_bounded(found))


def _bounded(found: list[Candidate]) -> tuple[Candidate, ...]:
    """Candidates without repeats, at most MAX_CANDIDATES: a pasted wall of text stays cheap."""
    unique: dict[tuple[str | None, str], Candidate] = {}
    for candidate in found:
        unique.setdefault((candidate.kind, candidate.content.casefold()), candidate)
    return tuple(unique.values())[:MAX_CANDIDATES]


def _candidate(
    segment: str,
    verdict: Verdict | None,
    evidence: str,
    correction: CorrectionCue | None,
    stated: SubjectFact | None = None,
    standing: RuleSubject | None = None,
) -> Candidate | None:
    content = clean_content(segment)
    if not content or _BARE_PRONOUN.match(content):
        return None
    quantities, conditions = quantities_and_conditions(content)
    scope = scope_of(content)
    if stated is not None:
        scope["subject"] = stated.subject
    if standing is not None:
        scope[RULE_SCOPE_KEY] = standing.key
    return Candidate(
        kind=verdict.kind if verdict else None,
        content=content,
        evidence_type=evidence,
        conditions=tuple(dict.fromkeys(c.text for c in conditions)),
        scope=scope,
        quantities=tuple(q for q in quantities if not q.negated),
        replaced=tuple(q for q in quantities if q.negated),
        correction=correction,
        strength=verdict.strength if verdict else 0,
        subject=stated.key if stated is not None else "",
        rule=standing,
    )
