"""Rule types of `gen_conventions.py`: what each convention governs and the values it can take.

A rule type is a subject key (`naming/method/suffix`, `decorator/class`, `port/staging-db`)
and a family: the family names the phrase table that states it and the values it takes.
A value carries every way a sentence may write it (quoted, in backticks, bare, English or
Chinese units) and, for each, the strings a memory block must contain to show it. Keyword
families (docstrings, asserts, ...) have no value: their phrases mark the word to show.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

# A written form of a value: the text a sentence holds and the strings that show it.
Form = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Value:
    """One value of a rule: its canonical text and its written forms per language."""

    canonical: str
    en: tuple[Form, ...]
    zh: tuple[Form, ...]

    def texts(self) -> list[str]:
        """Every string a sentence or a block may hold for this value (for clash checks)."""
        out = [self.canonical]
        for text, show in (*self.en, *self.zh):
            out.append(text)
            out.extend(show[:1])
        return out


@dataclass(frozen=True)
class Family:
    """A kind of rule: its phrase table, whether it is a constraint, its topic per language."""

    name: str
    constraint: bool = False
    topic_en: str = ""
    topic_zh: str = ""
    keyword: bool = False  # no value: the phrase marks the word to show with [[...]]


@dataclass(frozen=True)
class RuleType:
    """A subject key and its family; `target` names what a naming or code rule applies to."""

    key: str
    family: Family
    target: str = ""  # a key of TARGETS or SERVICES


# Targets: (English singular, English plural, Chinese).
TARGETS = {
    "variable": ("variable", "variables", "变量"),
    "function": ("function", "functions", "函数"),
    "method": ("method", "methods", "方法"),
    "class": ("class", "classes", "类"),
    "attribute": ("attribute", "attributes", "属性"),
    "argument": ("function argument", "function arguments", "函数参数"),
    "constant": ("constant", "constants", "常量"),
}
SERVICES = {
    "staging-db": ("the staging database", "staging 数据库"),
    "api": ("the API server", "API 服务"),
}


def _fam(name: str, topic_en: str = "", topic_zh: str = "", **flags: bool) -> Family:
    return Family(name, topic_en=topic_en, topic_zh=topic_zh, **flags)


FAMILIES = {
    f.name: f
    for f in (
        _fam("naming/prefix", "the prefix of {t} names", "{t}名的前缀"),
        _fam("naming/suffix", "how {t} names end", "{t}名的结尾"),
        _fam("naming/digit", keyword=True),
        _fam("naming/case", "the casing of {t} names", "{t}名的大小写风格"),
        _fam("docstrings", keyword=True),
        _fam("annotations", keyword=True),
        _fam("decorator", "the {t} decorator", "{t}的装饰器"),
        _fam("import", "the module every file imports", "每个文件都要导入的模块"),
        _fam("assert", keyword=True),
        _fam("try", keyword=True),
        _fam("comments", keyword=True),
        _fam("linter", "the linter", "代码检查工具"),
        _fam("formatter", "the formatter", "格式化工具"),
        _fam("editor", "the editor", "编辑器"),
        _fam("branch", "branch names", "分支命名"),
        _fam("commit", "commit messages", "提交信息的格式"),
        _fam("tests", "the test framework", "测试框架"),
        _fam("logging", "log output", "日志输出"),
        _fam("indent", "indentation", "缩进"),
        _fam("line-length", "line length", "行长度"),
        _fam("reviewer", "code reviews", "代码评审"),
        _fam("budget", "the budget", "预算", constraint=True),
        _fam("port", "the port of {svc}", "{svc}的端口", constraint=True),
        _fam("batch-size", "the batch size", "批大小", constraint=True),
        _fam("timeout", "the timeout", "超时时间", constraint=True),
        _fam("latency", "the latency target", "延迟要求", constraint=True),
        _fam("deadline", "the deadline", "截止日期", constraint=True),
    )
}


def _types() -> tuple[RuleType, ...]:
    out: list[RuleType] = []
    for target in TARGETS:
        for kind in ("prefix", "suffix", "digit", "case"):
            out.append(RuleType(f"naming/{target}/{kind}", FAMILIES[f"naming/{kind}"], target))
    for family, targets in (
        ("docstrings", ("function", "method", "class")),
        ("annotations", ("function", "method")),
        ("decorator", ("function", "method", "class")),
        ("assert", ("function", "method")),
        ("try", ("function", "method")),
    ):
        out.extend(RuleType(f"{family}/{t}", FAMILIES[family], t) for t in targets)
    for key, family in (
        ("import", "import"), ("comments", "comments"), ("linter", "linter"),
        ("formatter", "formatter"), ("editor", "editor"), ("vcs/branch", "branch"),
        ("vcs/commit", "commit"), ("tests/framework", "tests"), ("logging", "logging"),
        ("indent", "indent"), ("line-length", "line-length"), ("reviewer", "reviewer"),
        ("budget", "budget"), ("batch-size", "batch-size"), ("timeout", "timeout"),
        ("latency", "latency"), ("deadline", "deadline"),
    ):  # fmt: skip
        out.append(RuleType(key, FAMILIES[family]))
    out.extend(RuleType(f"port/{svc}", FAMILIES["port"], svc) for svc in SERVICES)
    return tuple(out)


RULE_TYPES = _types()

# Raw values per family. Prefixes and suffixes are split between dev and test (even and
# odd places) so the two splits also differ in the values an extractor may have memorised.
PREFIXES = ("x_", "wr_", "b_", "mk_", "q_", "zt_", "h_", "gn_", "y_", "vr_", "d_", "fx_",
            "n_", "kl_", "e_", "jo_", "s_", "pw_", "c_", "ub_", "i_", "tq_", "o_", "rv_")  # fmt: skip
SUFFIXES = ("_p", "_x", "_j", "_vr", "_m", "_q", "_z", "_at", "_d", "_y", "_b", "_fn",
            "_w", "_t", "_n", "_g", "_k", "_s", "_e", "_h", "_c", "_ox", "_r", "_ul")  # fmt: skip
CASES = {
    "class": ("CamelCase", "PascalCase"),
    "constant": ("ALL_CAPS", "UPPER_SNAKE_CASE"),
}
CASES_DEFAULT = ("snake_case", "camelCase", "lowercase")
TOKENS = {
    "decorator": ("@timer", "@count_calls", "@retry", "@trace", "@log_calls", "@validate",
                  "@cache_result", "@rename_kwargs", "@require_kwargs", "@memoize",
                  "@profile", "@deprecated_guard"),
    "decorator/class": ("@dataclass", "@total_ordering", "@register", "@singleton",
                        "@auto_repr", "@frozen_model", "@serializable", "@tracked"),
    "import": ("hashlib", "secrets", "gzip", "bz2", "locale", "mailbox", "heapq", "bisect",
               "itertools", "functools", "operator", "pathlib", "collections", "statistics",
               "uuid", "zlib", "pprint", "textwrap"),
    "linter": ("flake8", "pylint", "ruff", "pyflakes", "pycodestyle", "bandit", "pyright",
               "prospector"),
    "formatter": ("black", "yapf", "autopep8", "isort", "docformatter", "pyupgrade"),
    "editor": ("VS Code", "PyCharm", "Vim", "Emacs", "Sublime Text", "Zed", "Helix",
               "JupyterLab", "Spyder", "Kate"),
    "branch": ("feature/", "feat-", "topic/", "dev-", "wip/", "task-", "story/", "ticket-"),
    "commit": ("Conventional Commits", "gitmoji", "Angular-style", "ticket-first"),
    "tests": ("pytest", "unittest", "nose2", "hypothesis", "doctest", "testtools"),
    "logging": ("loguru", "structlog", "logbook", "eliot", "picologging"),
    "reviewer": ("Kevin", "Priya", "Tomasz", "Aiko", "Mehmet", "Ingrid", "Kwame", "Lucia",
                 "Dmitri", "Fatima", "Haruto", "Zanele", "Oskar", "Grace"),
}  # fmt: skip
INDENTS = (
    ("4 spaces", ("4 spaces", "four spaces"), ("4 个空格", "四个空格")),
    ("2 spaces", ("2 spaces", "two spaces"), ("2 个空格", "两个空格")),
    ("tabs", ("tabs", "tab characters"), ("Tab 键", "制表符")),
    ("3 spaces", ("3 spaces", "three spaces"), ("3 个空格", "三个空格")),
)
# Numbers with their English and Chinese unit forms.
MEASURES = {
    "line-length": ((72, 79, 80, 88, 99, 100, 110, 119, 120),
                    ("{n} characters", "{n} chars"), ("{n} 个字符", "{n} 字符")),
    "batch-size": ((50, 100, 200, 250, 400, 500, 750, 800, 1000, 1500, 2000, 5000),
                   ("{n} rows", "{n} records"), ("{n} 条", "{n} 行")),
    "timeout": ((5, 8, 10, 15, 20, 30, 45, 60, 90, 120),
                ("{n} seconds", "{n}s"), ("{n} 秒", "{n}秒")),
    "latency": ((50, 80, 120, 150, 200, 250, 300, 400, 600),
                ("{n} ms", "{n}ms"), ("{n} 毫秒", "{n}ms")),
}  # fmt: skip
# Budget conditions (English, Chinese); a rule keeps its condition across versions.
CONDITIONS = (("before tax", "税前"), ("including tax", "含税"), ("excluding VAT", "不含增值税"),
              ("per month", "每月"))  # fmt: skip
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip


def _quoted(raw: str) -> Value:
    """A short identifier part: shown with the quotes it is written in; bare only when long."""
    en = [(f"'{raw}'", (f"'{raw}'",)), (f"`{raw}`", (f"`{raw}`",)), (f'"{raw}"', (f'"{raw}"',))]
    zh = [(f"'{raw}'", (f"'{raw}'",)), (f"`{raw}`", (f"`{raw}`",)), (f"“{raw}”", (f"“{raw}”",))]
    if len(raw) >= 3:
        en.append((raw, (raw,)))
        zh.append((raw, (raw,)))
    return Value(raw, tuple(en), tuple(zh))


def _token(raw: str) -> Value:
    """A name (decorator, module, tool, person): written bare or in backticks, shown bare."""
    forms = ((raw, (raw,)), (f"`{raw}`", (raw,)))
    return Value(raw, forms, forms)


def _measure(canonical: str, en: tuple[str, ...], zh: tuple[str, ...]) -> Value:
    return Value(canonical, tuple((t, (t,)) for t in en), tuple((t, (t,)) for t in zh))


def _budget(amount: int, currency: str, condition: tuple[str, str]) -> Value:
    cond_en, cond_zh = condition
    if currency == "USD":
        short = [f"${amount // 1000}k"] if amount % 1000 == 0 else []
        en_amounts = [f"${amount:,}", *short]
        zh_amounts = [f"{amount}美元", f"{amount} 美元"]
    else:
        en_amounts = [f"{amount} yuan", f"¥{amount:,}"]
        zh_amounts = [f"{amount}元", f"{amount} 元"]
    en = tuple((f"{a} {cond_en}", (a, cond_en)) for a in en_amounts)
    zh = tuple((f"{a} {cond_zh}", (a, cond_zh)) for a in zh_amounts)
    return Value(f"{amount} {currency} {cond_en}", en, zh)


def _date(day: dt.date) -> Value:
    en = f"{MONTHS[day.month - 1]} {day.day}"
    zh = f"{day.month}月{day.day}日"
    return Value(day.isoformat(), ((en, (en,)),), ((zh, (zh,)),))


def value_pool(rule: RuleType, rng: random.Random, split: str, start: dt.date) -> list[Value]:
    """The candidate values of one rule, in a random order (keyword rules have none)."""
    name = rule.family.name
    half = 0 if split == "dev" else 1
    if name in ("naming/prefix", "naming/suffix"):
        raw = PREFIXES if name == "naming/prefix" else SUFFIXES
        pool = [_quoted(v) for v in raw[half::2]]
    elif name == "naming/case":
        pool = [_token(v) for v in CASES.get(rule.target, CASES_DEFAULT)]
    elif name == "decorator":
        pool = [_token(v) for v in TOKENS["decorator/class" if rule.target == "class" else name]]
    elif name in TOKENS:
        pool = [_token(v) for v in TOKENS[name]]
    elif name == "indent":
        pool = [_measure(c, en, zh) for c, en, zh in INDENTS]
    elif name in MEASURES:
        numbers, en_units, zh_units = MEASURES[name]
        pool = [
            _measure(en_units[0].format(n=n), tuple(u.format(n=n) for u in en_units),
                     tuple(u.format(n=n) for u in zh_units))
            for n in numbers
        ]  # fmt: skip
    elif name == "port":
        pool = [_measure(str(p), (str(p),), (str(p),)) for p in rng.sample(range(2001, 9990), 12)]
    elif name == "budget":
        currency = "CNY" if rng.random() < 0.4 else "USD"
        condition = rng.choice(CONDITIONS)
        step, low, high = (500, 2, 60) if currency == "CNY" else (500, 4, 40)
        amounts = rng.sample([step * k for k in range(low, high)], 10)
        pool = [_budget(a, currency, condition) for a in amounts]
    elif name == "deadline":
        days = rng.sample(range(30, 120), 8)
        pool = [_date(start + dt.timedelta(days=d)) for d in days]
    else:
        return []
    rng.shuffle(pool)
    return pool


# The `value` a keyword rule records: what it asks for.
KEYWORD_VALUES = {
    "naming/digit": "single digit",
    "docstrings": "docstrings",
    "annotations": "type annotations",
    "assert": "assert statements",
    "try": "try/except blocks",
    "comments": "comments",
}
