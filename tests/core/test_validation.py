"""Validation checks, scripts, runs over assistant messages, blocking and the repair reminder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import Event
from lcm_core.validation.validate import (
    REMINDER_LABEL,
    cursor_key,
    evaluate,
    pending_repair_reminder,
    repair_state,
    run_validation,
)

SESSION = "s-val"


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    handle = InMemoryStore()
    yield handle
    handle.close()


def checks(*entries: Any, **validation: Any) -> Any:
    return load_config({"validation": {"checks": list(entries), **validation}})


def violations(text: str, *entries: dict[str, Any], **validation: Any) -> list[dict[str, Any]]:
    result = evaluate(text, checks(*entries, **validation))
    assert result.errors == (), result.errors
    return list(result.violations)


# --- required_terms ----------------------------------------------------------------------


def test_required_terms_pass_and_fail_with_min_count() -> None:
    """Each term must occur `minCount` times; Chinese terms count as substrings."""
    check = {"type": "required_terms", "terms": ["Sources", "数据来源"], "minCount": 2}
    assert violations("Sources: a. Sources: b. 数据来源：x；数据来源：y", check) == []
    found = violations("Sources: a. 数据来源：x", check)
    assert [(v["term"], v["count"], v["min"]) for v in found] == [
        ("Sources", 1, 2),
        ("数据来源", 1, 2),
    ]
    assert found[0]["check"] == "required_terms#0" and found[0]["type"] == "required_terms"


def test_required_terms_respect_scope_and_whole_words() -> None:
    """A required term that only appears inside a quote does not count when the scope is the body."""
    check = {"id": "cite", "type": "required_terms", "terms": ["p95"], "scope": ["body"]}
    assert violations('The user wrote "p95 is fine".', check)[0]["count"] == 0
    assert violations("The p95 latency is 800 ms.", check) == []
    assert violations("The p950 bucket.", check)[0]["count"] == 0


# --- forbidden_terms ---------------------------------------------------------------------


def test_forbidden_terms_pass_and_fail_case_insensitively() -> None:
    """A forbidden term anywhere in scope is a violation; case is ignored unless asked."""
    check = {"type": "forbidden_terms", "terms": ["simply", "显然"]}
    assert violations("Run it and check the output.", check) == []
    found = violations("Simply run it. 显然可以。simplyfied is not the word.", check)
    assert [(v["term"], v["count"]) for v in found] == [("simply", 1), ("显然", 1)]
    assert violations("Simply run it.", {**check, "caseSensitive": True}) == []


def test_forbidden_term_inside_a_quote_is_exempt_when_scope_excludes_quotes() -> None:
    """With scope body, a quoted or block-quoted occurrence is exempt but counted as such."""
    check = {"type": "forbidden_terms", "terms": ["TODO"], "scope": ["body", "path", "explanation"]}
    text = 'The reviewer wrote "leave a TODO here".\n> TODO from the ticket\n「TODO」'
    assert violations(text, check) == []
    found = violations(text + "\nI left a TODO.", check)
    assert [(v["count"], v["exempt"]) for v in found] == [(1, 3)]
    unscoped = {"type": "forbidden_terms", "terms": ["TODO"]}
    assert violations(text, unscoped)[0]["count"] == 3


def test_forbidden_term_inside_a_path_is_exempt_when_scope_excludes_paths() -> None:
    """A term that is part of a file path or URL is not prose when paths are out of scope."""
    check = {"type": "forbidden_terms", "terms": ["legacy"], "scope": "body"}
    text = "Edit `src/legacy/io.py` and see https://example.com/legacy/notes (legacy docs)."
    assert violations(text, check) == []
    found = violations(text + " The legacy code stays.", check)
    assert found[0]["count"] == 1 and found[0]["exempt"] == 3
    assert violations(text, {"type": "forbidden_terms", "terms": ["legacy"]})[0]["count"] == 3


# --- numbers_with_conditions -------------------------------------------------------------


def test_number_must_carry_its_conditions_within_the_window() -> None:
    """The configured number passes with its conditions nearby and fails when one is missing or far."""
    check = {
        "type": "numbers_with_conditions",
        "numbers": [{"value": "800", "conditions": ["p95", "ms"]}],
        "window": 30,
    }
    assert violations("告警阈值为 p95 延迟 800 ms。", check) == []
    assert violations("No number here, p95 only.", check) == []
    found = violations("The threshold is 800 ms.", check)
    assert [(v["number"], v["missing"]) for v in found] == [("800", ["p95"])]
    far = "p95" + " filler" * 10 + " then 800 ms."
    assert violations(far, check)[0]["missing"] == ["p95"]


def test_numbers_match_whole_numbers_and_forbidden_numbers_are_reported() -> None:
    """p95, 1800 and 800.5 are not 800; 1,000 equals 1000; a forbidden number anywhere in scope fails."""
    check = {
        "type": "numbers_with_conditions",
        "numbers": [{"value": 1000, "conditions": ["USD"]}],
        "forbiddenNumbers": ["99.99"],
        "scope": ["body"],
    }
    assert violations("p1000 build, 21000 rows, 1000.5 units", check) == []
    assert [v["number"] for v in violations("Budget 1,000 EUR.", check)] == ["1000"]
    assert violations("Budget 1,000 USD.", check) == []
    assert [v["message"] for v in violations("SLA 99.99% monthly.", check)] == [
        "forbidden number 99.99 appears"
    ]
    assert violations('They promised "99.99%" once.', check) == []


# --- script checks ------------------------------------------------------------------------


def write_script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body, encoding="utf-8")
    return path


def script_config(tmp_path: Path, path: str, **extra: Any) -> Any:
    return load_config(
        {
            "validation": {
                "scriptDir": str(tmp_path / "checks"),
                "checks": [{"id": "custom", "type": "script", "path": path, **extra}],
            }
        }
    )


def test_script_check_passes_fails_and_is_non_deterministic_unless_declared(tmp_path: Path) -> None:
    """A script's violations are recorded; without a declaration the run is marked non-deterministic."""
    write_script(
        tmp_path / "checks",
        "no_todo.py",
        "def check(text, context):\n"
        "    return [] if 'TODO' not in text else ['TODO left in answer']\n",
    )
    write_script(
        tmp_path / "checks",
        "declared.py",
        "deterministic = True\ndef check(text):\n    return {'ok': False, 'message': 'too short'} if len(text) < 5 else True\n",
    )
    passing = evaluate("All done.", script_config(tmp_path, "no_todo.py"))
    assert passing.ok and passing.checked == 1 and passing.deterministic is False
    failing = evaluate("TODO: finish", script_config(tmp_path, "no_todo.py", block=True))
    assert [v["message"] for v in failing.violations] == ["TODO left in answer"]
    assert failing.violations[0]["deterministic"] is False and failing.blocking == ()
    declared = evaluate("hi", script_config(tmp_path, "declared.py", block=True))
    assert declared.deterministic is True and [v["message"] for v in declared.blocking] == [
        "too short"
    ]


def test_script_that_raises_is_recorded_as_an_error_not_a_crash(tmp_path: Path) -> None:
    """An exception (even SystemExit) in user code becomes an error line; the check is skipped."""
    write_script(
        tmp_path / "checks",
        "boom.py",
        "def check(text, context):\n    raise RuntimeError('kaput')\n",
    )
    write_script(tmp_path / "checks", "leave.py", "import sys\ndef check(text):\n    sys.exit(3)\n")
    write_script(tmp_path / "checks", "odd.py", "def check(text):\n    return 42\n")
    for name, expected in (
        ("boom.py", "RuntimeError: kaput"),
        ("leave.py", "SystemExit"),
        ("odd.py", "returned int"),
    ):
        result = evaluate("text", script_config(tmp_path, name))
        assert result.checked == 0 and result.skipped == 1 and result.violations == ()
        assert (
            len(result.errors) == 1
            and expected in result.errors[0]
            and result.errors[0].startswith("custom:")
        )


@pytest.mark.parametrize("where", ["outside", "traversal", "absolute", "unset"])
def test_script_outside_the_configured_folder_is_refused(tmp_path: Path, where: str) -> None:
    """Only modules inside validation.scriptDir load; anything else is refused before import."""
    marker = tmp_path / "imported.txt"
    body = f"open({str(marker)!r}, 'w').write('x')\ndef check(text):\n    return True\n"
    write_script(tmp_path / "elsewhere", "evil.py", body)
    write_script(tmp_path / "checks", "fine.py", "def check(text):\n    return True\n")
    path = {
        "outside": "evil.py",
        "traversal": "../elsewhere/evil.py",
        "absolute": str(tmp_path / "elsewhere" / "evil.py"),
        "unset": "fine.py",
    }[where]
    config = script_config(tmp_path, path)
    if where == "unset":
        config = load_config({"validation": {"checks": [{"type": "script", "path": path}]}})
    result = evaluate("text", config)
    assert result.skipped == 1 and not marker.exists()
    assert any(word in result.errors[0] for word in ("refused", "not set", "not a .py file"))


def test_unknown_check_types_and_bad_settings_are_errors_and_skipped() -> None:
    """Unknown types, non-objects and unusable settings are reported, the rest still run."""
    result = evaluate(
        "Simply fine.",
        checks(
            {"type": "sentiment", "id": "vibes"},
            "not-a-check",
            {"type": "required_terms", "terms": []},
            {"type": "forbidden_terms", "terms": ["simply"]},
        ),
    )
    assert result.checked == 1 and result.skipped == 3
    assert result.errors[0] == "vibes: unknown check type 'sentiment'; skipped"
    assert "expected an object" in result.errors[1] and "needs 'terms'" in result.errors[2]
    assert [v["term"] for v in result.violations] == ["simply"]


# --- runs over the event stream, blocking and repair ----------------------------------------


def add(store: InMemoryStore, seq: int, text: str, kind: str = "assistant/message") -> None:
    store.insert_event(Event(session_id=SESSION, seq=seq, type=kind, text=text))


BLOCKING = {"id": "no-simply", "type": "forbidden_terms", "terms": ["simply"], "block": True}


def test_run_reads_only_new_assistant_messages_and_persists_each_run(
    store: InMemoryStore,
) -> None:
    """One log row per assistant message after the cursor; user messages are not validated."""
    add(store, 1, "Simply do it.", "user/message")
    add(store, 2, "Here is the plan.")
    add(store, 3, "Simply run it.")
    config = checks({"type": "forbidden_terms", "terms": ["simply"]})
    logs = run_validation(store, SESSION, config)
    assert [(log.event_seq, log.ok, log.blocked, log.target) for log in logs] == [
        (2, True, False, "assistant/message seq:2"),
        (3, False, False, "assistant/message seq:3"),
    ]
    assert store.get_meta(cursor_key(SESSION)) == "3"
    assert run_validation(store, SESSION, config) == []
    stored = store.list_validation_logs(SESSION)
    assert [log.event_seq for log in stored] == [3, 2] and stored[0].violations[0][
        "term"
    ] == "simply"


def test_blocking_stops_after_max_repair_attempts(store: InMemoryStore) -> None:
    """Two blocked runs each leave a reminder; the third violation is logged but no longer blocks."""
    config = checks(BLOCKING, maxRepairAttempts=2)
    blocked = []
    for seq in (1, 2, 3):
        add(store, seq, f"Simply answer {seq}.")
        (log,) = run_validation(store, SESSION, config)
        blocked.append(log.blocked)
        reminder = pending_repair_reminder(store, SESSION, config)
        if seq < 3:
            assert reminder is not None and reminder.startswith(f"{REMINDER_LABEL} {seq}/2]")
            assert f"seq {seq}" in reminder and 'forbidden term "simply"' in reminder
    assert blocked == [True, True, False]
    assert pending_repair_reminder(store, SESSION, config) is None
    assert "repair attempts used up (2 of 2)" in log.errors[-1]
    assert repair_state(store, SESSION, config).attempts == 2


def test_clean_answer_clears_the_pending_reminder(store: InMemoryStore) -> None:
    """A repaired answer removes the reminder; a later violation may block again within the limit."""
    config = checks(BLOCKING)
    add(store, 1, "Simply put.")
    add(store, 2, "Fixed answer.")
    run_validation(store, SESSION, config, limit=1)
    assert pending_repair_reminder(store, SESSION, config) is not None
    run_validation(store, SESSION, config)
    assert pending_repair_reminder(store, SESSION, config) is None
    add(store, 3, "simply again")
    assert run_validation(store, SESSION, config)[0].blocked


@pytest.mark.parametrize(
    ("check", "validation", "blocks"),
    [
        ({"type": "forbidden_terms", "terms": ["simply"]}, {}, False),
        ({"type": "forbidden_terms", "terms": ["simply"]}, {"blockOnViolation": True}, True),
        (
            {"type": "forbidden_terms", "terms": ["simply"], "block": False},
            {"blockOnViolation": True},
            False,
        ),
        (
            {"type": "forbidden_terms", "terms": ["simply"], "block": True, "severity": "warning"},
            {},
            False,
        ),
    ],
)
def test_only_configured_error_severity_violations_block(
    store: InMemoryStore, check: dict[str, Any], validation: dict[str, Any], blocks: bool
) -> None:
    """Per-check `block` wins over `blockOnViolation`; warnings never block."""
    add(store, 1, "Simply.")
    (log,) = run_validation(store, SESSION, checks(check, **validation))
    assert log.blocked is blocks and not log.ok
    assert (
        pending_repair_reminder(store, SESSION, checks(check, **validation)) is not None
    ) is blocks


def test_reminder_is_bounded(store: InMemoryStore) -> None:
    """Many violations give at most five lines plus a count, each clipped."""
    terms = [f"term{i}" + "x" * 300 for i in range(9)]
    add(store, 1, " ".join(terms))
    run_validation(
        store, SESSION, checks({"type": "forbidden_terms", "terms": terms, "block": True})
    )
    reminder = pending_repair_reminder(store, SESSION, checks())
    assert reminder is not None
    assert reminder.count("\n- ") == 6 and "… and 4 more" in reminder and len(reminder) < 1600


def test_without_checks_the_cursor_moves_and_nothing_is_logged(store: InMemoryStore) -> None:
    """Turning checks on later validates only what is committed afterwards."""
    add(store, 1, "Simply.")
    assert run_validation(store, SESSION, checks()) == []
    add(store, 2, "Simply again.")
    logs = run_validation(store, SESSION, checks({"type": "forbidden_terms", "terms": ["simply"]}))
    assert [log.event_seq for log in logs] == [2]


def test_script_dir_relative_to_base_dir_and_archived_text_is_validated(
    store: InMemoryStore, tmp_path: Path
) -> None:
    """A relative scriptDir resolves against base_dir; a truncated event is checked on its archived text."""
    from lcm_core.store.models import ArchiveEntry

    write_script(
        tmp_path / "checks",
        "tail.py",
        "deterministic = True\ndef check(text):\n    return text.endswith('END')\n",
    )
    store.insert_event(
        Event(SESSION, 1, "assistant/message", text="cut", store="archive", truncated=True)
    )
    store.put_archive(ArchiveEntry(SESSION, "seq:1", "long text ... END"))
    config = load_config(
        {"validation": {"scriptDir": "checks", "checks": [{"type": "script", "path": "tail.py"}]}}
    )
    (log,) = run_validation(store, SESSION, config, base_dir=tmp_path)
    assert log.ok and log.deterministic and log.checked == 1
