"""Extraction quality on the labelled corpus: per-kind precision and recall, and leaks.

Usage: python benchmarks/extraction_quality.py [--corpus PATH ...] [--json] [--errors]

Three corpora are reported by default: `tests/core/extraction_corpus.jsonl` (203 messages,
cue-bearing statements), `tests/core/extraction_corpus_work.jsonl` (365 messages from
work sessions: plain facts, corrections, navigation chatter, decisions, identifiers and
measurements) and `tests/core/extraction_corpus_chat.jsonl` (76 lines of chat between
people, English, Chinese and mixed: passing talk full of "always", "must have been",
"don't know", "you should try", and the few rules and choices people do set). Each conversation of a corpus becomes one session in an
in-memory SQLite store (message i -> seq i), and `run_extraction` runs over it once, the
way the plugin runs it. Items are compared per message (an item belongs to the message
whose seq is its `derived_from_seq`).

Matching rule (one expected item to at most one predicted item, greedily in label order):
- the kinds are equal (a proposal the user later promoted is compared as the proposal
  it was when derived, which the `promoted` lifecycle row records);
- the expected key phrase is contained in the item's content (case and runs of spaces
  ignored);
- where the label lists numbers, they are equal as multisets (a label without a
  `numbers` key leaves them unchecked; the first corpus always gives the key): same count, and each expected number pairs with a
  distinct predicted number of equal value and unit, and, where the label gives them,
  equal comparator, range end, and a predicted condition containing the label's
  condition phrase;
- where the label gives an item-level condition, some predicted condition contains it.
Precision of a kind = matched / predicted of that kind; recall = matched / expected.
A row with `kinds` is checked for those kinds only: the chat corpus labels rules and
choices (constraint, decision), not every fact a chat line states.

Also reported: corrections (a matched item whose `supersedes` holds an item containing
the label's `corrects` phrase), promotions, task-state patches (field and key phrase),
and leaks: items from generated-source messages, and items from assistant messages that
are `user_explicit` without a `promoted` lifecycle row. Leaks must be 0.

Work-session figures (rows carry `cat`, `ids`, `measures`):
- chatter with a durable item: rows of `cat` "chatter" that derive an item which
  `lcm_core.durability.is_durable` would keep if it were active;
- social lines made rules: rows of `cat` "social" (chat that sets no rule and makes no
  choice) that derive a constraint or a decision;
- wrong supersessions: items replaced by an item of a message whose label does not name
  that replaced value (`corrects`) for a matching item: any other link loses memory;
- identifiers flagged: numbers of a row's `ids` that `number_warning` would flag on an
  item derived from that row (ports, versions, ids, file and case numbers, years in
  names are identifiers); measurements flagged is reported beside it for contrast.

Label conventions (how the corpus was written, before the rules):
constraint = an obligation or prohibition, or a bound on a quantity the user requires;
decision = a choice of option or setting; preference = a taste or soft wish;
fact = how things are; open_question = explicitly undecided; proposal = an assistant
recommendation. Units are canonical for measures (ms, s, min, h, day, %, MB, 元, USD...),
a counted noun keeps its words ("daily active users", "个"). Dates, clock times and
versions are not numbers. The value a correction replaces ("not 3000") is not one of
its numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lcm_core.capture.events import is_generated
from lcm_core.config import load_config
from lcm_core.extraction.durability import is_durable
from lcm_core.extraction.run import extract_text, run_extraction
from lcm_core.store.models import MEMORY_KINDS, Event, MemoryItem
from lcm_core.text.numbers_role import flagged_numbers
from lcm_core.text.tokens import fingerprint, normalize_text
from lcm_store_sqlite import SQLiteMemoryStore

_CORE_TESTS = Path(__file__).resolve().parents[1] / "tests" / "core"
DEFAULT_CORPUS = _CORE_TESTS / "extraction_corpus.jsonl"
WORK_CORPUS = _CORE_TESTS / "extraction_corpus_work.jsonl"
CHAT_CORPUS = _CORE_TESTS / "extraction_corpus_chat.jsonl"
# The kinds that tell the model what it must do or what was chosen: chat must not make them.
RULE_KINDS = ("constraint", "decision")
TARGET_PRECISION = 0.90


def load_corpus(path: Path) -> list[dict[str, Any]]:
    """The labelled messages, in file order."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _norm(text: str) -> str:
    return " ".join(normalize_text(text).casefold().split())


def _numbers_match(expected: list[dict[str, Any]], predicted: tuple[dict[str, Any], ...]) -> bool:
    if len(expected) != len(predicted):
        return False
    unused = list(predicted)
    for want in expected:
        hit = next((p for p in unused if _number_match(want, p)), None)
        if hit is None:
            return False
        unused.remove(hit)
    return True


def _number_match(want: dict[str, Any], got: dict[str, Any]) -> bool:
    if got.get("value") is None or abs(float(got["value"]) - float(want["v"])) > 1e-9:
        return False
    want_unit, got_unit = want.get("u"), got.get("unit")
    if (want_unit or "").casefold() != (got_unit or "").casefold():
        return False
    if "cmp" in want and got.get("comparator") != want["cmp"]:
        return False
    if "max" in want and (got.get("max") is None or float(got["max"]) != float(want["max"])):
        return False
    if "cond" in want:
        return any(_norm(want["cond"]) in _norm(c) for c in got.get("conditions", []))
    return True


def item_matches(expected: dict[str, Any], item: MemoryItem, kind: str) -> bool:
    """The matching rule of the module docstring."""
    if kind != expected["kind"] or _norm(expected["key"]) not in _norm(item.content):
        return False
    if "cond" in expected and not any(_norm(expected["cond"]) in _norm(c) for c in item.conditions):
        return False
    if "numbers" not in expected:
        return True
    return _numbers_match(expected["numbers"], item.numbers)


@dataclass
class Tally:
    """Counts behind one precision/recall pair."""

    matched: int = 0
    predicted: int = 0
    expected: int = 0

    def precision(self) -> float | None:
        return self.matched / self.predicted if self.predicted else None

    def recall(self) -> float | None:
        return self.matched / self.expected if self.expected else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "matched": self.matched,
            "predicted": self.predicted,
            "expected": self.expected,
            "precision": self.precision(),
            "recall": self.recall(),
        }


@dataclass
class Result:
    """Everything the report prints."""

    kinds: dict[str, Tally] = field(default_factory=lambda: {k: Tally() for k in MEMORY_KINDS})
    overall: Tally = field(default_factory=Tally)
    corrections: Tally = field(default_factory=Tally)
    promotions: Tally = field(default_factory=Tally)
    task: Tally = field(default_factory=Tally)
    generated_items: int = 0
    assistant_user_explicit: int = 0
    messages: int = 0
    chatter: int = 0
    chatter_durable: int = 0
    social: int = 0
    social_rules: int = 0
    superseded: int = 0
    wrong_supersessions: int = 0
    identifiers: int = 0
    identifiers_flagged: int = 0
    measures: int = 0
    measures_flagged: int = 0
    errors: list[str] = field(default_factory=list)


def evaluate(rows: list[dict[str, Any]]) -> Result:
    """Run extraction over every conversation and compare with the labels."""
    result = Result(messages=len(rows))
    conversations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        conversations[row["conv"]].append(row)
    store = SQLiteMemoryStore(":memory:")
    try:
        for conv, messages in conversations.items():
            _evaluate_conversation(store, conv, messages, result)
    finally:
        store.close()
    return result


def _event(conv: str, seq: int, row: dict[str, Any]) -> Event:
    text = normalize_text(row["text"])
    return Event(
        session_id=conv,
        seq=seq,
        type=f"{row['role']}/message",
        text=text,
        role=row["role"],
        source_kind=row.get("source_kind"),
        source_form=row.get("source_form"),
        content_hash=fingerprint(text),
    )


def _evaluate_conversation(
    store: SQLiteMemoryStore, conv: str, messages: list[dict[str, Any]], result: Result
) -> None:
    events = [_event(conv, seq, row) for seq, row in enumerate(messages, 1)]
    store.insert_events(events)
    report = run_extraction(store, conv, load_config())
    result.errors.extend(f"{conv}: {e}" for e in report.errors)
    items = store.list_items(conv)
    lifecycle = store.list_memory_events(session_id=conv)
    promoted_from = {
        row.memory_id: row.detail.get("from_kind", "proposal")
        for row in lifecycle
        if row.event == "promoted"
    }
    promoted_at = {
        (row.memory_id, row.detail.get("seq")) for row in lifecycle if row.event == "promoted"
    }
    by_id = {item.id: item for item in items}
    by_seq: dict[int, list[MemoryItem]] = defaultdict(list)
    for item in items:
        by_seq[item.derived_from_seq or -1].append(item)
    _count_supersessions(messages, items, by_id, result)
    for seq, (row, event) in enumerate(zip(messages, events, strict=True), 1):
        produced = by_seq.get(seq, [])
        if is_generated(event):
            result.generated_items += len(produced)
        if row["role"] == "assistant":
            result.assistant_user_explicit += sum(
                1
                for i in produced
                if i.evidence_type == "user_explicit" and i.id not in promoted_from
            )
        kinds = {i.id: promoted_from.get(i.id, i.kind) for i in produced}
        if "kinds" in row:  # the row is labelled for these kinds only
            produced = [i for i in produced if kinds[i.id] in row["kinds"]]
        _compare_items(row, produced, kinds, by_id, result)
        _count_work_figures(row, produced, result)
        _compare_promotion(row, seq, by_seq.get(seq - 1, []), promoted_at, result)
        if row["role"] == "user" and not is_generated(event):
            _compare_task(row, result)


def _compare_items(
    row: dict[str, Any],
    produced: list[MemoryItem],
    kinds: dict[str, str],
    by_id: dict[str, MemoryItem],
    result: Result,
) -> None:
    unused = list(produced)
    for item in produced:
        result.kinds[kinds[item.id]].predicted += 1
        result.overall.predicted += 1
        if item.supersedes:
            result.corrections.predicted += 1
    for expected in row["items"]:
        result.kinds[expected["kind"]].expected += 1
        result.overall.expected += 1
        if expected.get("corrects"):
            result.corrections.expected += 1
        hit = next((i for i in unused if item_matches(expected, i, kinds[i.id])), None)
        if hit is None:
            result.errors.append(f"{row['id']}: missed {expected['kind']} '{expected['key']}'")
            continue
        unused.remove(hit)
        result.kinds[expected["kind"]].matched += 1
        result.overall.matched += 1
        wanted = expected.get("corrects")
        if wanted and any(
            _norm(wanted) in _norm(by_id[old].content) for old in hit.supersedes if old in by_id
        ):
            result.corrections.matched += 1
        elif wanted:
            result.errors.append(f"{row['id']}: correction of '{wanted}' not linked")
    for item in unused:
        result.errors.append(
            f"{row['id']}: extra {kinds[item.id]} '{item.content}' {list(item.numbers)}"
        )


def _count_work_figures(row: dict[str, Any], produced: list[MemoryItem], result: Result) -> None:
    if row.get("cat") == "chatter":
        result.chatter += 1
        durable = [i for i in produced if is_durable(replace(i, status="active"))]
        if durable:
            result.chatter_durable += 1
            result.errors.append(f"{row['id']}: chatter gave durable '{durable[0].content}'")
    if row.get("cat") == "social":
        result.social += 1
        rules = [i for i in produced if i.kind in RULE_KINDS]
        if rules:
            result.social_rules += 1
            result.errors.append(f"{row['id']}: chat became {rules[0].kind} '{rules[0].content}'")
    flagged = [n.get("value") for i in produced for n in flagged_numbers(i)]
    for name, values in (("ids", row.get("ids", [])), ("measures", row.get("measures", []))):
        hits = sum(1 for v in values if any(_same(v, f) for f in flagged))
        if name == "ids":
            result.identifiers += len(values)
            result.identifiers_flagged += hits
            if hits:
                result.errors.append(f"{row['id']}: identifier flagged as measurement {flagged}")
        else:
            result.measures += len(values)
            result.measures_flagged += hits


def _same(value: Any, got: Any) -> bool:
    return isinstance(got, int | float) and abs(float(got) - float(value)) < 1e-9


def _count_supersessions(
    messages: list[dict[str, Any]],
    items: list[MemoryItem],
    by_id: dict[str, MemoryItem],
    result: Result,
) -> None:
    """Every replaced item must be replaced by a labelled correction naming its value."""
    for old in items:
        if old.superseded_by is None or old.superseded_by not in by_id:
            continue
        new = by_id[old.superseded_by]
        result.superseded += 1
        seq = new.derived_from_seq or 0
        row = messages[seq - 1] if 0 < seq <= len(messages) else {"items": [], "id": "?"}
        right = any(
            exp.get("corrects")
            and _norm(exp["corrects"]) in _norm(old.content)
            and _norm(exp["key"]) in _norm(new.content)
            for exp in row["items"]
        )
        if not right:
            result.wrong_supersessions += 1
            result.errors.append(f"{row['id']}: wrong supersession of '{old.content}'")


def _compare_promotion(
    row: dict[str, Any],
    seq: int,
    previous: list[MemoryItem],
    promoted_at: set[tuple[str, Any]],
    result: Result,
) -> None:
    done = [i for i in previous if (i.id, seq) in promoted_at]
    result.promotions.predicted += len(done)
    if row.get("promotes"):
        result.promotions.expected += 1
        if any(_norm(row["promotes"]) in _norm(i.content) for i in done):
            result.promotions.matched += 1
        else:
            result.errors.append(f"{row['id']}: promotion of '{row['promotes']}' missing")


def _compare_task(row: dict[str, Any], result: Result) -> None:
    patch = extract_text(row["text"], "user", row.get("source_kind")).task
    got: list[tuple[str, str]] = []
    if patch is not None:
        if patch.goal:
            got.append(("goal", patch.goal))
        for name in ("progress", "blockers", "open_items"):
            got.extend((name, value) for value in getattr(patch, name))
    wanted: list[tuple[str, str]] = []
    for name, value in (row.get("task") or {}).items():
        wanted.extend((name, v) for v in (value if isinstance(value, list) else [value]))
    result.task.predicted += len(got)
    result.task.expected += len(wanted)
    unused = list(got)
    for name, key in wanted:
        hit = next((g for g in unused if g[0] == name and _norm(key) in _norm(g[1])), None)
        if hit is None:
            result.errors.append(f"{row['id']}: task {name} '{key}' missing (got {got})")
            continue
        unused.remove(hit)
        result.task.matched += 1
    for name, value in unused:
        result.errors.append(f"{row['id']}: extra task {name} '{value}'")


def _fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


def render(result: Result, corpus: Path) -> str:
    lines = [
        f"corpus: {corpus} ({result.messages} messages)",
        "",
        f"{'kind':<15}{'precision':>10}{'recall':>8}{'matched':>9}{'predicted':>11}{'expected':>10}",
    ]
    rows = [*result.kinds.items(), ("OVERALL", result.overall)]
    rows += [("corrections", result.corrections), ("promotions", result.promotions)]
    rows += [("task state", result.task)]
    for name, tally in rows:
        lines.append(
            f"{name:<15}{_fmt(tally.precision()):>10}{_fmt(tally.recall()):>8}"
            f"{tally.matched:>9}{tally.predicted:>11}{tally.expected:>10}"
        )
    precision = result.overall.precision() or 0.0
    lines += [
        "",
        f"items from generated-source messages: {result.generated_items} (must be 0)",
        f"user_explicit items from assistant messages (not promoted): "
        f"{result.assistant_user_explicit} (must be 0)",
        f"overall precision {precision:.3f} vs target {TARGET_PRECISION:.2f}: "
        f"ratio {precision / TARGET_PRECISION:.2f}",
    ]
    if result.social:
        lines.append(
            f"social lines made a constraint or decision: {result.social_rules}/{result.social}"
            f" ({_share(result.social_rules, result.social)})"
        )
    if result.chatter or result.identifiers or result.measures:
        lines += [
            f"chatter messages yielding a durable item: {result.chatter_durable}/{result.chatter}"
            f" ({_share(result.chatter_durable, result.chatter)})",
            f"corrections linked to the right item: {result.corrections.matched}/"
            f"{result.corrections.expected} ({_share(result.corrections.matched, result.corrections.expected)})",
            f"wrong supersessions: {result.wrong_supersessions} of {result.superseded} supersessions",
            f"identifiers flagged as measurements: {result.identifiers_flagged}/{result.identifiers}",
            f"measurements flagged (no condition or unit): {result.measures_flagged}/{result.measures}",
        ]
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def as_json(result: Result, corpus: Path) -> dict[str, Any]:
    return {
        "corpus": str(corpus),
        "messages": result.messages,
        "kinds": {k: t.as_dict() for k, t in result.kinds.items()},
        "overall": result.overall.as_dict(),
        "corrections": result.corrections.as_dict(),
        "promotions": result.promotions.as_dict(),
        "task_state": result.task.as_dict(),
        "generated_source_items": result.generated_items,
        "assistant_user_explicit_items": result.assistant_user_explicit,
        "target_precision": TARGET_PRECISION,
        "chatter": {"messages": result.chatter, "with_durable_item": result.chatter_durable},
        "social": {"messages": result.social, "made_rule_or_choice": result.social_rules},
        "supersessions": {"total": result.superseded, "wrong": result.wrong_supersessions},
        "identifiers": {"total": result.identifiers, "flagged": result.identifiers_flagged},
        "measurements": {"total": result.measures, "flagged": result.measures_flagged},
        "mismatches": result.errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a labelled corpus (repeatable; default all three)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--errors", action="store_true", help="list every mismatch")
    args = parser.parse_args(argv)
    leaks = 0
    reports: list[dict[str, Any]] = []
    for corpus in args.corpus or [DEFAULT_CORPUS, WORK_CORPUS, CHAT_CORPUS]:
        result = evaluate(load_corpus(corpus))
        leaks += result.generated_items + result.assistant_user_explicit
        if args.json:
            reports.append(as_json(result, corpus))
            continue
        print(render(result, corpus))
        if args.errors:
            print("\nmismatches:")
            print("\n".join(f"  {line}" for line in result.errors) or "  none")
        print()
    if args.json:
        print(json.dumps(reports, ensure_ascii=False, indent=2))
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
