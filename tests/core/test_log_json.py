"""A log row's omissions are written by `rows.dumps_omitted`: the bytes `rows.dumps` writes,
whatever comes in, so explain reads back exactly what the canonical encoder would store."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.store import rows

OMISSIONS: list[list[Any]] = [
    [],
    [{"section": "evidence", "ref": "seq:12", "reason": "beyond retrieval.evidenceLimit 80"}],
    [
        {"section": "memory", "ref": "mem_1", "reason": 'a "quoted" \\ back\nslash\ttab'},
        {
            "section": "evidence",
            "ref": "seq:3",
            "reason": "预算不超过3000元（含税）\u2028 \x00 \x1f",
        },
        {"reason": "keys in another order", "section": "notice", "ref": "seq:4"},
        {"section": "evidence", "ref": "seq:5", "reason": "lone surrogate \ud800 and emoji 😂"},
    ],
    # Not omission-shaped: the generic encoder decides, and the bytes stay the same.
    [{"section": "evidence", "ref": "seq:1"}],
    [{"section": "evidence", "ref": "seq:1", "reason": "x", "extra": True}],
    [{"section": "evidence", "ref": 7, "reason": "a number as ref"}],
    [{"section": "evidence", "ref": "seq:1", "why": "other key"}],
    ["not a dict", {"section": "e", "ref": "r", "reason": "x"}],
]


@pytest.mark.parametrize("records", OMISSIONS)
def test_omissions_are_written_as_the_canonical_encoder_writes_them(records: list[Any]) -> None:
    assert rows.dumps_omitted(records) == rows.dumps(list(records))
    assert rows.dumps_omitted(tuple(records)) == rows.dumps(list(records))
