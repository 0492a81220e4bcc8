"""benchmarks/lexical_probe.py: the plain ranker the pipeline is judged against."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from types import ModuleType


def options(**given: float) -> argparse.Namespace:
    values = {"b": 0.75, "context": 0.0, "episode": 0.0, "speaker": 0.0, **given}
    return argparse.Namespace(**values)


CHAT = {
    "id": "c",
    "turns": [
        {"id": "t0", "speaker": "user", "name": "Ana", "text": "I painted a sunset", "time": "2024-01-02"},
        {"id": "t1", "speaker": "user", "name": "Bo", "text": "I painted a lake", "time": "2024-01-02"},
        {"id": "t2", "speaker": "user", "name": "Bo", "text": "what did you cook?", "time": "2024-01-03"},
        {"id": "t3", "speaker": "user", "name": "Ana", "text": "咖喱饭", "time": "2024-01-03"},
    ],
    "questions": [],
}  # fmt: skip


def test_the_asked_turn_first_and_a_reply_carried_by_its_question(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    """The turn holding the question's words ranks first; a reply that shares none of them
    ("咖喱饭" answers "what did you cook?") rises only with the previous turn as context."""
    module = benchmark_script("lexical_probe")
    from lcm_core.bench.dataset import parse_line

    conv = parse_line(json.dumps(CHAT))
    assert module.rank(conv, "What did Ana paint?", options())[0] == 0
    assert module.rank(conv, "Who painted a lake?", options(speaker=1.0))[0] == 1
    no_context = module.rank(conv, "What did Ana cook?", options())
    with_context = module.rank(conv, "What did Ana cook?", options(context=0.5))
    assert with_context.index(3) < no_context.index(3)
