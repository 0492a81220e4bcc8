"""A deterministic synthetic conversation-QA dataset (DESIGN.md section 9 format).

Conversations read like real chat: facts said in passing among feelings, small talk
and assistant replies, never lines that begin with "constraint:". A quarter of the
conversations are in Chinese. Each conversation carries facts, dates, preferences and
corrections; a correction's question has the correcting turn as its only evidence.
Questions use other words than their evidence: at most a topic word or a name is
shared, as when a person asks about something they mentioned long ago. Many other
turns mention the same topic words without the fact, so a match on the topic alone
is not enough.

    python benchmarks/gen_conversations.py --out /tmp/conversations.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# (category, statement, question) templates; {slots} are filled per conversation.
EN_FACTS = (
    ("fact", "we drove to {city} last weekend, the kids loved the {sight}",
     "Which place did the family go to by car on the weekend?"),
    ("fact", "{kid} just started {activity} lessons on Tuesdays, she's obsessed already",
     "What lessons is {kid} taking these days?"),
    ("date", "my mum's birthday is on {month} {day}, I still need to find a present",
     "When does my mother celebrate her birthday?"),
    ("fact", "we finally adopted a {pet}, we named him {petname}",
     "What's the name of our new {pet}?"),
    ("fact", "I've been at {company} for {years} years now, mostly doing {domain}",
     "How long have I worked for {company}?"),
    ("preference", "honestly I can't stand {food}, please never suggest it for dinner",
     "Which dish should stay off the dinner ideas?"),
    ("date", "the plumber is coming {weekday} morning to fix the {fixture}",
     "When is someone repairing the {fixture}?"),
    ("fact", "my brother {bro} moved to {city2} for a job at a {shop}",
     "Where is {bro} living now?"),
    ("preference", "I drink {drink} these days, coffee just makes me jittery",
     "What do I have instead of coffee?"),
    ("fact", "we're saving up for a {purchase}, thinking around {amount} euros",
     "How much are we putting aside for the {purchase}?"),
    ("date", "our anniversary dinner is booked at {restaurant} on the {day}th",
     "Which restaurant did we reserve for the anniversary?"),
    ("fact", "{friend} recommended {book} to me, I'm about halfway through",
     "Who told me to read {book}?"),
    ("preference", "please don't put anything before {hour} am in my calendar, mornings are rough",
     "How early can things be scheduled for me in the morning?"),
    ("fact", "the car broke down again, the mechanic says the {part} has to be replaced",
     "Which part of the car needs replacing?"),
    ("fact", "{kid} lost her first tooth yesterday, the tooth fairy owes her {coins} coins",
     "How much does the tooth fairy owe {kid}?"),
    ("date", "the school play is on {weekday} at {time}, {kid} is playing the {role}",
     "What part does {kid} have in the school play?"),
)  # fmt: skip
EN_CORRECTIONS = (
    ("my dentist appointment is on the {d1}th",
     "ugh, the dentist's office called and moved my appointment to the {d2}th",
     "When is my dentist appointment after the change?"),
    ("the team offsite is going to be in {city}",
     "update on the offsite: they switched it to {city2}, {city} was too expensive",
     "Where will the team offsite take place?"),
    ("the kids' swim class is at {t1}",
     "wait, I mixed it up, swim class is at {t2}, not {t1}",
     "What time is the children's swimming class?"),
    ("our flight to {city} leaves at {t1}",
     "the airline emailed, the flight to {city} now departs at {t2}",
     "When does the plane to {city} take off?"),
)  # fmt: skip
EN_FILLER = (
    "ugh, long day, my back is killing me",
    "the weather has been so grey all week",
    "I think I need a proper holiday soon",
    "we watched a silly movie last night, the kids laughed the whole time",
    "this weekend I just want to sleep in",
    "the kids were grumpy at dinner again",
    "the coffee machine at work is broken, tragedy",
    "I keep forgetting to call the bank",
    "anyway, how are you doing?",
    "had the best croissant this morning",
    "traffic was horrible on the way home",
    "I should really start running again",
    "my phone battery dies so fast lately",
    "we might repaint the kitchen at some point, no idea when",
    "the neighbours had a party until 2am, I'm exhausted",
    "I love how quiet the house is early in the morning",
    "school pickup was chaos today",
    "thinking about what to cook for dinner tomorrow",
    "the car needs a wash, it's covered in pollen",
    "I started a new book but it's slow so far",
    "we should invite friends over for a birthday thing soon",
    "work has been fine, a bit boring",
    "the restaurant down the road closed, sad",
    "I need new running shoes",
)
# Openers and tails vary the filler, so chat lines rarely repeat word for word.
EN_OPENERS = ("", "", "ugh, ", "honestly ", "so ", "lol ", "btw ", "oh and ", "random thought: ")
EN_TAILS = ("", "", "", " haha", ", not sure why", ", anyway", " — what a week", " again", " today")
ZH_OPENERS = ("", "", "唉，", "说真的，", "对了，", "哈哈，", "顺便说一句，")
ZH_TAILS = ("", "", "", "，哈哈", "，不知道为啥", "，反正就这样", "，这周真是的")
EN_REPLIES = (
    "That sounds lovely!",
    "Oh no, sorry to hear that.",
    "Ha, that's relatable.",
    "Good to know, thanks for telling me.",
    "Hope the rest of the week is calmer.",
    "That sounds like a lot, take it easy.",
    "Nice! Anything I can help you plan?",
    "Fair enough.",
    "I'll keep that in mind.",
    "How did everyone take it?",
)
EN_SLOTS: dict[str, tuple[str, ...]] = {
    "city": ("Lisbon", "Porto", "Sintra", "Seville", "Lyon", "Bruges", "Ghent", "Bologna"),
    "city2": ("Madrid", "Vienna", "Prague", "Dublin", "Oslo", "Krakow", "Zurich", "Valencia"),
    "sight": ("old tram", "aquarium", "castle walls", "cable car", "harbour boats", "zoo"),
    "kid": ("Mia", "Lily", "Zoe", "Ava", "Nora", "Ella"),
    "activity": ("piano", "violin", "judo", "ballet", "swimming", "chess"),
    "month": ("March", "April", "May", "June", "September", "October"),
    "day": tuple(str(d) for d in range(3, 28)),
    "pet": ("beagle", "kitten", "rabbit", "terrier", "parrot"),
    "petname": ("Biscuit", "Pepper", "Mango", "Rocket", "Noodle", "Ziggy"),
    "company": ("Northwind", "Brightwave", "Acme Labs", "Bluefin", "Larkspur"),
    "years": ("three", "five", "seven", "eleven"),
    "domain": ("billing systems", "mobile apps", "data pipelines", "support tooling"),
    "food": ("mushroom risotto", "blue cheese", "liver", "anchovies", "okra"),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "fixture": ("leaking sink", "boiler", "shower drain", "garden tap"),
    "bro": ("Jonas", "Marco", "Pieter", "Luis", "Andrei"),
    "shop": ("bike shop", "bakery", "bookshop", "startup", "museum"),
    "drink": ("green tea", "rooibos", "chai", "mint tea", "oat lattes"),
    "purchase": ("campervan", "new sofa", "piano", "e-bike", "kitchen island"),
    "amount": ("2500", "4000", "12000", "1800", "9000"),
    "restaurant": ("Casa Lupa", "The Olive Room", "Nori House", "Bistro Verde"),
    "friend": ("Priya", "Hannah", "Tomasz", "Grace", "Felix"),
    "book": ("The Overstory", "Piranesi", "Circe", "Educated", "Klara and the Sun"),
    "hour": ("9", "10", "8"),
    "part": ("alternator", "clutch", "starter motor", "timing belt"),
    "coins": ("two", "three", "five"),
    "time": ("6pm", "5:30pm", "7pm"),
    "role": ("dragon", "narrator", "queen", "tree"),
    "d1": ("12", "14", "18", "20"),
    "d2": ("22", "24", "26", "27"),
    "t1": ("4pm", "9am", "10:15", "7:40"),
    "t2": ("5pm", "11am", "13:30", "8:55"),
}

ZH_FACTS = (
    ("fact", "上周末我们开车去了{城市}，孩子们特别喜欢{景点}", "周末自驾去的是哪个地方？"),
    ("fact", "{孩子}最近开始学{兴趣}了，每周二上课，兴趣很大", "{孩子}现在在上什么课？"),
    ("date", "我妈的生日是{月}月{日}号，礼物还没想好", "母亲哪天过生日？"),
    ("fact", "我们终于养了一只{宠物}，给它取名叫{宠物名}", "新养的{宠物}叫什么名字？"),
    ("fact", "我在{公司}已经干了{年}年了，主要做{领域}", "我在{公司}工作多久了？"),
    ("preference", "说实话我真受不了{食物}，晚饭千万别推荐", "晚饭不能安排哪种菜？"),
    ("date", "周{星期}上午师傅会来修{设施}", "{设施}什么时候有人来修？"),
    ("fact", "我们在攒钱买{东西}，预算大概{金额}元", "为{东西}准备了多少钱？"),
    ("fact", "{朋友}推荐了《{书}》，我已经看了一半", "是谁推荐我读《{书}》的？"),
    ("preference", "我现在改喝{饮料}了，咖啡喝了心慌", "不喝咖啡的话我喝什么？"),
    ("date", "结婚纪念日的晚饭订在{餐厅}，{日}号晚上", "纪念日订的是哪家餐厅？"),
    ("fact", "车又坏了，修车师傅说{零件}得换", "车上哪个零件需要更换？"),
)  # fmt: skip
ZH_CORRECTIONS = (
    ("我的牙医预约在{d1}号", "牙医诊所刚打电话，说预约改到{d2}号了", "牙医预约改到了哪天？"),
    ("团队团建定在{城市}", "更新一下，团建改去{城市2}了，{城市}太贵", "团建最后去哪里？"),
    ("孩子的游泳课是{t1}点", "不对，我记错了，游泳课是{t2}点，不是{t1}点", "孩子的游泳课几点开始？"),
)  # fmt: skip
ZH_FILLER = (
    "今天好累，腰都快断了",
    "这周天气一直阴沉沉的",
    "感觉该好好休个假了",
    "昨晚看了部搞笑电影，孩子们笑个不停",
    "这个周末只想睡个懒觉",
    "孩子们晚饭的时候又闹脾气了",
    "公司的咖啡机坏了，太惨了",
    "老是忘记给银行打电话",
    "你最近怎么样？",
    "早上吃到一个特别好吃的包子",
    "下班路上堵得要命",
    "我真该重新开始跑步了",
    "手机电池最近掉电好快",
    "邻居昨晚开派对到两点，困死了",
    "接孩子放学的时候一团乱",
    "在想明天晚饭做什么",
    "车该洗了，全是灰",
    "开始看一本新书，但是有点慢热",
    "最近工作还行，就是有点无聊",
    "楼下那家餐厅关门了，好可惜",
)
ZH_REPLIES = (
    "听起来不错！",
    "哎呀，辛苦了。",
    "哈哈，太真实了。",
    "好的，我记下了。",
    "希望这周剩下的日子轻松点。",
    "需要我帮你安排什么吗？",
    "有道理。",
    "大家反应怎么样？",
)
ZH_SLOTS: dict[str, tuple[str, ...]] = {
    "城市": ("杭州", "苏州", "厦门", "青岛", "成都", "大理"),
    "城市2": ("西安", "桂林", "三亚", "南京", "昆明"),
    "景点": ("西湖边的游船", "海洋馆", "古城墙", "缆车", "动物园"),
    "孩子": ("小米", "朵朵", "乐乐", "安安"),
    "兴趣": ("钢琴", "围棋", "游泳", "书法", "跆拳道"),
    "月": ("三", "四", "五", "九", "十"),
    "日": tuple(str(d) for d in range(3, 28)),
    "宠物": ("柯基", "小猫", "兔子", "鹦鹉"),
    "宠物名": ("豆豆", "团子", "可乐", "馒头"),
    "公司": ("星河科技", "蓝鲸数据", "远山软件"),
    "年": ("三", "五", "八"),
    "领域": ("支付系统", "移动应用", "数据平台"),
    "食物": ("香菜", "榴莲", "苦瓜", "臭豆腐"),
    "星期": ("一", "二", "三", "四", "五"),
    "设施": ("漏水的水槽", "热水器", "地漏"),
    "东西": ("房车", "新沙发", "钢琴", "电动自行车"),
    "金额": ("8000", "15000", "30000", "4500"),
    "朋友": ("小王", "阿杰", "丽丽", "老周"),
    "书": ("活着", "三体", "平凡的世界", "围城"),
    "饮料": ("绿茶", "大麦茶", "菊花茶"),
    "餐厅": ("外婆家", "绿茶餐厅", "新荣记"),
    "零件": ("发电机", "离合器", "刹车片"),
    "d1": ("12", "14", "18"),
    "d2": ("22", "25", "27"),
    "t1": ("四", "九", "十"),
    "t2": ("五", "十一", "三"),
}


@dataclass
class _Slot:
    """A planned fact: where its statement goes and which question asks about it."""

    position: int
    text: str
    question: str
    category: str
    evidence_position: int


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def _values(rng: random.Random, slots: dict[str, tuple[str, ...]]) -> dict[str, str]:
    values = {key: rng.choice(options) for key, options in slots.items()}
    for pair in (("city", "city2"), ("城市", "城市2"), ("d1", "d2"), ("t1", "t2")):
        # A correction must change the value, not repeat it.
        if pair[0] in values and values[pair[0]] == values.get(pair[1]):
            options = [o for o in slots[pair[1]] if o != values[pair[0]]]
            values[pair[1]] = rng.choice(options)
    return values


def conversation(index: int, turns: int, rng: random.Random, chinese: bool) -> dict[str, Any]:
    """One conversation of `turns` turns with its questions."""
    facts, corrections = (ZH_FACTS, ZH_CORRECTIONS) if chinese else (EN_FACTS, EN_CORRECTIONS)
    filler, replies = (ZH_FILLER, ZH_REPLIES) if chinese else (EN_FILLER, EN_REPLIES)
    slots = ZH_SLOTS if chinese else EN_SLOTS
    user_positions = list(range(0, turns, 2))
    chosen_facts = rng.sample(facts, k=min(len(facts), 12))
    chosen_corrections = rng.sample(corrections, k=min(len(corrections), 3))
    free = user_positions[:]
    rng.shuffle(free)
    plan: list[_Slot] = []
    for category, statement, question in chosen_facts:
        values = _values(rng, slots)
        position = free.pop()
        plan.append(
            _Slot(position, _fill(statement, values), _fill(question, values), category, position)
        )
    half = turns // 2
    for first, second, question in chosen_corrections:
        values = _values(rng, slots)
        early = [p for p in free if p < half]
        late = [p for p in free if p >= half]
        a, b = rng.choice(early), rng.choice(late)
        free.remove(a)
        free.remove(b)
        plan.append(_Slot(a, _fill(first, values), "", "correction-original", b))
        plan.append(_Slot(b, _fill(second, values), _fill(question, values), "correction", b))
    by_position = {slot.position: slot for slot in plan}
    conv_id = f"{'zh' if chinese else 'en'}-{index:02d}"
    rows = []
    for position in range(turns):
        speaker = "user" if position % 2 == 0 else "assistant"
        slot = by_position.get(position)
        if slot is not None:
            text = slot.text
        elif speaker == "user":
            opener, tail = (ZH_OPENERS, ZH_TAILS) if chinese else (EN_OPENERS, EN_TAILS)
            text = rng.choice(opener) + rng.choice(filler) + rng.choice(tail)
        else:
            text = rng.choice(replies)
        row = {"id": f"{conv_id}-t{position:03d}", "speaker": speaker, "text": text}
        row["name"] = ("我" if chinese else "Sam") if speaker == "user" else "assistant"
        rows.append(row)
    questions = [
        {
            "id": f"{conv_id}-q{n:02d}",
            "question": slot.question,
            "evidence": [f"{conv_id}-t{slot.evidence_position:03d}"],
            "category": slot.category,
        }
        for n, slot in enumerate(sorted((s for s in plan if s.question), key=lambda s: s.position))
    ]
    return {"id": conv_id, "turns": rows, "questions": questions}


def generate(
    conversations: int = 24, turns: int = 320, seed: int = 2026
) -> Iterator[dict[str, Any]]:
    """The dataset, one conversation at a time; every fourth conversation is Chinese."""
    rng = random.Random(seed)
    for index in range(conversations):
        yield conversation(index, turns, rng, chinese=index % 4 == 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="output JSONL file (default: stdout)")
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--turns", type=int, default=320)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    lines = (
        json.dumps(conv, ensure_ascii=False, sort_keys=True)
        for conv in generate(args.conversations, args.turns, args.seed)
    )
    text = "\n".join(lines) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
