"""Plain statements of fact: a subject bound to a value, and the key that names the subject.

"The staging database listens on port 6432" binds `staging database` (relation `where`)
to "port 6432"; "预发环境的数据库在 10.0.3.7 上" binds `预发环境的数据库` (`where`). Such a
clause is a fact even without a cue word. Two statements are about the same thing when
their subject keys are equal: the subject's content words, case-folded, without articles,
possessives, adverbs such as "now", and the relation's family (where, uses, owner, time,
is). A later statement with the same key and a new value replaces the earlier one; a
different subject ("prod database") or relation ("uses" vs "where") never does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import tokenize

# Relation families, each a list of verb phrases; longer phrases are tried first.
_RELATIONS_EN: Final = {
    "where": (
        "listens on|listen on|runs on|run on|runs in|run in|is running on|is hosted on|"
        "is hosted in|is hosted at|is hosted by|lives in|lives on|lives at|lives under|"
        "live in|live on|live under|is stored in|are stored in|is stored on|is kept in|"
        "are kept in|is deployed on|is deployed to|is deployed in|are deployed on|sits in|"
        "sits on|sits behind|is at|are at|is in|are in|is on|are on|is under|are under|"
        "points to|is reachable at|is available at|is exposed on"
    ),
    "time": "starts at|start at|runs at|is scheduled for|are scheduled for|happens at|is due",
    "uses": (
        "uses|use|is built with|is built on|are built with|is written in|are written in|"
        "relies on|depends on|talks to|goes through|is backed by|is configured in|"
        "is served by|is served from|"
        "is configured with"
    ),
    "owner": "owns|is owned by|is maintained by|maintains|is run by|is handled by",
    "does": (
        "tracks|adds|fixes|covers|handles|is tracked in|started|starts|is taking|takes classes in|"
        "attends|goes to|joined|works at|works on|works as|studies|plays|is learning|learns"
    ),
    "has": "has|have|takes|holds|contains|processes|keeps|are kept for|is kept for",
    "is": "is called|is named|is|are|was|were|means|equals",
}
_RELATIONS_ZH: Final = {
    "where": "跑在|部署在|运行在|托管在|位于|放在|存放在|存在|装在|在",
    "uses": "用的是|使用的是|使用|用|走|基于",
    "is": "叫做|叫|是|为",
    "has": "有|保留|大概要|大概|大约|约为|要",
}
_ADVERBS_EN: Final = (
    r"(?:(?:now|currently|still|also|actually|really|already|usually|just|recently)\s+)*"
)
_LEAD_EN: Final = (
    r"^\s*(?:(?:also|and|so|btw|fyi|oh|ok|okay|right|well|now|currently|today|note|"
    r"for the record)\b[\s,:]*)*"
)
_DETERMINER_EN: Final = r"(?:(?:the|our|my|its|their|a|an)\s+)?"
_VERBS_EN: Final = sorted(
    ((verb, family) for family, verbs in _RELATIONS_EN.items() for verb in verbs.split("|")),
    key=lambda pair: -len(pair[0]),
)
_VERB_FAMILY_EN: Final = {verb: family for verb, family in _VERBS_EN}
_EN_VERB_HEADS: Final = frozenset(verb.split()[0] for verb, _ in _VERBS_EN)
_FACT_EN: Final = lazy_compile(
    _LEAD_EN
    + _DETERMINER_EN
    + r"(?P<subject>[A-Za-z0-9][\w.\-/' ]{0,60}?)\s+"
    + _ADVERBS_EN
    + r"(?P<verb>"
    + "|".join(re.escape(v) for v, _ in _VERBS_EN)
    + r")\s+(?P<value>\S.*)$",
    re.IGNORECASE,
)
_VERBS_ZH: Final = sorted(
    ((verb, family) for family, verbs in _RELATIONS_ZH.items() for verb in verbs.split("|")),
    key=lambda pair: -len(pair[0]),
)
_VERB_FAMILY_ZH: Final = {verb: family for verb, family in _VERBS_ZH}
_FACT_ZH: Final = lazy_compile(
    r"^\s*(?P<subject>[^，。,；;：:！？!?\s][^，。,；;：:！？!?]{0,30}?)\s*"
    r"(?:现在|目前|一直|都|也|还|其实)?"
    r"(?P<verb>" + "|".join(re.escape(v) for v, _ in _VERBS_ZH) + r")\s*(?P<value>\S.*)$"
)
# "支付模块由张伟负责", "支付模块现在是李娜负责": the owner is the value, the module the subject.
_OWNER_ZH: Final = lazy_compile(
    r"^\s*(?P<subject>[^，。,；;！？!?]{2,30}?)\s*(?:现在|目前)?(?:是|归)?由?\s*"
    r"(?P<value>[^，。,；;是由]{1,20}?)\s*(?:负责|在管|管)"
)
# "Maria owns the payments module": the module is what the statement is about.
_SWAPPED: Final = frozenset({"owns", "maintains"})
_VALUE_TAIL: Final = lazy_compile(
    r"(?:\s*,?\s*(?:not|instead of|rather than)\s+.*|\s+(?:now|currently|these days))+$", re.I
)
_PRONOUNS_EN: Final = frozenset(
    [
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "he",
        "she",
        "they",
        "we",
        "i",
        "you",
        "what",
        "which",
        "who",
        "everything",
        "something",
        "nothing",
        "anything",
        "all",
        "one",
        "which",
        "let's",
        "lets",
        "let",
    ]
)
_IMPERATIVE_EN: Final = frozenset(
    [
        "run",
        "open",
        "show",
        "look",
        "check",
        "go",
        "try",
        "see",
        "read",
        "use",
        "make",
        "set",
        "add",
        "fix",
        "keep",
        "please",
        "pls",
        "maybe",
        "why",
        "how",
        "when",
        "where",
        "what",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "will",
    ]
)
_ZH_BAD_SUBJECT_START: Final = lazy_compile(
    r"^(?:我|你|他|她|它|这|那|咱|先|再|就|也|都|还|又|把|给|让|请|帮|看|跑|去|来|要|能|会|不)"
)
# Values that describe a passing state, not a lasting fact ("the build is still red").
_TRANSIENT_VALUE: Final = lazy_compile(
    r"^(?:still|not|no longer|going to|gonna|done|finished|fine|ok|okay|weird|strange|broken|"
    r"failing|passing|green|red|up|down|good|bad|wrong|right|correct|missing|empty|slow|fast|"
    r"huge|big|small|better|worse|fixed|gone|flaky|a bug|the problem|the issue|why|what|how|"
    r"here|there|working|happening|enough|too|next|up next|last|first|in progress|blocked|"
    r"pending|underway|on hold|todo|wip|been|so|really|pretty|very|super|kinda|such|chaos|"
    r"horrible|terrible|awful|great|nice|amazing|killing|driving|crazy|insane|annoying)(?![\w.-])",
    re.IGNORECASE,
)
# A value said of the moment ("… today", "… again", "… lately") is a passing remark.
_MOMENT: Final = lazy_compile(
    r"(?<![A-Za-z])(?:today|tonight|this (?:morning|afternoon|evening|week)|right now|again|"
    r"lately|haha|lol|anyway)(?![A-Za-z])|今天|今晚|刚才|最近",
    re.IGNORECASE,
)
_ZH_TRANSIENT_VALUE: Final = lazy_compile(
    r"^(?:啥|什么|多少|哪|不是|不行|可以|好的|对的|错的|这样|那样|干嘛)"
)
_SUBJECT_NOISE: Final = frozenset(
    ["the", "a", "an", "our", "my", "its", "their", "now", "currently", "的", "现在", "目前"]
)
_ARTICLE: Final = lazy_compile(r"^(?:the|our|my|a|an)\s+", re.IGNORECASE)
_MAX_SUBJECT_WORDS: Final = 6
_ZH_FACT_SUBJECT_END: Final = lazy_compile(
    r"(?:服务|系统|模块|集群|环境|数据库|库|仓库|网关|站|平台|应用|表|框架|版本|工具|机器人|目录)$"
)


# A Chinese "X 用 Y" states a fact when X names a system, not an activity ("部署用 Docker").
_ZH_STRONG_CHOICE: Final = lazy_compile(
    r"决定|就用|采用|改用|选用|统一用|换成|还是用|确定用|吧|以后|今后"
)


def overrides_choice(stated: SubjectFact, text: str) -> bool:
    """Whether a clause read as a decision is really a system's plain fact ("报表服务用 Java 17")."""
    return stated.relation == "uses" and stated.system and not _ZH_STRONG_CHOICE.search(text)


@dataclass(frozen=True, slots=True)
class SubjectFact:
    """A clause read as `subject relation value`; `key` identifies the subject."""

    subject: str
    relation: str
    value: str
    system: bool = False  # a Chinese "X 用 Y" whose X names a system

    @property
    def key(self) -> str:
        return subject_key(self.subject, self.relation)


def subject_fact(clause: str) -> SubjectFact | None:
    """The subject, relation and value a declarative clause states, or None."""
    return _subject_fact(clause.strip().rstrip("。.!！;；"))


@lru_cache(maxsize=65_536)
def _subject_fact(text: str) -> SubjectFact | None:
    # Pure and asked for the same stored contents while matching subjects in a run (and,
    # with project scope, for every other session's matching item at every step).
    # Cheap tests first: most clauses hold none of the verbs, and the patterns backtrack.
    owner = _OWNER_ZH.match(text) if ("负责" in text or "管" in text) else None
    if owner and _good_zh_subject(owner.group("subject").strip()):
        return SubjectFact(owner.group("subject").strip(), "owner", owner.group("value").strip())
    has_en_verb = not _EN_VERB_HEADS.isdisjoint(text.casefold().split())
    match = _FACT_EN.match(text) if has_en_verb else None
    if match and _good_en(match.group("subject"), match.group("value")):
        verb = match.group("verb").casefold()
        subject, value = match.group("subject").strip(), match.group("value").strip()
        if verb in _SWAPPED:
            subject, value = _ARTICLE.sub("", _VALUE_TAIL.sub("", value)), subject
        return SubjectFact(subject, _VERB_FAMILY_EN[verb], value)
    match = _FACT_ZH.match(text)
    if match:
        subject, verb, value = (match.group(n).strip() for n in ("subject", "verb", "value"))
        family = _VERB_FAMILY_ZH[verb]
        system = _ZH_FACT_SUBJECT_END.search(subject) is not None
        if family == "uses" and verb == "用" and not system:
            return None  # "部署用 Docker" chooses a tool; "报表服务用 Java" states one
        if _good_zh_subject(subject) and not _ZH_TRANSIENT_VALUE.match(value):
            return SubjectFact(subject.removesuffix("的"), family, value, system and verb == "用")
    return None


def _good_en(subject: str, value: str) -> bool:
    words = subject.casefold().split()
    if not words or len(words) > _MAX_SUBJECT_WORDS:
        return False
    if words[0] in _PRONOUNS_EN or words[0] in _IMPERATIVE_EN or words[-1] in _PRONOUNS_EN:
        return False
    if not any(len(w) >= 2 and any(ch.isalpha() for ch in w) for w in words):
        return False
    return not _TRANSIENT_VALUE.match(value) and not _MOMENT.search(value)


def _good_zh_subject(subject: str) -> bool:
    if _ZH_BAD_SUBJECT_START.match(subject) or "吗" in subject or "呢" in subject:
        return False
    han = sum(1 for ch in subject if "\u4e00" <= ch <= "\u9fff")
    latin = re.search(r"[A-Za-z]{2,}", subject) is not None
    return han >= 2 or latin


def subject_key(subject: str, relation: str) -> str:
    """The normalised subject plus relation family: equal keys mean the same thing is described."""
    terms = sorted({t for t in tokenize(_ARTICLE.sub("", subject)) if t not in _SUBJECT_NOISE})
    return f"{relation}:{' '.join(terms)}" if terms else ""
