"""benchmarks/lexical_probe.py: the plain ranker the pipeline is judged against."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def probe() -> ModuleType:
    path = ROOT / "benchmarks" / "lexical_probe.py"
    spec = importlib.util.spec_from_file_location("lexical_probe", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


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


def test_the_asked_turn_first_and_a_reply_carried_by_its_question() -> None:
    """The turn holding the question's words ranks first; a reply that shares none of them
    ("咖喱饭" answers "what did you cook?") rises only with the previous turn as context."""
    module = probe()
    from lcm_core.bench.retrieval import parse_line

    conv = parse_line(json.dumps(CHAT))
    assert module.rank(conv, "What did Ana paint?", options())[0] == 0
    assert module.rank(conv, "Who painted a lake?", options(speaker=1.0))[0] == 1
    no_context = module.rank(conv, "What did Ana cook?", options())
    with_context = module.rank(conv, "What did Ana cook?", options(context=0.5))
    assert with_context.index(3) < no_context.index(3)
