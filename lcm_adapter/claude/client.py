"""The hook's side of the warm hook server: ask it, or say it is not there.

A hook is a fresh process per call, and nearly all its time goes to loading lcm and
compiling its patterns. So `lcm hook` first asks a warm process that has done that once
(`lcm_adapter.claude.server`), over a Unix socket beside the database; when none
answers, the caller answers in its own process, exactly as before, and then starts one
for the next call. This module loads nothing but built-in modules (`_socket`, `marshal`,
`zlib`), so asking costs a few milliseconds: `lcm claude install` runs it as a script
under `python -S` (no site start-up either), and only a call the server did not answer
pays for the site packages and the rest of lcm.

The request carries everything the answer depends on besides the database: the event,
the database URL, the settings file, whether the user named the database, the working
folder, the environment and the hook's stdin bytes. `LCM_HOOK_SERVER=0` turns it off.
"""

from __future__ import annotations

import _socket
import marshal
import os
import sys
import zlib
from typing import Any

SOCKET_PREFIX = ".lcm-hooks-"
MAX_SOCKET_PATH = 100  # bytes: sun_path holds 104-108, by platform
CONNECT_SECONDS = 0.5
ANSWER_SECONDS = 30.0
MAX_MESSAGE = 64 << 20
OFF_VALUES = ("0", "off", "no", "false")


def enabled() -> bool:
    """On unless `LCM_HOOK_SERVER` says off, and only where Unix sockets exist."""
    if not hasattr(_socket, "AF_UNIX"):
        return False
    return os.environ.get("LCM_HOOK_SERVER", "").strip().lower() not in OFF_VALUES


def socket_path(db_url: str, config_path: str | None) -> str | None:
    """Where the warm server for this database and settings listens; None when it cannot.

    Beside the database file, so it is as private as the database's folder; a server
    URL, an in-memory database or a path too long for a socket gets none. The name
    depends on the code's folder and the Python too, so another install never answers.
    """
    location = db_url[len("sqlite://") :] if db_url.startswith("sqlite://") else db_url
    if "://" in location or location in ("", ":memory:"):
        return None
    database = os.path.abspath(os.path.expanduser(location))
    config = os.path.abspath(config_path) if config_path else ""
    code = os.path.dirname(os.path.realpath(__file__))
    key = "\0".join((database, config, code, str(sys.hexversion))).encode("utf-8", "replace")
    path = os.path.join(os.path.dirname(database), f"{SOCKET_PREFIX}{zlib.crc32(key):08x}.sock")
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def send(sock: Any, value: dict[str, Any]) -> None:
    body = marshal.dumps(value)
    sock.sendall(len(body).to_bytes(4, "big") + body)


def receive(sock: Any) -> dict[str, Any]:
    """One length-prefixed message; raises OSError or ValueError on anything else."""
    size = int.from_bytes(_read(sock, 4), "big")
    if size > MAX_MESSAGE:
        raise ValueError("message too large")
    value = marshal.loads(_read(sock, size))
    if not isinstance(value, dict):
        raise ValueError("not a mapping")
    return value


def _read(sock: Any, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise OSError("connection closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def request(
    event: str, db_url: str, config_path: str | None, raw: bytes, named: bool
) -> dict[str, Any]:
    """The request for one hook call."""
    return {
        "event": event,
        "db": db_url,
        "config": os.path.abspath(config_path) if config_path else None,
        "named": named,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdin": raw,
    }


def ask(path: str, call: dict[str, Any]) -> tuple[str | None, list[str]] | None:
    """The warm server's (reply, error lines) for a call; None when it did not answer."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(path)
        sock.settimeout(ANSWER_SECONDS)
        send(sock, call)
        answer = receive(sock)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        sock.close()
    reply, errors = answer.get("reply"), answer.get("errors")
    if answer.get("stale") or not isinstance(errors, list):
        return None
    return (reply if isinstance(reply, str) else None), [str(e) for e in errors]


def start(path: str) -> None:
    """Start a warm server for the next call, detached; any failure is silently skipped."""
    if not os.access(os.path.dirname(path), os.W_OK):
        return  # it could not make its socket there
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "lcm_adapter.claude.server", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return  # no server this time; the hooks answer themselves


def stdin_bytes() -> bytes:
    """The hook's stdin as bytes, whatever kind of stream it is."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return bytes(buffer.read())
    return sys.stdin.read().encode("utf-8", errors="replace")


def answer_hook(event: str, db: str | None, config: str | None) -> None:
    """Answer one `lcm hook` call: the warm server's answer, else this process's own."""
    if db is not None and not db.strip():
        # As the click group says it, but a hook still exits 0 and replies nothing.
        sys.stderr.write("lcm: --db is empty: give a path or URL, or leave --db out\n")
        return
    named = bool(db and db.strip()) or bool(os.environ.get("LCM_DB", "").strip())
    if named:
        url = (db or "").strip() or os.environ.get("LCM_DB", "").strip()
    else:
        from lcm_adapter.paths import resolve_db_url  # the default: Claude Code's or DSH's

        url = resolve_db_url(None)
    raw = stdin_bytes()
    path = socket_path(url, config) if enabled() else None
    answer = ask(path, request(event, url, config, raw, named)) if path else None
    if answer is None:
        if sys.flags.no_site and not any(p.endswith("-packages") for p in sys.path):
            import site  # run as a script under `python -S`: the packages lcm needs

            site.main()
        from lcm_adapter.claude.run import run_hook

        run = run_hook(event, url, config, raw, named=named)
        answer_reply, errors = run.reply, run.errors
    else:
        answer_reply, errors = answer
    for line in errors:
        sys.stderr.write(line + "\n")
    if answer_reply is not None:
        sys.stdout.write(answer_reply + "\n")
    sys.stdout.flush()
    if path is not None and answer is None:
        start(path)  # after the reply, so the host does not wait for it


def main() -> None:
    """`python -S .../lcm_adapter/claude/client.py [--db URL] [--config FILE] hook EVENT`."""
    here = os.path.dirname(os.path.realpath(__file__))
    if sys.path and os.path.realpath(sys.path[0] or ".") == here:
        sys.path[0] = os.path.dirname(os.path.dirname(here))  # the folder holding lcm_adapter
    from lcm_adapter.claude.argv import hook_call

    call = hook_call(sys.argv[1:])
    if call is None:
        sys.stderr.write("lcm: usage: client.py [--db URL] [--config FILE] hook EVENT\n")
        sys.exit(0)  # a hook never fails the host
    answer_hook(*call)
    sys.exit(0)


if __name__ == "__main__":
    main()
