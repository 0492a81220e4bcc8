"""Word lists for `numbers`: units, comparator cues and names whose numbers are versions."""

from __future__ import annotations

import re
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import CJK_CLASS


def _longest_first(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    # Longer spellings must win ("ms" before "m", "个月" before "个").
    return tuple(sorted(pairs, key=lambda pair: (-len(pair[0]), pair[0])))


# Units written right after the digits, case-sensitive ("5m" is minutes, "5M" is MB).
ATTACHED_UNITS: Final = _longest_first(
    [
        ("ms", "ms"),
        ("s", "s"),
        ("sec", "s"),
        ("secs", "s"),
        ("m", "min"),
        ("min", "min"),
        ("mins", "min"),
        ("h", "h"),
        ("hr", "h"),
        ("hrs", "h"),
        ("d", "day"),
        ("B", "B"),
        ("KB", "KB"),
        ("kB", "KB"),
        ("kb", "KB"),
        ("KiB", "KiB"),
        ("MB", "MB"),
        ("mb", "MB"),
        ("M", "MB"),
        ("MiB", "MiB"),
        ("GB", "GB"),
        ("gb", "GB"),
        ("G", "GB"),
        ("GiB", "GiB"),
        ("TB", "TB"),
        ("tb", "TB"),
        ("%", "%"),
        ("x", "x"),
        ("×", "x"),
        ("px", "px"),
        ("fps", "fps"),
        ("rps", "req/s"),
        ("qps", "qps"),
        ("QPS", "qps"),
        ("tps", "tps"),
        ("TPS", "tps"),
        ("°C", "°C"),
        ("℃", "°C"),
    ]
)
# Units written after one space, matched without case.
SPACED_UNITS: Final = _longest_first(
    [
        ("milliseconds", "ms"),
        ("millisecond", "ms"),
        ("msec", "ms"),
        ("ms", "ms"),
        ("seconds", "s"),
        ("second", "s"),
        ("secs", "s"),
        ("sec", "s"),
        ("s", "s"),
        ("minutes", "min"),
        ("minute", "min"),
        ("mins", "min"),
        ("min", "min"),
        ("hours", "h"),
        ("hour", "h"),
        ("hrs", "h"),
        ("hr", "h"),
        ("h", "h"),
        ("days", "day"),
        ("day", "day"),
        ("weeks", "week"),
        ("week", "week"),
        ("months", "month"),
        ("month", "month"),
        ("years", "year"),
        ("year", "year"),
        ("bytes", "B"),
        ("byte", "B"),
        ("kib", "KiB"),
        ("mib", "MiB"),
        ("gib", "GiB"),
        ("kb", "KB"),
        ("mb", "MB"),
        ("gb", "GB"),
        ("tb", "TB"),
        ("percent", "%"),
        ("per cent", "%"),
        ("pct", "%"),
        ("%", "%"),
        ("dollars", "USD"),
        ("dollar", "USD"),
        ("usd", "USD"),
        ("euros", "EUR"),
        ("euro", "EUR"),
        ("eur", "EUR"),
        ("rmb", "元"),
        ("cny", "元"),
        ("yuan", "元"),
        ("req/s", "req/s"),
        ("rps", "req/s"),
        ("qps", "qps"),
        ("tps", "tps"),
        ("px", "px"),
        ("fps", "fps"),
        ("元", "元"),
    ]
)
# Chinese units and measure words; a Chinese numeral counts only before one of these.
MEASURE_WORDS: Final = dict(
    _longest_first(
        [
            ("毫秒", "ms"),
            ("秒钟", "s"),
            ("秒", "s"),
            ("分钟", "min"),
            ("个小时", "h"),
            ("小时", "h"),
            ("钟头", "h"),
            ("天", "day"),
            ("个星期", "week"),
            ("星期", "week"),
            ("周", "week"),
            ("个月", "month"),
            ("年", "year"),
            ("字节", "B"),
            ("块钱", "元"),
            ("元", "元"),
            ("块", "元"),
            ("人民币", "元"),
            ("美元", "USD"),
            ("美金", "USD"),
            ("欧元", "EUR"),
            ("倍", "x"),
            ("像素", "px"),
            ("个", "个"),
            ("次", "次"),
            ("条", "条"),
            ("人", "人"),
            ("名", "名"),
            ("位", "位"),
            ("台", "台"),
            ("行", "行"),
            ("字符", "字符"),
            ("字", "字"),
            ("页", "页"),
            ("张", "张"),
            ("份", "份"),
            ("项", "项"),
            ("轮", "轮"),
            ("遍", "遍"),
            ("层", "层"),
            ("步", "步"),
            ("核", "核"),
            ("线程", "线程"),
            ("副本", "副本"),
            ("节点", "节点"),
            ("帧", "帧"),
            ("件", "件"),
            ("篇", "篇"),
            ("岁", "岁"),
            ("度", "度"),
            ("套", "套"),
            ("组", "组"),
            ("批", "批"),
            ("笔", "笔"),
            ("并发", "并发"),
            ("万", "万"),
        ]
    )
)
CURRENCY_PREFIX: Final = {"$": "USD", "¥": "元", "￥": "元", "€": "EUR", "£": "GBP"}

# Words that end a counted noun after a number ("4 spaces for ..." stops at "for").
_NOUN_STOP_TEXT: Final = """
    a an the and or but nor of to in on at for with without by from per than then when if
    unless while during until is are was were be been being will would should can could
    must may might shall so as it its that this these those which who not no each every
    max maximum min minimum tops total instead rather before after since over under above
    below up down into out via because i we you they he she our my your their do does did
    has have had next last ago later earlier now only just also too please ok okay yes
    either both all any some more less fewer most least about around roughly approximately
    exactly between where what how why there here
    """
NOUN_STOP: Final = frozenset(_NOUN_STOP_TEXT.split())

# Names followed by a version, not a quantity: "Python 3.11", "Node 20", "ISO 8601".
VERSIONED_NAMES: Final = (
    r"python|node(?:\.?js)?|postgres(?:ql)?|mysql|mariadb|java|jdk|jre|openjdk|golang|ruby|"
    r"rails|php|perl|rust|swift|kotlin|scala|dotnet|ios|android|windows|macos|osx|ubuntu|"
    r"debian|centos|rhel|fedora|alpine|django|flask|fastapi|react|vue|angular|svelte|"
    r"nextjs|nuxt|spring boot|gcc|clang|llvm|redis|kafka|spark|hadoop|elasticsearch|"
    r"kubernetes|k8s|helm|terraform|ansible|cuda|tls|ssl|http|html|css|ecmascript|"
    r"typescript|webpack|vite|babel|eslint|jest|pytest|numpy|pandas|tensorflow|pytorch|"
    r"torch|gpt|llama|qwen|deepseek|claude|gemini|mongodb|sqlite|duckdb|clickhouse|"
    r"openssl|nginx|tomcat|jquery|bootstrap|tailwind|unicode|utf|iso|rfc|pep|ieee|ipv|"
    r"oauth|errno|version|sdk|chrome|firefox|safari|gradle|maven|xcode|vscode|linux|lts|"
    r"ecma|sha|emacs|vim|excel|office|jira|python3"
)

_END = r"\s*$"
# Cues right before a number (a few filler characters allowed in Chinese), checked in order.
EN_COMPARATORS: Final = tuple(
    (lazy_compile(pattern + _END, re.IGNORECASE), comparator)
    for pattern, comparator in (
        (
            r"\b(?:no more than|not more than|no greater than|not greater than|no higher than|"
            r"no longer than|at most|up to|not to exceed|(?:not|never) exceed(?:ing)?|within|"
            r"under|below|less than or equal to|max(?:imum)?(?: of)?|capped at|tops|"
            r"cap(?:ped)?\b[^.,;]{0,30}\bat|limited to|limit (?:it|them|this|that) to|"
            r"(?:max(?:imum)?|upper limit)\b[\w\s\-]{0,30}?\b(?:is|of|=|:))",
            "<=",
        ),
        (r"(?:≤|<=)", "<="),
        (
            r"\b(?:at least|no less than|not less than|no fewer than|not fewer than|"
            r"(?:a )?minimum(?: of)?|min(?: of)?|greater than or equal to|"
            r"(?:min(?:imum)?|lower limit)\b[\w\s\-]{0,30}?\b(?:is|of|=|:))",
            ">=",
        ),
        (r"(?:≥|>=)", ">="),
        (r"\b(?:less than|fewer than|lower than|smaller than|shorter than)", "<"),
        (r"(?<![<>=\-])<", "<"),
        (
            r"\b(?:more than|greater than|higher than|longer than|over|above|exceeds?|"
            r"exceeding|beyond)",
            ">",
        ),
        (r"(?<![<>=\-])>", ">"),
        (r"\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|some)|[~≈]", "~"),
        (r"\b(?:exactly|equal to)|(?<![<>=!])=", "="),
        (r"\bbetween", "between"),
    )
)
_GAP = rf"[{CJK_CLASS}]{{0,3}}"
ZH_COMPARATORS: Final = tuple(
    (lazy_compile("(?:" + pattern + ")" + _GAP + _END), comparator)
    for pattern, comparator in (
        (
            "不超过|不能超过|不可以超过|不可超过|不得超过|不要超过|不应超过|不允许超过|"
            "不高于|不能高于|不大于|不多于|最多|至多|最高|上限|控制在|限制在|限定在|封顶",
            "<=",
        ),
        ("至少|最少|不少于|不低于|不能低于|不能少于|起码|最低|下限|不小于", ">="),
        ("低于|小于|少于|不到|不足", "<"),
        ("超过|大于|高于|多于|超出", ">"),
        ("大约|大概|约|差不多|将近|接近", "~"),
        ("等于|正好|刚好", "="),
    )
)
# Cues right after a number and its unit.
EN_SUFFIX_COMPARATORS: Final = (
    (
        lazy_compile(
            r"\s*(?:or less|or fewer|or below|or under|at most|max(?:imum)?|tops)\b", re.I
        ),
        "<=",
    ),
    (lazy_compile(r"\s*(?:or more|or above|or greater|at least|minimum)\b|\+", re.I), ">="),
    (lazy_compile(r"\s*(?:or so\b|-?ish\b)", re.I), "~"),
)
ZH_SUFFIX_COMPARATORS: Final = (
    (lazy_compile(r"\s*(?:以内|之内|以下|封顶|内)"), "<="),
    (lazy_compile(r"\s*以上"), ">="),
    (lazy_compile(r"\s*(?:左右|上下|前后)"), "~"),
)
