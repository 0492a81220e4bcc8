"""A stand-in sidecar for plugin tests: logs what it receives; misbehaves on request."""

import json
import os
import sys
import time

mode, log_path = sys.argv[1], sys.argv[2]
with open(log_path + ".pids", "a", encoding="utf-8") as pids:
    pids.write(f"{os.getpid()}\n")
for line in sys.stdin:
    message = json.loads(line)
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(json.dumps(message, ensure_ascii=False) + "\n")
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize" and mode == "noinit":
        continue  # a sidecar that never finishes starting
    if method == "preStep" and mode == "hang":
        time.sleep(60)
    if method == "preStep" and mode == "slow":
        time.sleep(1)  # answers long after any test deadline
    if method == "preStep" and mode == "die":
        sys.exit(3)
    result: dict = {}
    if method == "command":
        result = {"ok": True, "text": f"fake status nice={os.nice(0)}"}
    if method == "preTool":
        result = (
            {"kind": "deny", "reason": "必须先读取文件"} if mode == "deny" else {"kind": "allow"}
        )
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
    sys.stdout.flush()
