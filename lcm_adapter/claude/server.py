"""The warm hook server: one process that answers `lcm hook` calls with lcm already loaded.

`python -m lcm_adapter.claude.server SOCKET` is started by a hook that found no server
(`lcm_adapter.claude.client`). It keeps nothing between calls but imported modules and
compiled patterns: each call opens the database, answers through `run_hook` exactly as
the hook's own process would (in the caller's working folder and environment), and
closes it, so a restored or replaced database file is never written through an old
handle. Calls are answered one at a time.

It runs only while it is useful and current: one per socket (a lock file beside it),
gone after `IDLE_SECONDS` without a call or as soon as its socket file is removed or
replaced, and it refuses a call (the hook then answers itself) and exits when a source
file of lcm it loaded has changed since it started, so an upgrade never runs old code.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, Final

from lcm_adapter.claude.client import receive, send

IDLE_SECONDS: Final = 600  # `LCM_HOOK_SERVER_IDLE` (seconds) changes it
TICK_SECONDS: Final = 5
PACKAGES: Final = ("lcm_adapter", "lcm_core", "lcm_store_sqlite")
WARM_PROMPT: Final = (
    "预算 3000 元含税，p95 under 180 ms when the cache is warm; port 5433, not 6432?"
)


def _sources() -> dict[str, int]:
    """The modification time of every lcm source file loaded so far."""
    found: dict[str, int] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and name.split(".", 1)[0] in PACKAGES:
            with contextlib.suppress(OSError):
                found[path] = os.stat(path).st_mtime_ns
    return found


def _changed(sources: dict[str, int]) -> bool:
    for path, mtime in sources.items():
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


def warm_up() -> None:
    """Load what hooks load and compile their patterns: a short session in a temporary folder."""
    import json
    import tempfile

    from lcm_adapter.claude.run import run_hook

    with tempfile.TemporaryDirectory(prefix="lcm-warm-") as folder:
        transcript = Path(folder) / "warm-up.jsonl"
        lines = [
            {"type": "user", "message": {"role": "user", "content": WARM_PROMPT}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "好的。"}]}},
        ]
        transcript.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        db = str(Path(folder) / "warm-up.sqlite")
        base = {"session_id": "warm-up", "transcript_path": str(transcript), "cwd": folder}
        for event, extra in (
            ("session-start", {"source": "startup"}),
            ("user-prompt-submit", {"prompt": WARM_PROMPT}),
            ("stop", {}),
            ("pre-compact", {"trigger": "auto"}),
            ("session-start", {"source": "compact"}),
        ):
            run_hook(event, db, None, json.dumps({**base, **extra}).encode("utf-8"))


def answer(call: dict[str, Any]) -> dict[str, Any]:
    """One hook call, in the caller's folder and environment; never raises."""
    from lcm_adapter.claude.run import run_hook

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        env = call.get("env")
        if isinstance(env, dict):
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in env.items()})
        with contextlib.suppress(OSError, TypeError):
            os.chdir(str(call.get("cwd")))
        run = run_hook(
            str(call.get("event") or ""),
            str(call.get("db") or ""),
            call.get("config") if isinstance(call.get("config"), str) else None,
            call["stdin"] if isinstance(call.get("stdin"), bytes) else b"",
            named=bool(call.get("named", True)),
        )
        return {"reply": run.reply, "errors": run.errors}
    except Exception as exc:  # the hook answers itself instead
        return {"stale": True, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        with contextlib.suppress(OSError):
            os.chdir(saved_cwd)


def _idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("LCM_HOOK_SERVER_IDLE", IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS


def _still_ours(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def serve(path: str) -> int:
    """Listen on `path` until idle, replaced or out of date; 0 when another server has it."""
    lock = open(path + ".lock", "a")  # noqa: SIM115 - held for the server's whole life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server holds this socket
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a socket left by a server that died
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)  # the socket file 0600: only its owner may connect
    try:
        listener.bind(path)
    except OSError:
        return 0  # a folder we may not write: the hooks answer themselves
    finally:
        os.umask(old_mask)
    listener.listen(16)  # calls wait here while the modules load
    inode = os.stat(path).st_ino
    warm_up()
    sources = _sources()
    listener.settimeout(TICK_SECONDS)
    idle = _idle_seconds()
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle and _still_ours(path, inode):
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            with conn:
                conn.settimeout(TICK_SECONDS)
                if _changed(sources):
                    with contextlib.suppress(OSError):
                        send(conn, {"stale": True})
                    break
                try:
                    send(conn, answer(receive(conn)))
                except (OSError, ValueError):
                    continue  # the hook gave up waiting; it answers itself
    finally:
        listener.close()
        if _still_ours(path, inode):
            with contextlib.suppress(OSError):
                os.unlink(path)
        lock.close()
    return 0


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m lcm_adapter.claude.server SOCKET")
    folder = Path(sys.argv[1]).parent
    if not folder.is_dir():
        raise SystemExit(0)
    raise SystemExit(serve(sys.argv[1]))


if __name__ == "__main__":
    main()
