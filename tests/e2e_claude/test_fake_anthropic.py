"""The fake Anthropic server answers both ways the Messages API can be asked, and keeps every body."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, ToolUse


def post(model: FakeAnthropic, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        model.base_url + path,
        data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers["content-type"], response.read()


def test_one_json_message_a_stream_and_a_count(model: FakeAnthropic) -> None:
    model.script("预算是 3000 元。", ToolUse("Read", {"file_path": "/tmp/说明.txt"}))
    ask = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "预算？"}]}
    kind, raw = post(model, "/v1/messages?beta=true", ask)
    message = json.loads(raw)
    assert kind == "application/json" and message["content"][0]["text"] == "预算是 3000 元。"
    kind, raw = post(model, "/v1/messages", {**ask, "stream": True})
    events = [
        json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")
    ]
    assert kind == "text/event-stream"
    types = [e["type"] for e in events]
    assert types[:1] == ["message_start"] and types[-1:] == ["message_stop"]
    delta = next(e for e in events if e["type"] == "content_block_delta")["delta"]
    assert json.loads(delta["partial_json"]) == {"file_path": "/tmp/说明.txt"}
    _, raw = post(model, "/v1/messages/count_tokens", ask)
    assert json.loads(raw) == {"input_tokens": model.input_tokens}
    assert [r.stream for r in model.requests] == [False, True]
    assert model.requests[0].body["messages"][0]["content"] == "预算？"
    with pytest.raises(urllib.error.HTTPError):
        post(model, "/v1/complete", ask)


def test_a_summary_request_gets_the_summary_and_keeps_the_script(model: FakeAnthropic) -> None:
    model.script("继续。")
    text = "Your task is to create a detailed summary of the conversation so far."
    summary = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }
    _, raw = post(model, "/v1/messages", summary)
    assert "<summary>" in json.loads(raw)["content"][0]["text"]
    model.report_size(995_000)
    _, raw = post(model, "/v1/messages", {"model": "m", "messages": []})
    reply = json.loads(raw)
    assert reply["content"][0]["text"] == "继续。" and reply["usage"]["input_tokens"] == 995_000
    assert [r.summary for r in model.requests] == [True, False]
