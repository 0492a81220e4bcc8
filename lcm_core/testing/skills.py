"""Contracts of skills: content versions, current skill files, rules and overrides."""

from __future__ import annotations

import dataclasses
from typing import Any

from lcm_core.store.models import Rule, RuleOverride, SkillFile, SkillVersion
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.text.tokens import sha256_hex

T0 = "2025-01-01T00:00:00.000+00:00"


def version(name: str, content: str, number: int, **fields: Any) -> SkillVersion:
    """A skill version whose hash is the SHA-256 of its content."""
    return SkillVersion(
        name=name, content=content, content_hash=sha256_hex(content), version=number, **fields
    )


def rule(skill: str, key: str, text: str = "", **fields: Any) -> Rule:
    """A rule with an id derived from its skill and key."""
    body = text or f"rule {key} of {skill}"
    values: dict[str, Any] = {"category": "workflow", "source_line": 1, **fields}
    return Rule(
        id=f"{skill}:{key}",
        skill_name=skill,
        rule_key=key,
        text=body,
        content_hash=sha256_hex(body),
        **values,
    )


class SkillContract(StoreContractBase):
    """Skill versions are deduped by content, files and rules are replaced by their key."""

    def test_skill_version_is_stored_with_id(self, store: MemoryStore) -> None:
        """add_skill_version returns the stored version with an id and the given fields."""
        stored = store.add_skill_version(
            version("deploy", "# 部署规则", 1, source="user", path="/d.md")
        )
        assert isinstance(stored.id, int)
        assert (stored.name, stored.content, stored.version) == ("deploy", "# 部署规则", 1)
        assert (stored.source, stored.path) == ("user", "/d.md")
        assert stored.created_at != ""
        assert store.list_skill_versions("deploy") == [stored]

    def test_same_skill_content_returns_stored_version(self, store: MemoryStore) -> None:
        """adding a version whose name and hash exist returns the stored one and adds nothing."""
        first = store.add_skill_version(version("deploy", "same body", 1))
        again = store.add_skill_version(version("deploy", "same body", 7, path="/elsewhere"))
        assert again == first
        assert store.list_skill_versions("deploy") == [first]

    def test_skill_versions_oldest_first(self, store: MemoryStore) -> None:
        """list_skill_versions returns every version of one skill, oldest first."""
        v1 = store.add_skill_version(version("deploy", "one", 1))
        v2 = store.add_skill_version(version("deploy", "two", 2, supersedes=v1.id))
        store.add_skill_version(version("review", "one", 1))
        v3 = store.add_skill_version(version("deploy", "three", 3, supersedes=v2.id))
        listed = store.list_skill_versions("deploy")
        assert listed == [v1, v2, v3]
        assert [v.supersedes for v in listed] == [None, v1.id, v2.id]
        assert len({v.id for v in listed}) == 3
        assert store.list_skill_versions("missing") == []
        # Versions numbered alike (a skill file edited twice at one version) keep their order.
        again = store.add_skill_version(version("deploy", "three, edited", 3))
        assert store.list_skill_versions("deploy") == [v1, v2, v3, again]

    def test_skill_file_round_trip(self, store: MemoryStore) -> None:
        """a skill file comes back as written; an unknown name gives None."""
        stored = store.add_skill_version(version("deploy", "body", 1))
        skill = SkillFile(
            name="deploy",
            path="/skills/deploy.md",
            version_id=stored.id,
            version=1,
            enabled=False,
            description="如何部署",
            when_to_use="before a release",
            invocation="/deploy",
            updated_at=T0,
        )
        store.put_skill_file(skill)
        assert store.get_skill_file("deploy") == skill
        assert store.get_skill_file("other") is None

    def test_skill_file_put_replaces(self, store: MemoryStore) -> None:
        """a second put for a skill name replaces its file row."""
        store.put_skill_file(SkillFile("deploy", "/a.md", None, 1, updated_at=T0))
        second = SkillFile("deploy", "/b.md", None, 2, enabled=False, updated_at=T0)
        store.put_skill_file(second)
        assert store.get_skill_file("deploy") == second
        assert store.list_skill_files() == [second]

    def test_list_skill_files(self, store: MemoryStore) -> None:
        """list_skill_files returns every skill file once, ordered by name."""
        for name in ("zeta", "alpha", "部署", "mid"):
            store.put_skill_file(SkillFile(name, f"/{name}.md", None, 1, updated_at=T0))
        assert [s.name for s in store.list_skill_files()] == ["alpha", "mid", "zeta", "部署"]

    def test_rule_round_trip(self, store: MemoryStore) -> None:
        """a rule comes back with every field as written, scope JSON included."""
        stored = rule(
            "deploy",
            "no-friday",
            "周五不发布",
            category="constraint",
            scope={"env": ["prod"], "强制": True},
            source_path="/skills/deploy.md",
            source_line=12,
            active=False,
            updated_at=T0,
        )
        store.upsert_rule(stored)
        assert store.list_rules() == [stored]

    def test_rule_upsert_replaces_by_key(self, store: MemoryStore) -> None:
        """upserting a rule with an existing (skill_name, rule_key) replaces it."""
        store.upsert_rule(rule("deploy", "r1", "old text", updated_at=T0))
        store.upsert_rule(rule("deploy", "r2", "other", updated_at=T0))
        newer = rule("deploy", "r1", "new text", category="safety", updated_at=T0)
        store.upsert_rule(newer)
        listed = store.list_rules(skill_name="deploy")
        assert len(listed) == 2
        assert [r for r in listed if r.rule_key == "r1"] == [newer]

    def test_rule_upsert_replaces_by_key_whatever_the_id(self, store: MemoryStore) -> None:
        """a rule with the key of a stored one but another id replaces it; other skills keep theirs."""
        store.upsert_rule(rule("deploy", "r1", "old text", updated_at=T0))
        store.upsert_rule(rule("review", "r1", "review rule", updated_at=T0))
        renamed = dataclasses.replace(rule("deploy", "r1", "new text", updated_at=T0), id="new-id")
        store.upsert_rule(renamed)
        assert store.list_rules(skill_name="deploy") == [renamed]
        assert [r.text for r in store.list_rules(skill_name="review")] == ["review rule"]

    def test_list_rules_order(self, store: MemoryStore) -> None:
        """list_rules orders by skill name, then source line, then rule key."""
        store.upsert_rule(rule("beta", "k1", source_line=1))
        # Texts sort the other way from keys, so only the key can order the tie.
        store.upsert_rule(rule("alpha", "zz", "a first by text", source_line=2))
        store.upsert_rule(rule("alpha", "bb", "z last by text", source_line=2))
        store.upsert_rule(rule("alpha", "yy", source_line=1))
        keys = [(r.skill_name, r.rule_key) for r in store.list_rules()]
        assert keys == [("alpha", "yy"), ("alpha", "bb"), ("alpha", "zz"), ("beta", "k1")]

    def test_list_rules_filters(self, store: MemoryStore) -> None:
        """list_rules filters by skill name and by the active flag."""
        store.upsert_rule(rule("alpha", "on", source_line=1))
        store.upsert_rule(rule("alpha", "off", source_line=2, active=False))
        store.upsert_rule(rule("beta", "on", source_line=1))
        assert [r.rule_key for r in store.list_rules(skill_name="alpha")] == ["on", "off"]
        assert [r.rule_key for r in store.list_rules(skill_name="alpha", active=True)] == ["on"]
        assert [r.skill_name for r in store.list_rules(active=False)] == ["alpha"]
        assert store.list_rules(skill_name="gamma") == []

    def test_rule_override_round_trip(self, store: MemoryStore) -> None:
        """rule overrides come back as written, None fields included."""
        full = RuleOverride(
            "alpha:on", category="safety", active=False, scope={"团队": "a"}, updated_at=T0
        )
        empty = RuleOverride("beta:on", updated_at=T0)
        store.put_rule_override(full)
        store.put_rule_override(empty)
        store.put_rule_override(RuleOverride("aaa:first", updated_at=T0))
        listed = store.list_rule_overrides()
        assert listed == [RuleOverride("aaa:first", updated_at=T0), full, empty]

    def test_rule_override_put_replaces(self, store: MemoryStore) -> None:
        """a second override of the same rule id replaces the first."""
        store.put_rule_override(RuleOverride("alpha:on", active=False, updated_at=T0))
        second = RuleOverride("alpha:on", category="style", updated_at=T0)
        store.put_rule_override(second)
        assert store.list_rule_overrides() == [second]

    def test_rule_timestamps_filled(self, store: MemoryStore) -> None:
        """rules, overrides and skill files written without updated_at get one."""
        store.upsert_rule(rule("alpha", "k"))
        store.put_rule_override(RuleOverride("alpha:k", active=False))
        store.put_skill_file(SkillFile("alpha", "/a.md", None, 1))
        assert store.list_rules()[0].updated_at != ""
        assert store.list_rule_overrides()[0].updated_at != ""
        skill = store.get_skill_file("alpha")
        assert skill is not None and skill.updated_at != ""
        unchanged = dataclasses.replace(store.list_rules()[0], updated_at="")
        assert unchanged == rule("alpha", "k")
