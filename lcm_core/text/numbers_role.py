"""Identifiers versus measurements: which stated numbers need a condition before use.

A port, a version, an id, a file, case, ticket or build number, a year in a name are
identifiers: they name something and are never "unconditional figures". Identifiers
that `numbers` keeps (ports, written "port 5433", "端口 5433", "host:5433") carry the
unit `port`; the others are not parsed as quantities at all (see `identifier_before`).
A measurement (latency, budget, percentage, size, rate) without a condition or unit is
what the number warning is for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, Protocol

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.numbers_vocab import ATTACHED_UNITS, CURRENCY_PREFIX, SPACED_UNITS

IDENTIFIER_UNITS: Final = frozenset({"port"})
# Canonical units of measure (time, size, share, money); a counted noun ("attempts") is not one.
MEASURE_UNITS: Final = frozenset(
    {unit for _, unit in (*ATTACHED_UNITS, *SPACED_UNITS)} | set(CURRENCY_PREFIX.values())
)
# Words after which a number is an identifier ("issue 15", "case 7", "PR 312", "工单 7731").
_ID_TEXT_EN: Final = """issue issues ticket tickets case cases testcase pr prs mr mrs build builds id ids room
    rooms code codes line lines file files step steps item items release releases rev revision
    version versions v job jobs run runs order orders invoice invoices account accounts
    employee employees task tasks story stories epic epics sprint sprints commit commits
    chapter chapters section sections figure figures fig table tables node nodes shard shards
    partition partitions replica replicas page pages slide slides no number error errors
    status"""
_ID_WORDS_EN: Final = frozenset(_ID_TEXT_EN.split())
_ID_TEXT_ZH: Final = "工单 单号 订单号 编号 用例 案例 版本 版本号 第 号码 序号 行 文件 任务 需求 缺陷 错误码 状态码 房间 会议室 构建"
_ID_WORDS_ZH: Final = tuple(_ID_TEXT_ZH.split())
_ZH_LINKS: Final = ("是", "为", "号")
_PORT_VERBS: Final = (
    "listen on",
    "listens on",
    "listening on",
    "bind to",
    "binds to",
    "bound to",
    "exposed on",
)
_HOST_PORT: Final = lazy_compile(r"[A-Za-z][\w.-]*:$")
_LAST_WORD: Final = lazy_compile(r"([A-Za-z]+)\.?$")
_PORT_AFTER: Final = lazy_compile(r"\s*(?:端口|port\b)", re.IGNORECASE)
# A capitalised, hyphenated or digit-bearing name right before a decimal: a version.
_NAME_BEFORE: Final = lazy_compile(
    r"(?<![\w-])(?:[A-Z][\w.+-]*|[a-z][a-z0-9]*-[\w-]+|[A-Za-z]+\d[\w]*)\s?$"
)
_VERSION_AFTER: Final = lazy_compile(r"\s*(?:版本?|version\b|号(?!码)|期|届|年度)")
_YEAR: Final = lazy_compile(r"(?:19|20)\d\d")


def identifier_before(before: str) -> str | None:
    """How the text before a number marks it: "port" for a host:port, "id" for an id, or None.

    Plain string tests on the last few characters: this runs for every number read.
    """
    tail = before[-24:]
    if tail.endswith(":"):
        return "port" if _HOST_PORT.search(tail) else None
    bare = tail.rstrip()
    folded = bare.casefold()
    if folded.endswith(_PORT_VERBS) or _zh_tail(bare).endswith(("端口", "端口号")):
        return "port"
    word = _LAST_WORD.search(folded.rstrip("#").rstrip())
    if word is not None and word.group(1) in _ID_WORDS_EN:
        return "id"
    if folded.endswith(("no.", "#")) or bare.endswith(_ID_WORDS_ZH):
        return "id"
    if _zh_tail(bare).endswith(_ID_WORDS_ZH):
        return "id"
    return None


def _zh_tail(text: str) -> str:
    """Chinese text before a number without a linking word ("版本是 20", "端口为 80")."""
    stripped = text.rstrip()
    for link in ("改成", "改为", *_ZH_LINKS, "在"):
        if stripped.endswith(link):
            return stripped[: -len(link)].rstrip()
    return stripped


def identifier_after(after: str) -> bool:
    """A number followed by "版本" or "version" names a version, not an amount."""
    return bool(_VERSION_AFTER.match(after))


def port_after(after: str) -> bool:
    """ "跑在 8080 端口", "8443 port": the number names a port."""
    return bool(_PORT_AFTER.match(after))


def is_version_after_name(digits: str, before: str) -> bool:
    """ "dbt-core 1.8", "RabbitMQ 3.13", "TypeScript 5.4": a decimal right after a name."""
    return "." in digits and _NAME_BEFORE.search(before) is not None


def is_year_in_name(digits: str, unit: str | None, comparator: str | None) -> bool:
    """ "the 2024 roadmap", "Q3 2025 budget", "2025 年度预算": a year naming something."""
    if comparator is not None or _YEAR.fullmatch(digits) is None:
        return False
    return unit is None or " " in unit or (unit.isalpha() and unit.islower() and len(unit) > 3)


def is_identifier(number: dict[str, Any]) -> bool:
    """A stored number that names something (a port) rather than measuring it."""
    return number.get("unit") in IDENTIFIER_UNITS


class Numbered(Protocol):
    """What `flagged_numbers` reads of a memory item (text tools import no store model)."""

    @property
    def numbers(self) -> Sequence[dict[str, Any]]: ...

    @property
    def conditions(self) -> Sequence[str]: ...


def flagged_numbers(item: Numbered) -> list[dict[str, Any]]:
    """The measurements of an item that lack a condition or a unit; identifiers never are."""
    flagged: list[dict[str, Any]] = []
    for number in item.numbers:
        if is_identifier(number):
            continue
        has_conditions = bool(item.conditions) or bool(number.get("conditions"))
        if not has_conditions or not number.get("unit"):
            flagged.append(number)
    return flagged
