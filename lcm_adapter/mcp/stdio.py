"""The stdio wire of `lcm mcp`: the SDK's transport, with two gaps closed.

The MCP SDK's stdio transport drops a line that is not JSON-RPC without a word, and
when stdin closes right after a `tools/call` it shuts down before the reply is
written. Here every bad line gets a JSON-RPC error (-32700 for text that is not JSON,
-32600 for JSON that is not a JSON-RPC message), and end of input waits until every
request read so far has been answered (at most `DRAIN_SECONDS`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any, Final

import anyio

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
# How long end of input waits for calls still running before the server stops anyway.
DRAIN_SECONDS: Final = 60.0


def _error_line(code: int, message: str, ident: Any = None) -> str:
    body = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
    return json.dumps(body, ensure_ascii=False) + "\n"


def classify(line: str) -> tuple[str | None, Any]:
    """`(error line or None, request id or None)` for one input line."""
    try:
        value = json.loads(line)
    except ValueError:
        return _error_line(PARSE_ERROR, "Parse error: the line is not JSON"), None
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        ident = value.get("id") if isinstance(value, dict) else None
        return _error_line(
            INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", ident
        ), None
    if "method" not in value and "result" not in value and "error" not in value:
        return _error_line(INVALID_REQUEST, "Invalid Request: no method", value.get("id")), None
    is_request = "method" in value and value.get("id") is not None
    return None, (value["id"] if is_request else None)


def _key(ident: Any) -> str:
    return json.dumps(ident, sort_keys=True)


class Wire:
    """Input and output of one stdio connection, keeping count of unanswered requests."""

    def __init__(self, stdin: Any, stdout: Any) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._lock = anyio.Lock()
        self._pending: set[str] = set()
        self._answered = anyio.Event()

    async def write(self, text: str) -> int:
        """What the SDK writes: one JSON-RPC message per line; answered ids are crossed off."""
        for line in text.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and ("result" in value or "error" in value):
                self._pending.discard(_key(value.get("id")))
                self._answered.set()
        async with self._lock:
            await self._stdout.write(text)
            await self._stdout.flush()
        return len(text)

    async def flush(self) -> None:
        async with self._lock:
            await self._stdout.flush()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            if not line.strip():
                continue
            error, ident = classify(line)
            if error is not None:
                await self.write(error)
                continue
            if ident is not None:
                self._pending.add(_key(ident))
            yield line
        # End of input: let the calls already read finish and answer before we stop.
        with anyio.move_on_after(DRAIN_SECONDS):
            while self._pending:
                self._answered = anyio.Event()
                await self._answered.wait()


def _lowlevel(server: Any) -> Any:
    # MCPServer (mcp 2.x) and FastMCP (mcp 1.x) keep the protocol server here.
    return getattr(server, "_lowlevel_server", None) or getattr(server, "_mcp_server", None)


async def _run(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    text_in = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    text_out = TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True)
    wire = Wire(anyio.wrap_file(text_in), anyio.wrap_file(text_out))
    lowlevel = _lowlevel(server)
    async with stdio_server(stdin=wire, stdout=wire) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


def run_stdio(server: Any) -> None:
    """Serve `server` on stdin/stdout until the client closes stdin and every call is answered."""
    if _lowlevel(server) is None:
        server.run()  # an SDK we do not know inside: its own transport
        return
    anyio.run(_run, server)
