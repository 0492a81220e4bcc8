"""Rule words in passing talk: no constraint from chatter, facts from descriptions, rules kept."""

from __future__ import annotations

import pytest

from lcm_core.extraction.rules import classify


def _kind(clause: str) -> str | None:
    verdict = classify(clause)
    return verdict.kind if verdict else None


@pytest.mark.parametrize(
    "clause",
    [
        "Wow, nine hours on the bus must have been exhausting",
        "You must be so proud of her",
        "I don't know much about hiking gear",
        "I don’t really eat a lot of fish",
        "Don't worry, I can lend you my old boots",
        "I've always wanted to learn how to bake",
        "I have never been to the Dolomites",
        "Maybe I should start saving for it",
        "You should definitely give it a try next summer",
        "I have to say, their coffee is better",
        "I couldn't stop laughing",
        "I think he should do it soon",
        "别担心，我可以借给你",
        "不要太累了，早点休息",
        "你真应该去试试那家米线",
        "明天要考试，好紧张",
        "马上要放假了",
        "必须的！太好吃了",
        "这部电影必须看",
        "别提了，今天累死了",
        "我妈说我应该多运动",
    ],
)
def test_talk_with_rule_words_is_no_rule(clause: str) -> None:
    """Epistemic must, not knowing, reassurance, experience, advice: not a constraint."""
    assert _kind(clause) not in ("constraint", "decision")


@pytest.mark.parametrize(
    "clause",
    [
        "the mechanic says the alternator has to be replaced",
        "My cousins always make me laugh",
        "The library is never quiet during exam season",
        "That bakery always has a line out the door",
        "他总是忘记带钥匙",
        "那边的天气总是很好",
    ],
)
def test_descriptions_with_rule_words_are_facts(clause: str) -> None:
    """How someone or something is, said with always/never/has to/总是: a fact, kept."""
    assert _kind(clause) == "fact"


@pytest.mark.parametrize(
    "clause",
    [
        "Never leave the trail after dark",
        "Always text me when you get home",
        "Don't worry about the style, but never push to main",
        "Please don't bring peanuts to the picnic",
        "Releases are never cut from main",
        "Passwords are never logged",
        "Every PR must have a reviewer",
        "Uploads must stay under 5 GB",
        "You have to run the migrations before the tests",
        "周末早上九点前不要给我打电话",
        "永远不要在生产库上直接改数据",
        "别着急合并，先跑测试",
        "不要再用 npm 了",
        "千万不要告诉她",
        "我们必须在周五前上线",
    ],
)
def test_rules_stay_rules(clause: str) -> None:
    """Imperatives, modal rules and rules phrased as practice are still constraints."""
    assert _kind(clause) == "constraint"
