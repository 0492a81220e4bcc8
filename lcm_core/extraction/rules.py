"""Cue tables and classifiers: which kind of memory a clause states, in English and Chinese.

Kinds and the order in which cues win when several apply:
open_question > preference > constraint (modal or bound) > decision > constraint (noun:
"limit", "should") > fact. Assistant text only ever yields proposals. Every rule is a
plain pattern, so the same text always gets the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from lcm_core.extraction.idioms import describes, rule_words
from lcm_core.text.languages import en
from lcm_core.text.lazy_regex import Regex, lazy_compile
from lcm_core.text.numbers import Quantity, parse_quantities
from lcm_core.text.questions import QUESTION_END, ZH_QUESTION_WORDS
from lcm_core.text.tokens import CJK_CLASS


def _en(*alternatives: str) -> Regex:
    """English words bounded by non-letters (`\\b` fails between Han and Latin)."""
    body = "|".join(alternatives)
    return lazy_compile(f"{en.WORD_START}(?:{body}){en.WORD_END}", re.IGNORECASE)


def _zh(*alternatives: str) -> Regex:
    return lazy_compile("|".join(alternatives))


OPEN_QUESTION: Final = (
    _en(
        r"open question",
        r"still (?:need|have) to (?:decide|figure out|choose|pick)",
        r"(?:haven't|have not|not yet|hasn't been) (?:decided|settled|figured out|chosen)",
        r"undecided",
        r"not (?:sure|certain) (?:yet )?(?:if|whether)",
        r"tbd",
        r"to be (?:decided|determined|confirmed)",
        r"unclear (?:if|whether)",
        r"up in the air",
    ),
    _zh(
        r"还没定|还没决定|没决定|还没想好|没想好|待定|未定|还不确定|尚未确定|有待确认|待讨论|还没确定"
    ),
)
PREFERENCE: Final = (
    _en(
        r"(?:i|we)(?:'d| would)? (?:prefer|rather)",
        r"prefer(?:ably|red)?",
        r"i (?:really )?(?:like|love|hate|dislike)",
        r"i (?:don't|do not) (?:like|love)",
        r"ideally",
        r"my preference",
        r"(?:i'm|i am) (?:a )?fan of",
        r"not a fan of",
        r"if possible",
        r"nice to have",
    ),
    _zh(r"喜欢|偏好|倾向|更愿意|宁愿|宁可|尽量|最好|希望|偏爱|讨厌"),
)
STRONG_CONSTRAINT: Final = (
    _en(
        r"must(?:n't| not)?",
        r"never",
        r"always",
        r"do not",
        r"don't",
        r"shall not",
        r"should not",
        r"shouldn't",
        r"(?:we|you) (?:can't|cannot|may not)",
        r"not allowed",
        r"forbidden",
        r"prohibited",
        r"required",
        r"mandatory",
        r"only (?:use|touch|allow|run|deploy|edit|modify|change|call|accept|support|read|write)",
        r"avoid",
        r"make sure",
        r"ensure",
        r"has to",
        r"have to",
        r"aim for",
        r"stop",
        r"from now on",
        r"going forward",
    ),
    lazy_compile(r"^\s*keep\b", re.IGNORECASE),
    _zh(
        r"必须|务必|一定要|(?<!能)不能|不可以|不得|不准|不许|禁止|严禁|(?<!要)不要|不允许|只能|只允许|"
        r"只在|只用|只改|只动|仅限|保证|确保|始终|永远|总是|要求|一律|(?<![我你他她还不])记得|"
        r"(?:以后|今后|从现在(?:开始|起))(?:所有|都|一律|每次)|"
        r"(?<![特区分类级识个告差性派鉴])别(?![的人处])"
    ),
)
DECISION: Final = (
    _en(
        r"let's",
        r"let us",
        r"we(?:'ll| will| are going to|'re going to| decided to|'ve decided to| chose| picked)",
        r"i(?:'ve| have)? decided",
        r"decision",
        r"going with",
        r"go with",
        r"switch(?:ing)? to",
        r"(?:we|i) use",
        r"we(?:'re| are) (?:dropping|moving to|switching to|standardi[sz]ing on)",
        r"stick with",
        r"settle on",
        r"drop support",
    ),
    lazy_compile(
        r"^\s*(?:please\s+)?(?:use|go with|switch to|stick with|store|name|call|set|target|pin|"
        r"skip|adopt|choose|pick|put|deploy|switch)\b",
        re.IGNORECASE,
    ),
    _zh(
        r"决定|就用|就按|采用|改用|选用|选择|定为|设为|设成|设置为|设置成|统一用|换成|换用|"
        rf"就叫|[{CJK_CLASS}]选\s*[A-Za-z]|"
        r"还是用|确定用|保留|固定在|固定为|提高到|降低到|调整为|调到|改成|改为|"
        # Clause-initial "用" is "use …", but not in words such as 用户, 用例, 用法.
        rf"用[^，。；,;！？]{{1,20}}吧|^\s*用(?![户例法量途时于处])\s*\S|^[{CJK_CLASS}]{{1,4}}用\s*[A-Za-z]"
    ),
)
WEAK_CONSTRAINT: Final = (
    # "min" after a number is minutes ("takes 4 min"), not a minimum.
    _en(
        r"limit",
        r"max(?:imum)?",
        r"(?<![0-9] )(?<![0-9])min(?:imum)?",
        r"threshold",
        r"quota",
        r"cap",
        r"should",
    ),
    # "要" as "must", not as "need"/"want"/"probably takes" (需要, 想要, 大概要, 可能要).
    _zh(
        r"上限|下限|阈值|限流|最大|最小|应该|"
        r"(?<![需想只主重不还我你他她概能就也次简摘纪扼紧必])要(?!不要|是|么|求|\s*\d+\s*(?:分钟|小时|秒|天))"
    ),
)
FACT: Final = (
    _en(r"fyi", r"remember that", r"note that", r"keep in mind", r"for the record"),
    lazy_compile(r"^\s*(?:remember|note|btw)\b", re.IGNORECASE),
    lazy_compile(
        r"\b(?:our|my)\s+[\w\- ]{1,40}?\b(?:is|are|was|runs|run|uses|lives|sits|has|have|takes)\b"
        r"|^\s*(?:we|i)(?:'re| are| am|'m)? (?:use|using|have|run|running|deploy|deploying|host|"
        r"hosting|store|keep|moved|migrated|switched)\b|^\s*we(?:'re| are) on\b"
        r"|\b(?:is|are) (?:written in|deployed (?:on|to|in)|hosted (?:on|in|at)|running on|"
        r"built (?:on|with)|based on|located in|stored in)\b"
        r"|\b(?:can take|takes|took|currently)\b",
        re.IGNORECASE,
    ),
    _zh(
        r"^\s*(?:记住|注意|顺便说|对了|提醒一下|备注)|我们的|我的|我们(?:用的是|在用|使用的是|目前用|现在用|有|团队)|"
        rf"部署在|运行在|跑在|托管在|位于|用的是|基于|[{CJK_CLASS}]是[A-Za-z]"
    ),
)
# Words that describe how things are, so a bound in the clause is a fact, not a rule.
DESCRIPTIVE: Final = lazy_compile(r"\b(?:can take|takes|took|currently)\b|目前|现在", re.IGNORECASE)
_BOUNDS: Final = frozenset({"<", "<=", ">", ">=", "between"})

POLITE_IMPERATIVE: Final = lazy_compile(
    r"^\s*(?:can|could|would|will) you (?:please )?(?:make sure|ensure|remember|always|never|keep|not)\b",
    re.IGNORECASE,
)
ONE_OFF_REQUEST: Final = lazy_compile(
    r"^\s*(?:please |pls |can you |could you |would you )?(?:fix|run|check|look at|look into|"
    r"explain|show|help|write|add|update|implement|create|generate|refactor|rename|remove|"
    r"delete|investigate|debug|review|try|test|install|open|read|find|tell|give|send|"
    r"summarize)\b|^\s*(?:请|麻烦)?(?:帮我|帮忙|给我|看一下|看看|解释|检查|修复|修一下|运行|跑一下|写一个|生成)",
    re.IGNORECASE,
)
PROPOSAL: Final = (
    _en(
        r"i(?: would|'d)? (?:suggest|recommend|propose|advise)",
        r"i'd go with",
        r"my (?:suggestion|recommendation)",
        r"we (?:could|should|might want to)",
        r"you (?:should|might want to|may want to)",
        r"consider",
        r"how about",
        r"it (?:would|might) be (?:better|best|worth)",
        r"a better (?:option|approach|choice)",
        r"let's",
        r"one option is",
        r"(?:i'd|i would) (?:avoid|use|keep|prefer)",
    ),
    _zh(r"建议|推荐|可以考虑|不妨|最好|我们可以|或许可以|我的建议|比较好|更好的做法|我觉得可以"),
)
CONFIRMATION: Final = lazy_compile(
    r"^(?:(?:yes|yep|yeah|yup|sure|ok|okay|alright|all right|sounds good|good idea|great idea|agreed|agree|i agree|"
    r"lgtm|makes sense|do it|go ahead|go for it|let's do (?:it|that)|let's go with (?:it|that|"
    r"your suggestion)|that works|works for me|perfect|approved|ship it|please do|👍|"
    r"好|好的|好啊|行|可以|同意|没问题|就这么办|就这样|(?:就)?按你说的(?:办|来|做)?|"
    r"(?:就)?按这个(?:来|办|方案)?|听你的|照你说的(?:办|做)?|是的|对)[\s,，.。!！~]*)+$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The kind a clause states and how strong the cue was (higher wins within a sentence)."""

    kind: str
    strength: int


def _any(patterns: Sequence[Regex], text: str) -> bool:
    return any(p.search(text) for p in patterns)


# "From now on", "以后都": alone they make a choice lasting, not an obligation.
_LASTING: Final = lazy_compile(
    r"(?<![A-Za-z])(?:from now on|going forward)(?![A-Za-z])|(?:以后|今后)(?:所有|都|一律|统一)?",
    re.IGNORECASE,
)
_CHOICE: Final = lazy_compile(
    r"(?<![A-Za-z])(?:going with|go with|use|switch(?:ing)? to|stick with)(?![A-Za-z])|"
    r"(?:都|统一|一律)?(?:用|使用|改用)",
    re.IGNORECASE,
)


# "只在周二和周四发版" picks the release days, like "deploy only on Tuesdays".
_RELEASE_DAYS: Final = lazy_compile(r"^\s*只在[^，。；]{1,12}(?:发版|发布|部署|上线)")


def _lasting_choice(clause: str) -> bool:
    """A choice made to last ("以后都用 pnpm"), with no other obligation cue in it."""
    if _RELEASE_DAYS.search(clause):
        return True
    if not _LASTING.search(clause) or not _CHOICE.search(clause):
        return False
    return not _any(STRONG_CONSTRAINT, _LASTING.sub(" ", clause))


def classify(clause: str, quantities: Sequence[Quantity] | None = None) -> Verdict | None:
    """The kind of memory a user clause states, or None when it states none.

    `quantities` are the clause's numbers; they are parsed here when not given and needed.
    """
    if _any(OPEN_QUESTION, clause):
        return Verdict("open_question", 6)
    if _any(PREFERENCE, clause):
        return Verdict("preference", 5)
    if _lasting_choice(clause):
        return Verdict("decision", 3)
    # "Must have been", "always makes me laugh", "别担心": rule words that set no rule.
    # Only a clause with a rule word is read again without them (most clauses have none).
    ruled = _any(STRONG_CONSTRAINT, clause) or _any(WEAK_CONSTRAINT, clause)
    cues = rule_words(clause) if ruled else ""
    if _any(STRONG_CONSTRAINT, cues):
        return Verdict("constraint", 4)
    numbers = parse_quantities(clause) if quantities is None else quantities
    if any(q.comparator in _BOUNDS and not q.negated for q in numbers) and not DESCRIPTIVE.search(
        clause
    ):
        return Verdict("constraint", 4)
    if _any(DECISION, clause):
        return Verdict("decision", 3)
    if _any(WEAK_CONSTRAINT, cues):
        return Verdict("constraint", 2)
    if _any(FACT, clause) or describes(clause):
        return Verdict("fact", 1)
    return None


def is_question(sentence: str) -> bool:
    """A question to the assistant (no memory), unless it is a polite instruction."""
    if POLITE_IMPERATIVE.search(sentence) or _any(OPEN_QUESTION, sentence):
        return False
    if QUESTION_END.search(sentence):
        return True
    return bool(ZH_QUESTION_WORDS.search(sentence))


def is_one_off_request(sentence: str) -> bool:
    """A request for an action now ("fix the test"), not a standing rule."""
    if _any(STRONG_CONSTRAINT, sentence) or _any(OPEN_QUESTION, sentence):
        return False
    return bool(ONE_OFF_REQUEST.search(sentence))


def is_proposal(sentence: str) -> bool:
    """An assistant sentence that recommends or proposes something."""
    return _any(PROPOSAL, sentence)


def is_confirmation(text: str) -> bool:
    """A whole message that only agrees ("sounds good", "好，就按你说的办")."""
    return bool(CONFIRMATION.match(text.strip()))
