"""`lcm serve`: the long-lived process a host plugin talks to, JSON-RPC 2.0 over stdio.

One JSON object per line in each direction. Requests (with an `id`) are answered in
the order they arrive, one at a time; notifications (no `id`) are capture and
bookkeeping, never answered, so the host never waits on them. Because one loop works
through stdin in order, an event sent before a pre-step is stored before that pre-step
runs; events that are already waiting together are captured in one transaction.

Methods:
  initialize {settings?, cwd?}                -> {name, version, db, schema, pid, warnings}
  preStep {sessionId, messages, turn, step, visibleSeqs?, surfaceSeqs?, host?}
                                              -> {message | null}
          (`host`: DSH's model window and compaction settings, see `host_window.py`)
  preTool {sessionId, tool, args, cwd?}       -> {kind: allow} | {kind: deny, reason}
  command {sessionId, input | argv}           -> {ok, text}
  ping                                        -> {ok, stats}
  shutdown                                    -> {} and the process exits
  event {sessionId, event}                    (notification) capture one event
  events {sessionId, events}                  (notification) capture a replayed batch
  skip {sessionId, turn, step, reason}        (notification) the host went on without us

Nothing a host sends can stop the loop: a bad line gets a JSON-RPC error (when it can
be answered) and the next line is read. Our own stdout carries only protocol lines;
anything else that tries to print goes to stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any, Final

from lcm_adapter.commands import split_input
from lcm_adapter.dsh.host_window import dsh_host_window
from lcm_adapter.dsh.inbox import Inbox, event_of, take_batch
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.config import load_config
from lcm_core.steps.reextract import upgrade_on_open
from lcm_core.text.lazy_regex import compile_all

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
SERVER_NAME: Final = "long-conversation-memory"
# Most events captured in one transaction when they arrive together.
MAX_BATCH: Final = 500


class ParamsError(ValueError):
    """The params of a call are missing a field or have the wrong type."""


def _text(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise ParamsError(f"{key} must be a non-empty string")
    return value


def _opt_int(params: Mapping[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamsError(f"{key} must be an integer")
    return value


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("long-conversation-memory")
    except Exception:
        return "unknown"


class Sidecar:
    """Answers one message at a time; owns the runtime (opened lazily, at most once)."""

    def __init__(self, open_runtime: Callable[[Mapping[str, Any] | None], MemoryRuntime]) -> None:
        self._open_runtime = open_runtime
        self._runtime: MemoryRuntime | None = None
        self._open_error: str | None = None
        self._settings: Mapping[str, Any] | None = None
        self.stopping = False
        self.protocol_errors = 0

    # --- runtime -----------------------------------------------------------------
    def runtime(self) -> MemoryRuntime | None:
        """The runtime, opened on first use; None (with the reason kept) if it cannot open."""
        if self._runtime is None and self._open_error is None:
            try:
                self._runtime = self._open_runtime(self._settings)
            except Exception as exc:  # keep serving: every answer then says why
                self._open_error = str(exc) or repr(exc)
                _log(f"cannot open the memory database: {self._open_error}")
            else:
                self._upgrade(self._runtime)
        return self._runtime

    def _upgrade(self, runtime: MemoryRuntime) -> None:
        """Items derived by older extraction rules are re-derived once, on first open."""
        for report in upgrade_on_open(runtime.store, runtime.config):
            for error in report.errors:
                _log(f"re-extraction of {report.session_id}: {error}")

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()

    # --- one message ---------------------------------------------------------------
    def handle_line(self, line: str) -> str | None:
        """The answer line for one input line, or None for a notification or blank line."""
        if not line.strip():
            return None
        try:
            message = json.loads(line)
        except ValueError as exc:
            self.protocol_errors += 1
            return _encode(_error(None, PARSE_ERROR, f"not JSON: {exc}"))
        answer = self.handle(message)
        return None if answer is None else _encode(answer)

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The JSON-RPC response to one message (None for notifications)."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            self.protocol_errors += 1
            ident = message.get("id") if isinstance(message, dict) else None
            return _error(ident, INVALID_REQUEST, "expected an object with a method")
        method: str = message["method"]
        params = message.get("params") or {}
        is_call = "id" in message
        ident = message.get("id")
        if not isinstance(params, dict):
            self.protocol_errors += 1
            return _error(ident, INVALID_PARAMS, "params must be an object") if is_call else None
        handler = _CALLS.get(method) if is_call else _NOTIFICATIONS.get(method)
        if handler is None:
            self.protocol_errors += 1
            return (
                _error(ident, METHOD_NOT_FOUND, f"unknown method {method!r}") if is_call else None
            )
        try:
            result = handler(self, params)
        except ParamsError as exc:
            self.protocol_errors += 1
            return _error(ident, INVALID_PARAMS, str(exc)) if is_call else None
        except Exception as exc:  # the runtime never raises, but the loop must outlive bugs
            _log(f"{method} failed: {exc!r}")
            return _error(ident, INTERNAL_ERROR, f"{method} failed: {exc!r}") if is_call else None
        return {"jsonrpc": "2.0", "id": ident, "result": result} if is_call else None

    # --- calls -------------------------------------------------------------------
    def initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        settings = params.get("settings")
        if settings is not None and not isinstance(settings, dict):
            raise ParamsError("settings must be an object")
        cwd = params.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ParamsError("cwd must be a string")
        if self._runtime is None:
            self._settings = settings
            self._open_error = None
        elif settings is not None:
            self._runtime.config = load_config(settings)
        runtime = self.runtime()
        if runtime is not None:
            runtime.cwd = cwd or runtime.cwd
            runtime.refresh_skills()
        return {
            "name": SERVER_NAME,
            "version": _version(),
            "pid": os.getpid(),
            "db": runtime.store.url if runtime else None,
            "schema": runtime.store.schema_version() if runtime else None,
            "error": self._open_error,
            "warnings": list(runtime.config.warnings) if runtime else [],
        }

    def pre_step(self, params: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _text(params, "sessionId")
        messages = params.get("messages") or []
        visible = params.get("visibleSeqs")
        surface = params.get("surfaceSeqs")
        if not isinstance(messages, list):
            raise ParamsError("messages must be a list")
        if visible is not None and not isinstance(visible, list):
            raise ParamsError("visibleSeqs must be a list of integers")
        if surface is not None and not isinstance(surface, list):
            raise ParamsError("surfaceSeqs must be a list of integers")
        turn, step = _opt_int(params, "turn"), _opt_int(params, "step")
        runtime = self.runtime()
        if runtime is None:
            return {"message": None, "reason": f"database unavailable: {self._open_error}"}
        message = runtime.pre_step(
            session_id,
            messages,
            turn,
            step,
            visible_seqs=visible,
            surface_seqs=surface,
            host=dsh_host_window(params.get("host")),
        )
        return {"message": message}

    def pre_tool(self, params: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _text(params, "sessionId")
        tool = _text(params, "tool")
        cwd = params.get("cwd")
        runtime = self.runtime()
        if runtime is None:
            return {"kind": "allow"}
        return runtime.pre_tool(
            session_id, tool, params.get("args"), cwd=cwd if isinstance(cwd, str) else None
        )

    def command(self, params: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _text(params, "sessionId")
        argv = params.get("argv")
        if argv is None:
            raw = params.get("input", "")
            if not isinstance(raw, str):
                raise ParamsError("input must be a string")
            argv = split_input(raw)
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ParamsError("argv must be a list of strings")
        runtime = self.runtime()
        if runtime is None:
            return {"ok": False, "text": f"memory: database unavailable: {self._open_error}"}
        result = runtime.command_result(session_id, argv)
        return {"ok": result.ok, "text": result.text}

    def ping(self, params: Mapping[str, Any]) -> dict[str, Any]:
        runtime = self.runtime()
        stats = runtime.stats.to_dict() if runtime else {}
        return {"ok": runtime is not None, "stats": stats, "protocolErrors": self.protocol_errors}

    def shutdown(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.stopping = True
        return {}

    # --- notifications -------------------------------------------------------------
    def event(self, params: Mapping[str, Any]) -> None:
        session_id = _text(params, "sessionId")
        runtime = self.runtime()
        if runtime is not None:
            runtime.on_event(session_id, params.get("event"))

    def capture(self, session_id: str, events: list[Any]) -> None:
        """Store events that arrived together: one, or a batch in one transaction."""
        runtime = self.runtime()
        if runtime is None:
            return
        try:
            if len(events) == 1:
                runtime.on_event(session_id, events[0])
            else:
                runtime.on_events(session_id, events)
        except Exception as exc:  # the runtime never raises, but the loop must outlive bugs
            _log(f"capture failed: {exc!r}")

    def events(self, params: Mapping[str, Any]) -> None:
        session_id = _text(params, "sessionId")
        batch = params.get("events")
        if not isinstance(batch, list):
            raise ParamsError("events must be a list")
        runtime = self.runtime()
        if runtime is not None:
            runtime.on_events(session_id, batch)

    def skip(self, params: Mapping[str, Any]) -> None:
        session_id = _text(params, "sessionId")
        reason = params.get("reason")
        runtime = self.runtime()
        if runtime is not None:
            runtime.record_skip(
                session_id,
                _opt_int(params, "turn"),
                _opt_int(params, "step"),
                reason if isinstance(reason, str) else "skipped by the host plugin",
            )


Handler = Callable[[Sidecar, Mapping[str, Any]], Any]
_CALLS: Final[dict[str, Handler]] = {
    "initialize": Sidecar.initialize,
    "preStep": Sidecar.pre_step,
    "preTool": Sidecar.pre_tool,
    "command": Sidecar.command,
    "ping": Sidecar.ping,
    "shutdown": Sidecar.shutdown,
}
_NOTIFICATIONS: Final[dict[str, Handler]] = {
    "event": Sidecar.event,
    "events": Sidecar.events,
    "skip": Sidecar.skip,
}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _encode(message: Mapping[str, Any]) -> str:
    # Lone surrogates from a broken host string must not kill the writer.
    return (
        json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
        .encode("utf-8", "surrogatepass")
        .decode("utf-8", "replace")
    )


def _log(text: str) -> None:
    try:
        sys.stderr.write(f"lcm serve: {text}\n")
        sys.stderr.flush()
    except Exception:
        pass


def serve(sidecar: Sidecar, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Read lines until EOF or `shutdown`; returns the exit code."""
    inbox = Inbox(stdin)
    try:
        while (line := inbox.get()) is not None:
            event = event_of(line)
            if event is not None:
                sidecar.capture(event[0], take_batch(inbox, event, MAX_BATCH))
                continue
            answer = sidecar.handle_line(line)
            if answer is not None:
                stdout.write(answer.encode("utf-8") + b"\n")
                stdout.flush()
            if sidecar.stopping:
                break
    except BrokenPipeError:
        pass  # the host went away; nothing left to answer
    finally:
        sidecar.close()
    return 0


def _on_term(signum: int, frame: Any) -> None:
    raise SystemExit(0)  # unwinds through serve(), which closes the store


def main(db: str | None = None, settings: Mapping[str, Any] | None = None) -> int:
    """Serve on this process's stdio; the database is `db`, else `$LCM_DB`, else the default.

    `settings` apply until the host's `initialize` sends its own.
    """
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the protocol stream
    signal.signal(signal.SIGTERM, _on_term)

    def open_runtime(given: Mapping[str, Any] | None) -> MemoryRuntime:
        return MemoryRuntime.open(db, given if given is not None else settings)

    # Before the first request, not inside it: steps have a deadline, this process has time.
    compile_all()
    code = 0
    try:
        code = serve(Sidecar(open_runtime), sys.stdin.buffer, protocol_out)
    except SystemExit as exc:  # SIGTERM, after serve() closed the store
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        # The stdin reader thread may be blocked in a read; a normal interpreter exit
        # would wait on its lock and abort. Everything is closed and flushed by now.
        for stream in (protocol_out, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="lcm serve", description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="database URL or path")
    sys.exit(main(parser.parse_args().db))
