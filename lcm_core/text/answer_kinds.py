"""What kind of answer a question asks for, and which kinds of answer a turn holds.

"When did Kate start skiing?" (什么时候) asks for a date, "Where does Elise live?" (哪里)
for a place, "Who did she go with?" (谁) for a person, "How many pets?" (多少, 几个) for a
number. A turn that holds a token of that kind ("last week", 上个月; "in Galveston",
北京市; "with Barbara", 跟小明; "12 feet", 三只) is likelier to answer it than one that only
repeats the question's words. Deterministic, by pattern; English and Chinese.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import per_text_cache

DATE: Final = "date"
PLACE: Final = "place"
PERSON: Final = "person"
NUMBER: Final = "number"

# Question cues, the first that matches decides ("how long ago" is a date, not a number).
_ASKS: Final = (
    (
        DATE,
        lazy_compile(
            r"\bwhen\b|\bwhat (?:time|date|day|year|month)\b|\bwhich (?:day|date|year|month)\b"
            r"|\bhow long ago\b|\bwhat year\b",
            re.IGNORECASE,
        ),
    ),
    (DATE, lazy_compile(r"什么时候|何时|哪天|哪一天|几号|几月|哪年|哪一年|什么时间|星期几")),
    (
        PLACE,
        lazy_compile(
            r"\bwhere\b|\b(?:which|what) (?:city|cities|country|countries|place|places|town"
            r"|state|states|location|locations)\b",
            re.IGNORECASE,
        ),
    ),
    (PLACE, lazy_compile(r"哪里|哪儿|在哪|去哪|什么地方|哪个城市|哪个国家|哪座城市")),
    (NUMBER, lazy_compile(r"\bhow (?:many|much|old|long|far|often)\b", re.IGNORECASE)),
    (NUMBER, lazy_compile(r"多少|几个|几次|几岁|几只|几年|几天|多久|多长时间|多大")),
    (PERSON, lazy_compile(r"\b(?:who|whom|whose)\b", re.IGNORECASE)),
    (PERSON, lazy_compile(r"谁")),
)

_MONTHS: Final = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAYS: Final = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend"
_DATE_RES: Final = (
    lazy_compile(
        rf"\b(?:today|tonight|yesterday|tomorrow|ago|recently|(?:last|next|this|past) "
        rf"(?:night|week|month|year|summer|winter|spring|fall|autumn|{_DAYS})"
        rf"|(?:{_DAYS})|(?:{_MONTHS})\.? \d|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTHS})"
        r"|(?:19|20)\d\d)\b|\d{4}-\d{2}-\d{2}|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
        re.IGNORECASE,
    ),
    lazy_compile(
        r"今天|今晚|昨天|昨晚|明天|前天|后天|上周|下周|这周|本周|上个?月|下个?月|去年|明年|今年"
        r"|前年|星期[一二三四五六日天]|周[一二三四五六日末]|[0-9一二三四五六七八九十]+\s*[月日号]"
        r"|[0-9]{4}\s*年|以前|之前|那天"
    ),
)
_NUMBER_RES: Final = (
    lazy_compile(
        r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w.]*[A-Za-z])|\b(?:two|three|four|five|six|seven"
        r"|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|dozen"
        r"|million|once|twice|couple)\b",
        re.IGNORECASE,
    ),
    lazy_compile(
        r"[0-9两一二三四五六七八九十百千万]+\s*[个次岁年天只本件位块元条张家口周月小时分钟遍]"
    ),
)
# A capitalised word inside a sentence: a name (a place or a person); the word after a
# sentence end, a quote or a speaker's colon is not read, nor "I".
_NAME_RE: Final = lazy_compile(r"(?<=[a-z,;)] )[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*")
_PLACE_EN_RE: Final = lazy_compile(
    r"\b(?:in|at|to|from|near|visit(?:ed|ing)?|around|across) (?:the )?[A-Z][a-z]+"
)
_PLACE_ZH_RE: Final = lazy_compile(
    r"[\u4e00-\u9fff]{1,4}(?:市|省|国|县|州|岛|路|街|区|镇|村|湖|山|公园|机场|酒店|餐厅|大学)"
    r"|(?:在|去|到|从)(?:了)?[\u4e00-\u9fff]{2,3}(?:玩|旅游|旅行|出差|上学|工作|住)"
)
_PERSON_ZH_RE: Final = lazy_compile(
    r"(?:和|跟|与|同|给|陪)[\u4e00-\u9fff]{2,3}(?:一起|见面|吃|去|聊|说)"
    r"|(?:老|小)[王李张刘陈杨赵黄周吴徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董潘袁蔡蒋余于杜叶程魏苏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤]"
    r"|我(?:的)?(?:妈妈|爸爸|哥哥|姐姐|弟弟|妹妹|朋友|同事|老板|老师|丈夫|妻子|老公|老婆|女朋友|男朋友)"
)
_FUNCTION_NAMES: Final = frozenset(
    {"I", "The", "A", "An", "And", "But", "So", "Oh", "Yes", "No", "OK", "Ok", "Lol"}
)


@per_text_cache(maxsize=4_096)
def asked_kind(question: str) -> str | None:
    """The kind of answer the question asks for (`DATE`, `PLACE`, `PERSON`, `NUMBER`), or None."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return kind
    return None


def holds_kind(text: str, kind: str, known: Collection[str] = ()) -> bool:
    """True when the text holds a token of this kind that is not one of `known`
    (the question's own words and the chat's speakers, folded: they say nothing new)."""
    if kind == DATE:
        return _holds_date(text)
    if kind == NUMBER:
        return _holds_number(text)
    if kind == PLACE:
        if _PLACE_ZH_RE.search(text):
            return True
        return any(
            _new_name(found.group().rsplit(" ", 1)[-1], known)
            for found in _PLACE_EN_RE.finditer(text)
        )
    if kind == PERSON:
        if _PERSON_ZH_RE.search(text):
            return True
        return any(_new_name(found.group(), known) for found in _NAME_RE.finditer(text))
    return False


@per_text_cache(maxsize=65_536)
def _holds_date(text: str) -> bool:
    # Cached: a long-lived sidecar looks at the same turns step after step.
    return any(pattern.search(text) for pattern in _DATE_RES)


@per_text_cache(maxsize=65_536)
def _holds_number(text: str) -> bool:
    return any(pattern.search(text) for pattern in _NUMBER_RES)


def _new_name(name: str, known: Collection[str]) -> bool:
    words = name.replace("-", " ").split()
    if words[0] in _FUNCTION_NAMES:
        return False
    return any(word.casefold() not in known for word in words)
