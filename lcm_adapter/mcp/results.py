"""The MCP tools' structured results: one pydantic model per tool, its output schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# Each model names the keys a client can rely on; `extra="allow"` keeps every other key the
# CLI's `--json` output has, so the structured result and the CLI never drift apart.
_OPEN = ConfigDict(extra="allow")


class SearchResult(BaseModel):
    """`memory_search`: ranked items and raw events for a query."""

    model_config = _OPEN
    session: str = Field(description="The session searched.")
    query: str
    terms: list[str] = Field(description="The search terms taken from the query.")
    items: list[dict[str, Any]] = Field(
        description="{id, kind, evidence_type, status, score, content, source_refs}"
    )
    events: list[dict[str, Any]] = Field(description="{seq, type, role, source_kind, score, text}")


class InspectResult(BaseModel):
    """`memory_inspect`: one item, rule or skill with its history."""

    model_config = _OPEN
    ref: str
    kind: str = Field(description="'item', 'event', 'rule' or 'skill'.")


class ExplainResult(BaseModel):
    """`memory_explain`: the latest assembly and validation run of a session."""

    model_config = _OPEN
    session_id: str
    assembly: dict[str, Any] | None = Field(
        description="{id, trigger, turn, step, injected, budget_tokens, used_tokens, "
        "sections[], item_ids[], omitted[{section, ref, reason}], reasons[], errors[]}"
    )


class StatusResult(BaseModel):
    """`memory_status`: counts, cursors and budget of a session."""

    model_config = _OPEN
    session_id: str
    database: str
    schema_version: int
    counts: dict[str, Any]


class AssembleResult(BaseModel):
    """`memory_assemble`: a dry-run pre-step's block and its explanation."""

    model_config = _OPEN
    session: str
    injected: bool
    text: str = Field(description="The memory block the next step would get.")
    explain: dict[str, Any] | None


class ForgetResult(BaseModel):
    """`memory_forget`: what was erased and what was left alone."""

    model_config = _OPEN
    session_id: str
    items: list[str] = Field(description="Item ids now tombstones (status 'forgotten').")
    events: list[int] = Field(description="Seqs of the events whose text was erased.")
    still_superseded: list[str] = Field(
        description="Items the forgotten one had replaced: they stay superseded, not current."
    )
    already_forgotten: bool
    scrub: dict[str, Any] = Field(description="{checkpoint: complete|busy|...} for the file.")


class RememberResult(BaseModel):
    """`memory_remember`: the item stored (or the one already holding the text)."""

    model_config = _OPEN
    created: bool
    seq: int | None = Field(description="The manual source event's seq (negative), if new.")
    item: dict[str, Any] = Field(
        description="{id, session, kind, evidence_type, content, source_refs}"
    )
