"""A fake Anthropic Messages server on 127.0.0.1 for the real Claude Code CLI.

It answers `POST /v1/messages` as a stream (`"stream": true`, server-sent events) or as
one JSON message, and `POST /v1/messages/count_tokens` with a count; anything else is a
404. Every request body is kept, in order, with its path and whether it asked for a
summary: Claude Code's compaction request ends with its "create a detailed summary"
instruction, and gets a scripted `<summary>` so compaction never eats a reply.

`input_tokens` is what each reply reports as the size of the request; a test sets it
near the context window for one reply to make Claude Code compact on its own before
its next request.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_TEXT = "好的，明白了。"
# The words Claude Code's compaction instruction starts its task with (2.1.x).
SUMMARY_REQUEST = "create a detailed summary of the conversation"


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A reply that calls one of Claude Code's tools."""

    name: str
    input: dict[str, Any]
    id: str = "toolu_e2e_01"


Reply = str | ToolUse


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the server received it."""

    path: str
    body: dict[str, Any]
    summary: bool
    stream: bool


@dataclass
class FakeAnthropic:
    """The server's state: scripted replies, reported sizes and every request received."""

    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Request] = field(default_factory=list)
    summary: str = "<analysis>闲聊。</analysis>\n<summary>之前主要是闲聊。</summary>"
    input_tokens: int = 60
    # Sizes reported by the next replies, one each, before `input_tokens` applies again.
    next_sizes: deque[int] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def report_size(self, *tokens: int) -> None:
        """Make the next replies report these request sizes (in tokens)."""
        with self.lock:
            self.next_sizes.extend(tokens)

    @property
    def model_requests(self) -> list[Request]:
        """The requests that were not compaction summaries."""
        with self.lock:
            return [r for r in self.requests if not r.summary]

    @property
    def summary_requests(self) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.summary]

    def answer(self, path: str, body: dict[str, Any]) -> tuple[Reply, int]:
        """The reply and the size to report for one request, which is recorded."""
        summary = is_summary_request(body)
        with self.lock:
            self.requests.append(Request(path, body, summary, bool(body.get("stream"))))
            size = self.next_sizes.popleft() if self.next_sizes else self.input_tokens
            if summary:
                return self.summary, min(size, self.input_tokens)
            return (self.replies.popleft() if self.replies else DEFAULT_TEXT), size

    def start(self) -> FakeAnthropic:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def _send(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._send(404, "application/json", b"{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                path = self.path.partition("?")[0].rstrip("/")
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if not isinstance(body, dict):
                    body = {}
                if path.endswith("/v1/messages/count_tokens"):
                    count = json.dumps({"input_tokens": model.input_tokens}).encode()
                    self._send(200, "application/json", count)
                    return
                if not path.endswith("/v1/messages"):
                    self._send(404, "application/json", b"{}")
                    return
                reply, size = model.answer(path, body)
                if body.get("stream"):
                    self._send(200, "text/event-stream", b"".join(_sse(body, reply, size)))
                else:
                    message = _message(body, reply, size)
                    self._send(200, "application/json", json.dumps(message).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def is_summary_request(body: dict[str, Any]) -> bool:
    """Whether the request is Claude Code's compaction call (its last user text asks for it)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return any(SUMMARY_REQUEST in text for text in _texts(message.get("content")))
    return False


def _block(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, ToolUse):
        return {"type": "tool_use", "id": reply.id, "name": reply.name, "input": reply.input}
    return {"type": "text", "text": reply}


def _message(body: dict[str, Any], reply: Reply, size: int) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": [_block(reply)],
        "stop_reason": "tool_use" if isinstance(reply, ToolUse) else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": size, "output_tokens": 7},
    }


def _event(name: str, data: dict[str, Any]) -> bytes:
    data = {"type": name, **data}
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _sse(body: dict[str, Any], reply: Reply, size: int) -> list[bytes]:
    """The event stream of one reply, in the order the protocol requires."""
    whole = _message(body, reply, size)
    start = {**whole, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": size, "output_tokens": 0}
    if isinstance(reply, ToolUse):
        block: dict[str, Any] = {**_block(reply), "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply}
    stop = {"stop_reason": whole["stop_reason"], "stop_sequence": None}
    return [
        _event("message_start", {"message": start}),
        _event("content_block_start", {"index": 0, "content_block": block}),
        _event("content_block_delta", {"index": 0, "delta": delta}),
        _event("content_block_stop", {"index": 0}),
        _event("message_delta", {"delta": stop, "usage": {"output_tokens": 7}}),
        _event("message_stop", {}),
    ]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            out.extend(_texts(block.get("content")))
    return out


def request_texts(body: dict[str, Any]) -> list[str]:
    """Every text block of the request's messages, in order (system turns and tool results too)."""
    texts: list[str] = []
    for message in body.get("messages") or []:
        texts.extend(_texts(message.get("content")))
    return texts
