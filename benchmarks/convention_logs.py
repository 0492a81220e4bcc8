"""Write a `gen_conventions.py` dialogue as DSH session logs, one file per session, for `lcm ingest`.

Each session becomes a log as DSH 0.2.1 writes it: a `session` header (id, version 4,
createdAt, cwd = the dialogue's project, so every session of a dialogue shares one
project), then per turn `turn/start`, the `user/message`, for each reply `step/start`,
`assistant/message` and `step/end`, and `turn/end`; seqs count from 0, times are epoch
milliseconds from the dialogue's ISO times. A user turn with no reply (the request
session's only turn) leaves its turn open, as a log looks just before the agent's step.
Files are `DIR/<dialogue id>/<nn>.jsonl`, numbered from 00 so that name order, which
`lcm ingest` of a folder follows, is time order.

    python benchmarks/convention_logs.py --dataset /tmp/conventions.jsonl --out /tmp/logs
    lcm --db /tmp/conv.sqlite ingest /tmp/logs/conv-000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

from lcm_core.reports.files import ExportError
from lcm_core.reports.jsonl import read_jsonl

MODEL_SOURCE = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}


def epoch_ms(iso: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 UTC time such as 2026-03-02T09:00:05Z."""
    moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(moment.astimezone(dt.UTC).timestamp() * 1000)


def _message_id(session_id: str, seq: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"lcm-conventions/{session_id}/{seq}"))


class _Log:
    """The events of one session log, numbered and stamped in order."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.rows: list[dict[str, Any]] = []
        self.last_time = -1

    def add(self, kind: str, time: int, data: dict[str, Any], **extra: Any) -> int:
        """Append an event; its time never runs backwards, so seq and time order agree."""
        self.last_time = max(time, self.last_time + 1)
        seq = len(self.rows)
        self.rows.append({"type": kind, "seq": seq, "time": self.last_time, "data": data, **extra})
        return seq


def session_events(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The DSH events of one session of a dialogue, header excluded."""
    log = _Log(session["id"])
    turn, step, open_turn, context = 0, 0, False, 900
    for entry in session["turns"]:
        moment, text = epoch_ms(entry["time"]), entry["text"]
        content = [{"type": "text", "text": text}]
        if entry["speaker"] == "user" or not open_turn:
            if open_turn:
                log.add(
                    "turn/end", log.last_time + 80, {"turn": turn, "reason": {"kind": "completed"}}
                )
            turn, step, open_turn = turn + 1, 0, True
            log.add("turn/start", moment - 600, {"turn": turn})
        context += len(text) // 4 + 1
        if entry["speaker"] == "user":
            seq = len(log.rows)
            said = {"content": content, "source": {"kind": "user"}, "role": "user",
                    "id": _message_id(log.session_id, seq)}  # fmt: skip
            log.add("user/message", moment, said, surfaceOp="append")
            continue
        step += 1
        log.add("step/start", moment - 1500, {"turn": turn, "step": step})
        seq = len(log.rows)
        message = {"role": "assistant", "content": content, "source": MODEL_SOURCE,
                   "id": _message_id(log.session_id, seq)}  # fmt: skip
        usage = {"inputTokens": context, "outputTokens": len(text) // 4 + 1}
        reply = {"turn": turn, "step": step, "message": message, "usage": usage}
        log.add("assistant/message", moment, reply, surfaceOp="append")
        log.add("step/end", moment + 40, {"turn": turn, "step": step, "reason": "end-turn"})
    last = session["turns"][-1] if session["turns"] else None
    if open_turn and last is not None and last["speaker"] == "assistant":
        log.add("turn/end", log.last_time + 80, {"turn": turn, "reason": {"kind": "completed"}})
    return log.rows


def header(session: dict[str, Any], cwd: str) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 4,
        "id": session["id"],
        "createdAt": epoch_ms(session["start"]),
        "cwd": cwd,
        "dshVersion": "0.2.1",
        "profile": "web",
    }


def write_logs(dialogue: dict[str, Any], folder: Path) -> list[Path]:
    """Write every session of the dialogue to `folder/<dialogue id>/<nn>.jsonl`; the paths in order."""
    target = folder / dialogue["id"]
    target.mkdir(parents=True, exist_ok=True)
    width = max(2, len(str(len(dialogue["sessions"]) - 1)))
    paths: list[Path] = []
    for n, session in enumerate(dialogue["sessions"]):
        rows = [header(session, dialogue["project"]), *session_events(session)]
        path = target / f"{n:0{width}d}.jsonl"
        lines = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True, help="a gen_conventions.py file")
    parser.add_argument(
        "--out", type=Path, required=True, help="folder for <dialogue id>/<nn>.jsonl"
    )
    parser.add_argument("--ids", nargs="*", help="only these dialogue ids (default: all)")
    args = parser.parse_args(argv)
    if not args.dataset.is_file():
        parser.error(f"no such dataset file: {args.dataset}")
    wanted = set(args.ids or ())
    dialogues = files = 0
    try:
        for dialogue in read_jsonl(args.dataset):
            if wanted and dialogue.get("id") not in wanted:
                continue
            files += len(write_logs(dialogue, args.out))
            dialogues += 1
    except ExportError as exc:
        parser.error(str(exc))
    except (KeyError, TypeError, ValueError) as exc:
        parser.error(f"{args.dataset}: not a gen_conventions.py dialogue ({exc!r})")
    print(f"wrote {files} session logs of {dialogues} dialogues under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
