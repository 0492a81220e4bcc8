"""A deterministic synthetic conversation corpus and query mix for the search benchmarks."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from lcm_core.store.models import Event, MemoryItem
from lcm_core.text.tokens import fingerprint, stable_item_id, tokenize

_WORDS: Final = [
    "deploy",
    "staging",
    "production",
    "database",
    "migration",
    "schema",
    "index",
    "query",
    "cache",
    "redis",
    "postgres",
    "docker",
    "compose",
    "kubernetes",
    "nginx",
    "proxy",
    "budget",
    "hotel",
    "flight",
    "train",
    "ticket",
    "invoice",
    "customer",
    "report",
    "deadline",
    "friday",
    "monday",
    "meeting",
    "review",
    "release",
    "notes",
    "branch",
    "commit",
    "rebase",
    "merge",
    "conflict",
    "test",
    "failure",
    "timeout",
    "retry",
    "latency",
    "memory",
    "python",
    "module",
    "import",
    "function",
    "class",
    "method",
    "error",
    "warning",
    "config",
    "setting",
    "token",
    "user",
    "assistant",
    "tool",
    "result",
    "message",
    "summary",
    "decision",
    "constraint",
    "preference",
]
_FILLER: Final = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "for",
    "in",
    "on",
    "with",
    "we",
    "should",
    "can",
    "will",
    "is",
    "it",
    "this",
    "that",
]
_CHINESE: Final = (
    "预算不超过三千元",
    "周五前把数据库迁移到预发布环境",
    "酒店需要含早餐并且靠近车站",
    "请不要在生产环境直接修改配置",
    "客户希望下周一之前收到报告",
    "测试失败是因为超时重试次数太少",
    "我们决定使用缓存来降低延迟",
    "会议改到周三下午三点",
)
_TYPES: Final = ("user/message", "assistant/message", "tool/call", "tool/result")

# Queries as a user would type them; the benchmark derives terms with the core tokenizer,
# as retrieval does. The mix covers English, Chinese, mixed script, ids and short terms.
QUERIES: Final = (
    "what was the budget for the hotel",
    "deploy to staging before friday",
    "postgres migration schema index",
    "redis cache latency timeout",
    "预算不超过多少",
    "数据库迁移到预发布环境",
    "把 postgres 迁移 到 staging",
    "酒店 hotel 车站",
    "w123",
    "ticket 4711",
    "db ui",
    "v2",
    "3000",
    "nginx proxy config error",
    "客户 report 周一",
    "zyxwvut never appears",
)


@dataclass(frozen=True, slots=True)
class Corpus:
    """Events and memory items of several sessions, plus the session the queries target."""

    events: list[Event]
    items: list[MemoryItem]
    sessions: tuple[str, ...]


def _sentence(rng: random.Random, seq: int) -> str:
    """One event text: mostly English, some Chinese or mixed, with ids and numbers."""
    roll = rng.random()
    words = [
        rng.choice(_WORDS if rng.random() < 0.6 else _FILLER) for _ in range(rng.randint(6, 18))
    ]
    if rng.random() < 0.3:
        words.append(f"w{rng.randint(1, 999)}")
    if rng.random() < 0.3:
        words.append(str(rng.choice((3000, 4711, 8080, 2025, rng.randint(1, 99999)))))
    if rng.random() < 0.1:
        words.append(rng.choice(("db", "ui", "v2", "id", "ok")))
    english = " ".join(words)
    if roll < 0.12:
        return rng.choice(_CHINESE) + f"（第{seq % 97}条）"
    if roll < 0.22:
        return f"{rng.choice(_CHINESE)} {english}"
    return english.capitalize() + "."


def make_corpus(n_events: int, *, n_sessions: int = 10, seed: int = 7) -> Corpus:
    """`n_events` events over `n_sessions` sessions and one memory item per ten events."""
    rng = random.Random(seed)
    sessions = tuple(f"bench-{i:02d}" for i in range(n_sessions))
    per_session = max(1, n_events // n_sessions)
    events: list[Event] = []
    items: list[MemoryItem] = []
    seen: set[str] = set()
    for index in range(n_events):
        session = sessions[min(index // per_session, n_sessions - 1)]
        seq = index - sessions.index(session) * per_session
        text = _sentence(rng, seq)
        events.append(
            Event(session_id=session, seq=seq, type=rng.choice(_TYPES), text=text, turn=seq // 8)
        )
        if index % 10 == 0:
            item_id = stable_item_id(session, "fact", text)
            if item_id not in seen:
                seen.add(item_id)
                items.append(
                    MemoryItem(
                        id=item_id,
                        session_id=session,
                        kind="fact",
                        content=text,
                        content_hash=fingerprint(text),
                        source_refs=(f"seq:{seq}",),
                        derived_from_seq=seq,
                    )
                )
    return Corpus(events, items, sessions)


def query_terms() -> list[list[str]]:
    """The query mix as term lists, derived with the core tokenizer."""
    return [tokenize(query) for query in QUERIES]
