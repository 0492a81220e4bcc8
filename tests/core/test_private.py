"""Private spans and patterns: what `<private>` hides, and how capture and assembly apply it."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.step import StepMessage
from lcm_core.capture.events import capture_batch
from lcm_core.capture.private import Scrubber
from lcm_core.capture.rows import ParsedRow, ParseResult
from lcm_core.config import load_config
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import Event
from lcm_core.text.private import PLACEHOLDER, hide_private, hide_tagged
from lcm_core.text.tokens import sha256_hex


def parse(session_id: str, raw: Any, *, ingested_at: str, archive_limit: int) -> ParseResult:
    """A host whose events are `(seq, text)`; long text is also archived whole."""
    seq, text = raw
    event = Event(session_id, seq, "user/message", text[:20_000], content_hash=sha256_hex(text))
    return ParseResult(rows=(ParsedRow(event, text if len(text) > 20_000 else None),), seq=seq)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no tags here", "no tags here"),
        ("key <private>hunter2</private> ok", f"key {PLACEHOLDER} ok"),
        ("密码是<private>蓝色大象42</private>，记住端口8080", f"密码是{PLACEHOLDER}，记住端口8080"),
        (
            "a <PRIVATE>x</Private> b < private >y< / private > c",
            f"a {PLACEHOLDER} b {PLACEHOLDER} c",
        ),
        (
            "outer <private>a <private>b</private> still hidden</private> shown",
            f"outer {PLACEHOLDER} shown",
        ),
        ("stray </private> stays", "stray </private> stays"),
        ("from here <private>秘密一直到最后 tail-777", f"from here {PLACEHOLDER}"),
        ("<private></private>", PLACEHOLDER),
        ("x <private>a\nb\nc</private>\ny", f"x {PLACEHOLDER}\ny"),
    ],
)
def test_tagged_spans_are_hidden(text: str, expected: str) -> None:
    """Spans (nested, any case, spaced, multi-line) become one placeholder; an unclosed one runs to the end."""
    assert hide_tagged(text) == expected


def test_patterns_apply_after_tags_and_bad_ones_are_warned() -> None:
    """A configured regex hides its matches; a broken one is a config warning, never an error."""
    assert hide_private("ticket ACME-1234 for 张三", ["ACME-\\d{4}", "张三"]) == (
        f"ticket {PLACEHOLDER} for {PLACEHOLDER}"
    )
    config = load_config({"capture": {"privatePatterns": ["ACME-\\d+", "(", "", "a*"]}})
    assert config.capture.private_patterns == ("ACME-\\d+",)
    assert len(config.warnings) == 3
    assert all("capture.privatePatterns" in w for w in config.warnings)


def test_scrubber_redacts_only_when_asked() -> None:
    """`capture.redact` adds secret redaction; it is off by default."""
    key = "sk-proj-" + "A1b2C3d4" * 4
    text = f"use {key} <private>and this</private>"
    assert Scrubber.of(load_config()).text(text) == f"use {key} {PLACEHOLDER}"
    redacted = Scrubber.of(load_config({"capture": {"redact": True}})).text(text)
    assert key not in redacted and "[REDACTED:" in redacted and PLACEHOLDER in redacted


def test_capture_stores_the_placeholder_and_its_hash() -> None:
    """The stored event keeps the placeholder; its hash is of the stored text, not the clear text."""
    store = InMemoryStore()
    long_tail = "尾" * 30_000
    events = [(0, "口令 <private>蓝色大象42</private> 端口 8080"), (1, f"x <private>{long_tail}")]
    report = capture_batch(store, "s", events, load_config(), parse=parse)
    assert report.inserted == 2
    first, second = store.list_events("s")
    assert first.text == f"口令 {PLACEHOLDER} 端口 8080"
    assert first.content_hash == sha256_hex(first.text)
    assert second.text == f"x {PLACEHOLDER}"
    archived = store.get_archive("s", "seq:1")
    assert archived is not None and archived.text == f"x {PLACEHOLDER}"


def test_assembly_never_logs_the_private_query() -> None:
    """A step's not-yet-captured message is read scrubbed: the logged query holds the placeholder."""
    store = InMemoryStore()
    capture_batch(store, "s", [(0, "The port is 8080.")], load_config(), parse=parse)
    message = StepMessage("user", "which port? <private>zebra-quartz-981 斑马石英</private>")
    result = assemble(store, "s", [message], load_config())
    query = next(r for r in result.reasons if r["kind"] == "query")
    assert "zebra" not in query["text"] and "斑马" not in query["text"]
    assert "zebra" not in " ".join(query["terms"])
