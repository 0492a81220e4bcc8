"""Extraction over the store: items, corrections, proposals, task state, retries, replays."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from lcm_core.capture.events import GENERATED_SOURCE_KINDS
from lcm_core.config import load_config
from lcm_core.extraction.run import EXTRACTOR, extract_text, run_extraction
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import Event, MemoryItem
from lcm_core.text.tokens import fingerprint, normalize_text, stable_item_id

SESSION = "s-extract"
CONFIG = load_config()


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    opened = InMemoryStore()
    yield opened
    opened.close()


def say(store: Any, *messages: tuple[str, str] | tuple[str, str, str | None]) -> None:
    """Append messages after the session's last seq: (role, text) or (role, text, source kind)."""
    last = store.max_event_seq(SESSION)
    start = 0 if last is None else last + 1
    events = []
    for offset, message in enumerate(messages):
        role, text = message[0], message[1]
        source = message[2] if len(message) == 3 else ("user" if role == "user" else "model")
        events.append(
            Event(
                session_id=SESSION,
                seq=start + offset,
                type=f"{role}/message",
                text=normalize_text(text),
                role=role,
                source_kind=source,
            )
        )
    store.insert_events(events)


def items(store: Any, **filters: Any) -> list[MemoryItem]:
    return list(store.list_items(SESSION, **filters))


def one(store: Any, fragment: str) -> MemoryItem:
    found = [i for i in items(store) if fragment in i.content]
    assert len(found) == 1, [i.content for i in items(store)]
    return found[0]


def snapshot(store: Any) -> dict[str, list[dict[str, Any]]]:
    tables = ("memory_items", "memory_events", "task_state", "checkpoints", "pending_extraction")
    return {t: list(store.export_rows(t, session_id=SESSION)) for t in tables}


def test_constraint_with_number_and_condition_is_stored_with_provenance(
    store: InMemoryStore,
) -> None:
    """a user limit becomes a constraint with its number, unit, condition and source."""
    say(store, ("user", "Keep p95 latency under 200 ms when the cache is warm."))
    report = run_extraction(store, SESSION, CONFIG)
    assert (report.items_created, report.errors) == (1, [])
    item = one(store, "p95")
    assert item.kind == "constraint" and item.evidence_type == "user_explicit"
    assert item.numbers == (
        {
            "raw": "200 ms",
            "value": 200,
            "unit": "ms",
            "comparator": "<=",
            "max": None,
            "conditions": ["when the cache is warm"],
        },
    )
    assert item.conditions == ("when the cache is warm",)
    assert item.source_refs == ("seq:0",) and item.derived_from_seq == 0
    assert item.extractor == EXTRACTOR
    assert item.id == stable_item_id(SESSION, "constraint", item.content)
    assert item.content_hash == fingerprint(item.content)


def test_chinese_budget_with_tax_condition(store: InMemoryStore) -> None:
    """预算不超过3000元（含税） is a constraint with 3000 元, ceiling and condition 含税."""
    say(store, ("user", "预算不超过3000元（含税）。"))
    run_extraction(store, SESSION, CONFIG)
    item = one(store, "预算")
    assert item.kind == "constraint"
    assert [(n["value"], n["unit"], n["comparator"], n["conditions"]) for n in item.numbers] == [
        (3000, "元", "<=", ["含税"])
    ]


def test_correction_supersedes_and_old_value_stays_queryable(store: InMemoryStore) -> None:
    """ "actually, 8080, not 3000" replaces the old item, which stays readable and audited."""
    say(
        store,
        ("user", "Let's run the dev server on port 3000."),
        ("assistant", "OK, I've updated vite.config.ts to use port 3000."),
        ("user", "Actually, use port 8080, not 3000."),
    )
    report = run_extraction(store, SESSION, CONFIG)
    assert (report.items_created, report.items_superseded) == (2, 1)
    old, new = one(store, "dev server"), one(store, "8080")
    assert old.status == "superseded" and old.superseded_by == new.id
    assert new.status == "active" and new.supersedes == (old.id,) and new.kind == "decision"
    assert [(n["value"], n["unit"]) for n in new.numbers] == [(8080, "port")]
    assert [r.event for r in store.list_memory_events(memory_id=old.id)] == [
        "created",
        "superseded",
    ]
    history = store.search_items(SESSION, ["3000"], statuses=("superseded",))
    assert [h.item.id for h in history] == [old.id]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (
            "I just took a morning walk in Houston",
            "I would also choose Orlando, not just because of Disney World but for the food",
        ),
        (
            "I only took a morning walk in Houston",
            "We loved Lisbon, not only for the trams but the pastries too",
        ),
        ("My morning walk in Houston is really nice", "The museum was fun, not really, honestly"),
    ],
)
def test_not_just_x_but_y_replaces_nothing(store: InMemoryStore, earlier: str, later: str) -> None:
    """ "not just X but Y" adds; a filler word after "not" names no value to replace.

    Before, ", not just because ..." made "just" the replaced value, and the earlier
    "I just took a morning walk" was superseded by a sentence about Orlando.
    """
    say(store, ("user", earlier), ("user", later))
    run_extraction(store, SESSION, CONFIG)
    assert items(store, statuses=("superseded",)) == []
    assert one(store, "morning walk").status == "active"


def test_a_real_correction_with_not_still_supersedes(store: InMemoryStore) -> None:
    """The additive "not just" rule leaves ", not X" corrections alone, in Chinese too."""
    say(
        store,
        ("user", "The reports database is SQLite"),
        ("user", "The reports database is Postgres, not SQLite"),
        ("user", "周会定在周四"),
        ("user", "周会定在周五，不是周四"),
    )
    run_extraction(store, SESSION, CONFIG)
    assert {i.content for i in items(store, statuses=("superseded",))} == {
        "The reports database is SQLite",
        "周会定在周四",
    }


def test_a_short_replaced_value_still_names_what_it_replaces(store: InMemoryStore) -> None:
    """ "not B" and "not the second" are corrections: only words that soften the "not"
    ("really", "yet", "just") name nothing."""
    say(
        store,
        ("user", "We go with plan B for the launch"),
        ("user", "We go with plan A for the launch, not B"),
    )
    run_extraction(store, SESSION, CONFIG)
    assert [i.content for i in items(store, statuses=("superseded",))] == [
        "We go with plan B for the launch"
    ]


def test_subject_less_correction_rewrites_the_value(store: InMemoryStore) -> None:
    """ "No, make it 5." names no subject: the new item is the old sentence with 5."""
    say(store, ("user", "Set the retry limit to 3 attempts."), ("user", "No, make it 5."))
    run_extraction(store, SESSION, CONFIG)
    active = items(store, statuses=("active",))
    assert [(i.kind, i.content) for i in active] == [
        ("decision", "Set the retry limit to 5 attempts")
    ]
    assert active[0].source_refs == ("seq:1",)


def test_chinese_corrections(store: InMemoryStore) -> None:
    """改成 and 不对，应该是 supersede the matching Chinese items, keeping their kinds."""
    say(
        store,
        ("user", "缓存就用Redis吧，过期时间设成10分钟。"),
        ("user", "预算不超过3000元（含税）。"),
        ("user", "改成5分钟。"),
        ("user", "不对，应该是3500元，我刚跟财务确认过。"),
    )
    run_extraction(store, SESSION, CONFIG)
    ttl, budget = one(store, "5分钟"), one(store, "3500元")
    assert ttl.kind == "decision" and ttl.content == "缓存就用Redis吧，过期时间设成5分钟"
    assert budget.kind == "constraint"
    old_ttl, old_budget = one(store, "10分钟"), one(store, "3000元")
    assert (old_ttl.status, old_ttl.superseded_by) == ("superseded", ttl.id)
    assert (old_budget.status, old_budget.superseded_by) == ("superseded", budget.id)


def test_restating_a_superseded_value_reactivates_it(store: InMemoryStore) -> None:
    """saying the old value again revives its item and retires the one that replaced it."""
    say(
        store,
        ("user", "Let's run the dev server on port 3000."),
        ("user", "Actually, use port 8080, not 3000."),
        ("user", "Let's run the dev server on port 3000."),
    )
    report = run_extraction(store, SESSION, CONFIG)
    assert report.errors == [] and report.items_reactivated == 1
    old, new = one(store, "port 3000"), one(store, "8080")
    assert old.status == "active" and old.superseded_by is None and new.id in old.supersedes
    assert (new.status, new.superseded_by) == ("superseded", old.id)
    assert [r.event for r in store.list_memory_events(memory_id=old.id)] == [
        "created",
        "superseded",
        "reactivated",
    ]


def test_assistant_statements_are_only_proposals(store: InMemoryStore) -> None:
    """assistant text with user-like cues yields proposals only, never user evidence."""
    say(
        store,
        ("assistant", "I recommend we never store API keys in the repo; you must use env vars."),
        ("assistant", "我建议把日志级别调成 INFO，生产环境不要开 DEBUG。"),
        ("assistant", "All 214 tests pass now. The budget must stay under 3000 元."),
    )
    run_extraction(store, SESSION, CONFIG)
    found = items(store)
    assert sorted(i.content for i in found) == [
        "I recommend we never store API keys in the repo",
        "我建议把日志级别调成 INFO，生产环境不要开 DEBUG",
    ]
    assert {(i.kind, i.evidence_type) for i in found} == {("proposal", "assistant_proposal")}


@pytest.mark.parametrize("source", sorted(GENERATED_SOURCE_KINDS))
def test_generated_sources_derive_nothing(store: InMemoryStore, source: str) -> None:
    """text from plugins, the runtime or this plugin is stored but never becomes memory."""
    say(
        store,
        (
            "user",
            "We decided to use PostgreSQL; budget must stay under 3000 元. TODO: ship it.",
            source,
        ),
        ("user", "The goal is to migrate to S3.", source),
    )
    report = run_extraction(store, SESSION, CONFIG)
    assert items(store) == [] and store.get_task_state(SESSION) is None
    assert report.events_seen == 2 and len(store.list_events(SESSION)) == 2


def test_tool_sourced_user_message_derives_nothing(store: InMemoryStore) -> None:
    """a user-role message whose source is a tool is untrusted input, not user memory."""
    say(store, ("user", "You must restart the server; never cache auth tokens.", "tool"))
    run_extraction(store, SESSION, CONFIG)
    assert items(store) == []


def test_confirmation_promotes_the_single_proposal(store: InMemoryStore) -> None:
    """a bare "sounds good" after one proposal makes it user evidence of its own kind."""
    say(
        store,
        ("assistant", "I recommend we never store API keys in the repo."),
        ("user", "Sounds good."),
    )
    report = run_extraction(store, SESSION, CONFIG)
    item = one(store, "API keys")
    assert report.items_promoted == 1
    assert (item.kind, item.evidence_type) == ("constraint", "user_explicit")
    assert store.list_memory_events(memory_id=item.id)[-1].detail["seq"] == 1


def test_confirmation_after_two_proposals_promotes_nothing(store: InMemoryStore) -> None:
    """ "yes" to several proposals at once is ambiguous, so nothing is promoted."""
    say(
        store,
        ("assistant", "I suggest a trigram index. We could also cache the top 100 queries."),
        ("user", "好的，就按你说的办。"),
    )
    report = run_extraction(store, SESSION, CONFIG)
    assert report.items_promoted == 0
    assert {i.evidence_type for i in items(store)} == {"assistant_proposal"}


def test_task_state_patches(store: InMemoryStore) -> None:
    """goal, progress, blockers and open items come from explicit statements in both languages."""
    say(
        store,
        ("user", "The goal for this week is to migrate the upload pipeline to S3."),
        ("user", "TODO: update the runbook."),
        ("user", "现在卡在权限系统的对接上。"),
        ("user", "Done with the runbook update."),
        ("user", "目标改成先拆订单模块。"),
    )
    run_extraction(store, SESSION, CONFIG)
    state = store.get_task_state(SESSION)
    assert state is not None
    assert state.goal == "先拆订单模块"
    assert state.superseded == ("migrate the upload pipeline to S3",)
    assert state.blockers == ("权限系统的对接",)
    assert state.progress == ("the runbook update",)
    assert state.open_items == ()
    assert state.updated_by_seq == 4 and items(store) == []


@pytest.mark.parametrize(
    "text",
    [
        "Emi: I finished the cake. I'm stuck on the last level of that game",
        "小红：作业写完了，现在卡在数学题上",
        "I've always been interested in knowing how authentic Italian food is done.",
    ],
)
def test_a_transcript_line_or_an_indirect_question_is_no_task_state(text: str) -> None:
    """A line of a two-person chat ("Emi: ...") tells a speaker's life, not the task the
    user works on with the agent; "how X is done" says how it is made. Neither patches
    the task state."""
    assert extract_text(text).task is None


@pytest.mark.parametrize(
    ("text", "progress"),
    [
        ("Progress: the exporter is done", ("the exporter",)),
        ("进度：导出脚本写完了", ("导出脚本",)),
        ("the exporter is done", ("the exporter",)),
        ("Context: the exporter is done", ("the exporter",)),
        ("We're starting ledger-sync: the exporter is done", ("the exporter",)),
    ],
)
def test_a_status_label_still_heads_a_task_line(text: str, progress: tuple[str, ...]) -> None:
    task = extract_text(text).task
    # A head other than a status label stays in the value ("Context: the exporter").
    assert task is not None and len(task.progress) == 1
    assert task.progress[0].endswith(progress[0])


def test_mixed_language_message(store: InMemoryStore) -> None:
    """one mixed EN/ZH message gives both of its items with the right kinds."""
    say(store, ("user", "Let's use 飞书 webhook for alerts，不要再发邮件了。"))
    run_extraction(store, SESSION, CONFIG)
    assert sorted((i.kind, i.content) for i in items(store)) == [
        ("constraint", "不要再发邮件了"),
        ("decision", "Let's use 飞书 webhook for alerts"),
    ]


def test_questions_greetings_and_traces_derive_nothing(store: InMemoryStore) -> None:
    """chat that states nothing durable leaves no memory."""
    say(
        store,
        ("user", "hey there"),
        ("user", "How do I make pytest show print output?"),
        ("user", "这段代码是什么意思？"),
        ("user", "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'x'"),
        ("user", "Thanks!"),
        ("user", "Can you fix the flaky test in tests/test_upload.py?"),
    )
    report = run_extraction(store, SESSION, CONFIG)
    assert items(store) == [] and report.events_seen == 6


class FlakyStore:
    """A store whose insert_item fails a given number of times, then works."""

    def __init__(self, inner: InMemoryStore, failures: int) -> None:
        self.inner = inner
        self.failures = failures

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        if self.failures > 0 and "3000" in item.content:
            self.failures -= 1
            raise RuntimeError("injected failure")
        return self.inner.insert_item(item, actor=actor)


def test_failure_queues_the_event_and_the_next_run_retries(store: InMemoryStore) -> None:
    """a failing event goes to the retry queue, the others go on, and a later run recovers it."""
    say(
        store,
        ("user", "预算不超过3000元（含税）。"),
        ("user", "Never commit directly to main."),
        ("user", "TODO: add retries to the uploader."),
    )
    flaky = FlakyStore(store, failures=1)
    first = run_extraction(flaky, SESSION, CONFIG)  # type: ignore[arg-type]
    assert (first.failed, first.items_created, first.task_updates) == (1, 1, 1)
    pending = store.list_pending(SESSION)
    assert [(p.seq, p.attempts) for p in pending] == [(0, 1)]
    assert "injected failure" in pending[0].last_error
    assert store.get_checkpoint(SESSION).last_extract_seq == 2
    assert [i.content for i in items(store)] == ["Never commit directly to main"]
    second = run_extraction(flaky, SESSION, CONFIG)  # type: ignore[arg-type]
    assert (second.retried, second.recovered, second.failed) == (1, 1, 0)
    assert store.list_pending(SESSION) == []
    assert {i.content for i in items(store)} == {
        "预算不超过3000元（含税）",
        "Never commit directly to main",
    }
    assert len(store.list_events(SESSION)) == 3


def test_retries_stop_after_max_attempts(store: InMemoryStore) -> None:
    """an event that keeps failing is retried up to extraction.maxAttempts, then left queued."""
    say(store, ("user", "预算不超过3000元（含税）。"))
    flaky = FlakyStore(store, failures=100)
    config = load_config({"extraction": {"maxAttempts": 2}})
    reports = [run_extraction(flaky, SESSION, config) for _ in range(4)]  # type: ignore[arg-type]
    assert [r.failed for r in reports] == [1, 1, 0, 0]
    assert [r.gave_up for r in reports] == [0, 0, 1, 1]
    assert [(p.seq, p.attempts) for p in store.list_pending(SESSION)] == [(0, 2)]
    assert store.get_event(SESSION, 0) is not None


CONVERSATION = (
    ("user", "Let's run the dev server on port 3000."),
    ("assistant", "I suggest adding a cache warm-up step at deploy time."),
    ("user", "Sounds good."),
    ("user", "Actually, use port 8080, not 3000."),
    ("user", "预算不超过3000元（含税）。"),
    ("user", "改成3500元。"),
    ("user", "The goal is to ship the importer. TODO: write the runbook."),
    ("user", "Let's run the dev server on port 3000."),
)


def test_rerun_changes_nothing(store: InMemoryStore) -> None:
    """a second run over the same events writes nothing at all."""
    say(store, *CONVERSATION)
    run_extraction(store, SESSION, CONFIG)
    before = snapshot(store)
    again = run_extraction(store, SESSION, CONFIG)
    assert again.events_seen == 0 and snapshot(store) == before


def test_replay_from_scratch_changes_nothing(store: InMemoryStore) -> None:
    """with the cursor reset, re-deriving every event finds everything in place."""
    say(store, *CONVERSATION)
    run_extraction(store, SESSION, CONFIG)
    before = snapshot(store)
    store.put_checkpoint(replace(store.get_checkpoint(SESSION), last_extract_seq=-1))
    report = run_extraction(store, SESSION, CONFIG)
    assert report.errors == [] and report.items_created == 0 and report.items_superseded == 0
    after = snapshot(store)
    assert after["memory_items"] == before["memory_items"]
    assert after["memory_events"] == before["memory_events"]
    assert after["task_state"] == before["task_state"]


def test_small_batches_give_the_same_memory(store: InMemoryStore) -> None:
    """the batch size changes how often the cursor moves, never what is derived."""
    say(store, *CONVERSATION)
    run_extraction(store, SESSION, CONFIG)
    other = InMemoryStore()
    try:
        say(other, *CONVERSATION)
        report = run_extraction(other, SESSION, CONFIG, batch_size=2)
        assert report.last_extract_seq == len(CONVERSATION) - 1
        strip = ("created_at", "updated_at", "at", "id")

        def plain(rows: list[dict[str, Any]]) -> list[str]:
            # Rows written in the same millisecond may list in either order.
            return sorted(repr({k: v for k, v in r.items() if k not in strip}) for r in rows)

        for table in ("memory_items", "memory_events", "task_state"):
            assert plain(list(other.export_rows(table, session_id=SESSION))) == plain(
                list(store.export_rows(table, session_id=SESSION))
            )
    finally:
        other.close()


def test_disabled_extraction_does_nothing(store: InMemoryStore) -> None:
    """extraction.enabled = false leaves the store and the cursor alone."""
    say(store, ("user", "Never commit directly to main."))
    report = run_extraction(store, SESSION, load_config({"extraction": {"enabled": False}}))
    assert report.skipped and items(store) == []
    assert store.get_checkpoint(SESSION).last_extract_seq == -1


def test_a_broken_store_is_reported_not_raised(store: InMemoryStore) -> None:
    """run_extraction never raises into the host: a store failure lands in the report."""
    say(store, ("user", "Never commit directly to main."))

    class Broken:
        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def list_events(self, *args: Any, **kwargs: Any) -> list[Event]:
            raise OSError("disk gone")

    report = run_extraction(Broken(), SESSION, CONFIG)  # type: ignore[arg-type]
    assert report.errors == ["OSError: disk gone"] and items(store) == []


def test_extract_text_is_pure_and_repeatable() -> None:
    """the same text always gives the same candidates, with no store involved."""
    text = "不对，部署改用 Kubernetes，Compose 只在本地开发用。"
    first = extract_text(text)
    assert first == extract_text(text)
    assert [(c.kind, c.content) for c in first.candidates] == [
        ("decision", "部署改用 Kubernetes"),
        ("constraint", "Compose 只在本地开发用"),
    ]
    assert first.candidates[0].correction is not None


@pytest.mark.parametrize(
    "text",
    [
        " ".join(str(n) for n in range(4000))[:20_000],
        ("Keep p95 under 200 ms when the cache is warm.\n" * 900)[:20_000],
        ("我们决定用的是在的时候情况下" * 1500)[:20_000],
        "\x00\ud800 must \udfff never 3000元" * 50,
        "(" * 5000 + "预算不超过3000元" + ")" * 5000,
        "```\n" + "x = 1\n" * 3000,
    ],
    ids=["digits", "repeated-rule", "unpunctuated-zh", "nul-surrogates", "parens", "code"],
)
def test_large_and_garbage_text_is_bounded(text: str) -> None:
    """any text up to the stored maximum extracts without raising, at most 100 candidates."""
    for role in ("user", "assistant"):
        extraction = extract_text(normalize_text(text), role)
        assert len(extraction.candidates) <= 100
        assert len({(c.kind, c.content) for c in extraction.candidates}) == len(
            extraction.candidates
        )


def test_a_bare_number_does_not_correct_an_unrelated_item(store: InMemoryStore) -> None:
    """`use port 8080, not 3000` must not supersede a budget of 3000元: only the number is shared."""
    say(store, ("user", "预算不超过3000元（含税）"))
    run_extraction(store, SESSION, CONFIG)
    say(store, ("user", "use port 8080, not 3000"))
    run_extraction(store, SESSION, CONFIG)
    budget = one(store, "3000元")
    assert budget.status == "active" and budget.superseded_by is None


def test_a_bare_number_corrects_the_item_with_the_same_subject(store: InMemoryStore) -> None:
    """The same correction does replace an earlier port 3000, beside an untouched budget."""
    say(store, ("user", "预算不超过3000元（含税）"))
    say(store, ("user", "Let's run the admin server on port 3000"))
    run_extraction(store, SESSION, CONFIG)
    say(store, ("user", "use port 8080, not 3000"))
    run_extraction(store, SESSION, CONFIG)
    assert one(store, "port 3000").status == "superseded"
    assert one(store, "3000元").status == "active"


def test_a_status_label_is_not_part_of_the_progress(store: InMemoryStore) -> None:
    """`Progress: X and Y are done` records `X and Y` as done, without the label."""
    say(store, ("user", "Progress: the extractor and the Parquet writer are done."))
    say(store, ("user", "进展：数据导出已经完成了"))
    run_extraction(store, SESSION, CONFIG)
    state = store.get_task_state(SESSION)
    assert state is not None
    assert state.progress == ("the extractor and the Parquet writer", "数据导出")
