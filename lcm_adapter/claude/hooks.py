"""`lcm hook EVENT`: Claude-Code-style command hooks, for Claude Code and DSH's hooks bridge.

The host writes one JSON object on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, plus `prompt`, `tool_name`/`tool_input`, `source` or `trigger` by
event) and reads our reply on stdout. Every event first captures what the transcript
gained since the last hook. Then:

- `user-prompt-submit`: the memory block for the prompt, as `additionalContext` (at most
  `hooks.maxContextChars`, whole entries, most important first);
- `session-start` (`startup`, `resume`, `clear`, `compact`): the task state, the rules
  and what a compaction took away, less what the history still shows; with `compact`
  the compaction is recorded first when the transcript does not say so yet;
- `pre-tool-use`: a deny with its reason when a configured precondition fails;
- `pre-compact`, `post-tool-use`, `stop`, `session-end`: capture only (`pre-compact`
  takes in the last lines before Claude Code compacts them away).

An empty answer has its reason in the assembly log (`lcm explain`). Memory must never
stop the user's agent: bad stdin, a broken database or any error prints no reply, logs
one line (stderr and `hooks.log` beside the database) and exits 0. A hook never creates
a folder for a database the user named: it says so instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from lcm_adapter.claude.cap import cap_block
from lcm_core.assembly.budget import HostWindow
from lcm_core.assembly.step import StepMessage
from lcm_core.config import Config
from lcm_core.steps.prestep import StepRequest
from lcm_core.store.registry import parse_store_url

EVENTS: Final[dict[str, str]] = {
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "session-start": "SessionStart",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
LOG_FILE: Final = "hooks.log"
MAX_STDIN_BYTES: Final = 16 << 20
MAX_LOG_CHARS: Final = 500


@dataclass(slots=True)
class HookOutcome:
    """The reply to print (None prints nothing) and the problems to log."""

    reply: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)


def event_name(name: str) -> str | None:
    """The CLI name of a hook event, from either spelling (`pre-tool-use`, `PreToolUse`)."""
    folded = name.replace("-", "").replace("_", "").lower()
    for cli_name, host_name in EVENTS.items():
        if folded in (cli_name.replace("-", ""), host_name.lower()):
            return cli_name
    return None


def parse_payload(raw: bytes) -> dict[str, Any]:
    """The hook's JSON object; raises ValueError with a short reason otherwise."""
    if len(raw) > MAX_STDIN_BYTES:
        raise ValueError(f"stdin is larger than {MAX_STDIN_BYTES} bytes")
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        raise ValueError("stdin is empty; expected the hook's JSON object")
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"stdin holds a JSON {type(value).__name__}, not an object")
    session = value.get("session_id")
    if not isinstance(session, str) or not session.strip():
        raise ValueError("the hook payload has no session_id")
    return value


def context_reply(host_event: str, text: str) -> dict[str, Any]:
    """A reply that adds `text` to the model's context."""
    return {"hookSpecificOutput": {"hookEventName": host_event, "additionalContext": text}}


def deny_reply(reason: str) -> dict[str, Any]:
    """A PreToolUse reply that refuses the tool call, with the reason the model sees."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def folder_problem(db_url: str, named: bool) -> str | None:
    """Why the database cannot be opened without creating a folder nobody asked for.

    A missing file in a folder that exists is created, as the user named it. A missing
    folder is created only for the default database, and only inside the host's home
    (`~/.claude`, `~/.dsh`) when that exists; a named one is never made up.
    """
    from lcm_adapter.paths import missing_database

    missing = missing_database(db_url)
    if missing is None or missing.parent.is_dir():
        return None
    if not named and missing.parent.parent.is_dir():
        try:
            missing.parent.mkdir(mode=0o700)
            return None
        except OSError as exc:
            return f"cannot create {missing.parent} for the memory database: {exc.strerror}"
    return (
        f"no folder {missing.parent} for the memory database {missing.name}; nothing was "
        "created: create the folder or name another --db"
    )


def handle(
    event: str, payload: Mapping[str, Any], db_url: str, config: Config, *, named: bool = True
) -> HookOutcome:
    """Answer one hook event; never raises (problems come back in the outcome).

    `named`: the user named the database (`--db`, `$LCM_DB`) rather than taking the default.
    """
    outcome = HookOutcome()
    problem = folder_problem(db_url, named)
    if problem is not None:
        outcome.problems.append(problem)
        return outcome
    try:
        from lcm_adapter.runtime import MemoryRuntime

        runtime = MemoryRuntime.open(db_url, config)
    except Exception as exc:
        outcome.problems.append(f"cannot open the memory database: {exc}")
        return outcome
    try:
        _answer(runtime, event, payload, outcome, config.hooks.max_context_chars)
    except Exception as exc:
        outcome.reply = None
        outcome.problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        runtime.close()
    return outcome


def _answer(
    runtime: Any, event: str, payload: Mapping[str, Any], outcome: HookOutcome, cap: int
) -> None:
    session_id = str(payload["session_id"])
    # Our blocks reach the transcript only after the hook returns, so what was injected
    # and not read back yet is taken from the assembly logs as well.
    runtime.shown_from_logs = True
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        runtime.cwd = cwd  # preconditions and validation resolve paths against it
        runtime.note_cwd(session_id, cwd)  # the session's project (no write when known)
    transcript = payload.get("transcript_path")
    synced = isinstance(transcript, str) and bool(transcript)
    if synced:
        synced = _capture(runtime, session_id, str(transcript), outcome)
    host = _host_window(payload)
    if event == "user-prompt-submit":
        prompt = payload.get("prompt")
        messages = []
        if isinstance(prompt, str) and prompt.strip():
            messages.append(StepMessage("user", prompt, "user"))
        _reply_block(runtime, event, session_id, messages, None, outcome, cap, host)
    elif event == "session-start":
        if payload.get("source") == "compact" and synced:
            from lcm_adapter.claude.transcript import mark_compaction

            mark_compaction(runtime, session_id, str(transcript))
        # No prompt yet: the task state, the rules and what a compaction took away, not
        # turns picked by the last message's words (the prompt's own block follows).
        _reply_block(runtime, event, session_id, [], "", outcome, cap, host)
    elif event == "pre-tool-use":
        tool = payload.get("tool_name")
        args = payload.get("tool_input") or {}
        decision = runtime.pre_tool(session_id, str(tool or ""), args)
        if decision.get("kind") == "deny":
            outcome.reply = deny_reply(
                str(decision.get("reason") or "denied by a memory precondition")
            )
    last_error = getattr(getattr(runtime, "stats", None), "last_error", None)
    if last_error:
        outcome.problems.append(str(last_error))


def _host_window(payload: Mapping[str, Any]) -> HostWindow | None:
    """What Claude Code's environment and the hook input say of its context size."""
    from lcm_adapter.claude.window import claude_host_window

    return claude_host_window(os.environ, payload)


def _capture(runtime: Any, session_id: str, transcript: str, outcome: HookOutcome) -> bool:
    """Capture the transcript's new lines; False when it could not be read."""
    from lcm_adapter.claude.transcript import NotATranscriptError, sync_transcript

    try:
        synced = sync_transcript(runtime, session_id, transcript)
    except NotATranscriptError as exc:
        outcome.problems.append(f"transcript_path {exc}")
        return False
    except Exception as exc:  # capture failing must not cost the prompt its memory
        outcome.problems.append(f"transcript {transcript}: {type(exc).__name__}: {exc}")
        return False
    outcome.problems.extend(f"transcript: {e}" for e in synced.errors[:3])
    return True


def _reply_block(
    runtime: Any,
    event: str,
    session_id: str,
    messages: list[StepMessage],
    query: str | None,
    outcome: HookOutcome,
    cap: int,
    host: HostWindow | None = None,
) -> None:
    """Reply with the block, capped; an empty one leaves its reason in the assembly log."""
    step = runtime.step(StepRequest(session_id, messages, query=query, host=host))
    block = step.text if step is not None else ""
    text = cap_block(block, cap)
    if block and not text:
        outcome.problems.append(
            f"the memory block does not fit hooks.maxContextChars ({cap}); nothing was added"
        )
    if text:
        outcome.reply = context_reply(EVENTS[event], text)


def log_path(db_url: str) -> Path | None:
    """`hooks.log` beside the database file; None for an in-memory database."""
    try:
        location = parse_store_url(db_url).location
    except Exception:
        return None
    return None if location == ":memory:" else Path(location).expanduser().parent / LOG_FILE


def log_problems(db_url: str, event: str, problems: list[str]) -> list[str]:
    """Append the problems to the hook log (best effort); returns the lines written."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [f"{stamp} lcm hook {event}: {p[:MAX_LOG_CHARS]}" for p in problems]
    path = log_path(db_url)
    if lines and path is not None and path.parent.is_dir():
        try:
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
            path.chmod(0o600)
        except OSError:
            pass
    return lines
