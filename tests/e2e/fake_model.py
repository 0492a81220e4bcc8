"""A fake model on 127.0.0.1 that speaks the Anthropic Messages SSE protocol DSH uses.

It records every request body and answers from a script: each reply is taken from a
queue (text or a tool call), and an empty queue gives a default text. DSH marks its
compaction call with the header `x-deepseek-harness-compact: 1`; that call gets a short
summary instead, so compaction never eats a scripted reply, and its body is kept apart.
Any other path is a 404, which ends a DSH turn with an error.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_TEXT = "好的，明白了。"


@dataclass(frozen=True, slots=True)
class Text:
    """A plain text reply."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A reply that calls one tool."""

    name: str
    input: dict[str, Any]
    id: str = "toolu_01"


Reply = Text | ToolCall


@dataclass
class FakeModel:
    """The server's state: the scripted replies and every body received, in order."""

    replies: deque[Reply] = field(default_factory=deque)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    summary_bodies: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 50
    # The reply when the script is empty.
    default_text: str = DEFAULT_TEXT
    summary: str = "<summary>用户设定了约束和预算；其余是闲聊。</summary>"
    # When set, the n-th summary (from 1) is this template with `{n}` filled in, so a
    # test can tell which compaction a request body follows.
    numbered_summary: str | None = None
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

    def next_reply(self, body: dict[str, Any], compaction: bool = False) -> Reply:
        with self.lock:
            if compaction:
                self.summary_bodies.append(body)
                if self.numbered_summary is not None:
                    return Text(self.numbered_summary.format(n=len(self.summary_bodies)))
                return Text(self.summary)
            self.bodies.append(body)
            return self.replies.popleft() if self.replies else Text(self.default_text)

    def start(self) -> FakeModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/v1/messages"):
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                body = json.loads(raw or b"{}")
                compaction = self.headers.get("x-deepseek-harness-compact") == "1"
                reply = model.next_reply(body, compaction)
                payload = b"".join(_sse(body, reply, model.input_tokens))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _event(name: str, data: dict[str, Any]) -> bytes:
    data = {"type": name, **data}
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _sse(body: dict[str, Any], reply: Reply, input_tokens: int) -> list[bytes]:
    """The event stream of one reply, in the order the protocol requires."""
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 0},
    }
    out = [_event("message_start", {"message": message})]
    if isinstance(reply, ToolCall):
        block = {"type": "tool_use", "id": reply.id, "name": reply.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
        stop = "end_turn"
    out.append(_event("content_block_start", {"index": 0, "content_block": block}))
    out.append(_event("content_block_delta", {"index": 0, "delta": delta}))
    out.append(_event("content_block_stop", {"index": 0}))
    out.append(
        _event("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 7}})
    )
    out.append(_event("message_stop", {}))
    return out


def request_texts(body: dict[str, Any]) -> list[str]:
    """Every text block of the request's messages, in order (tool results included)."""
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    texts.append(inner)
                else:
                    texts.extend(b.get("text", "") for b in inner or [] if isinstance(b, dict))
    return texts
