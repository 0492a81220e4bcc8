"""Passing chatter: navigation and procedure talk that steers the session but is not memory.

"Let's look at src/app.py next", "run the tests again", "ok next one", "继续", "看一下 X":
each steers the next step and is stale one step later. Such a sentence yields no item.
A sentence that also fixes a setting ("let's run the dev server on port 3000") or states
a standing rule is not chatter: a number with a unit, or a cue for a rule, keeps it.
"""

from __future__ import annotations

import re
from typing import Final

from lcm_core.extraction.rules import classify
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.numbers import parse_quantities
from lcm_core.text.numbers_role import is_identifier

_FILLER_EN: Final = (
    r"(?:(?:ok(?:ay)?|k|alright|all right|cool|nice|good|great|hmm+|so|now|then|yeah|yep|"
    r"right|sure|and|also|fine|perfect|got it|thanks|first|next)\b[\s,.!:—–-]*)*"
)
_WHO_EN: Final = (
    r"(?:(?:let's|lets|let us|we'll|we will|i'll|i will|i want to|we need to|can we|"
    r"(?:can|could) you|pls|please|time to|gonna|going to|we should)\s+)*"
)
_VERBS_EN: Final = (
    r"look at|look into|take a look|have a look|check|see|go to|go back|go through|go over|"
    r"move on|move to|jump to|head to|read|open|show|run|rerun|re-run|retry|try|dig|wrap up|"
    r"start with|begin with|start by|focus on|debug|review|continue|scroll|grep|tail|hit|"
    r"rebuild|commit|inspect|skim|compare|restart|step through|walk through|revisit|"
    r"come back|return to|fix|print|dump|test|stop here|pause|resume|refresh|reload|"
    r"call it a day|keep going|carry on|proceed|do the next|next"
)
_NAV_EN: Final = lazy_compile(
    rf"^\s*{_FILLER_EN}{_WHO_EN}(?:{_VERBS_EN})(?![A-Za-z])", re.IGNORECASE
)
# "next file", "first one", "next: src/db/migrate.py".
_NEXT_EN: Final = lazy_compile(
    r"^\s*(?:ok(?:ay)?[\s,]*)?(?:next|first|last|another|the next)\b[\s:,]*"
    r"(?:one|file|thing|step|test|case|error|item|up|please|pls|:?\s*\S+)?\s*[.!]*$",
    re.IGNORECASE,
)
_NAV_ZH: Final = lazy_compile(
    r"^\s*(?:(?:好|好的|嗯+|行|ok|OK|那|那就|然后|接着|先|再|现在|下面|继续)[\s,，。]*)*"
    r"(?:看一下|看一看|看看|看下|瞧瞧|打开|跑一下|跑一遍|再跑|重跑|跑|执行|运行|回到|切到|"
    r"下一个|下一步|继续|再试|重试|重新|提交|贴出来|查一下|查查|搜一下|改一下|一个一个|"
    r"今天先|先到这|先这样)"
)
# A remark about what just happened, with a bare pronoun for subject ("that took forever").
_REMARK: Final = lazy_compile(
    r"^\s*(?:(?:hmm+|oh|wow|ugh|huh|well|ok(?:ay)?|nice|cool)\b[\s,.!]*)*(?:that|it|this)"
    r"(?:'s|\s+(?:is|was|took|takes|looks|seems|worked|failed|broke|passed))(?![A-Za-z])",
    re.IGNORECASE,
)
# Words that make a steering sentence also a standing rule or a setting.
_KEEPS: Final = lazy_compile(
    r"(?<![A-Za-z])(?:always|never|from now on|going forward|by default|every time|"
    r"must|instead|on port|port \d)(?![A-Za-z])|以后|今后|每次|一律|必须|不要|端口|默认",
    re.IGNORECASE,
)


def is_chatter(sentence: str) -> bool:
    """Navigation or procedure talk that yields no memory item."""
    text = sentence.strip()
    patterns = (_NAV_EN, _NEXT_EN, _NAV_ZH, _REMARK)
    if not text or not any(p.match(text) for p in patterns) or _KEEPS.search(text):
        return False
    # "Retry failed webhooks up to 5 times", "Open question: …": a bound or a stronger cue.
    verdict = classify(text)
    if verdict is not None and verdict.kind in _RULE_KINDS:
        return False
    return not any(q.unit and not is_identifier(q.to_dict()) for q in parse_quantities(text))


_RULE_KINDS: Final = frozenset({"open_question", "preference", "constraint"})
