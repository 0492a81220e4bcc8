"""The hook's client side of the warm hook server: ask it, or say it is not there.

A hook is a fresh process per call, and most of its time is spent importing lcm and
compiling its patterns (~150 ms of ~200). So `lcm hook` first asks a warm process that
has done that once (`lcm_adapter.claude.server`), over a Unix socket beside the
database; when none answers, the caller answers in its own process, exactly as before,
and then starts one for the next call. This module imports only the standard library's
socket and json, so asking costs a few milliseconds on top of Python's own start-up.

The request carries everything the answer depends on besides the database: the event,
the database URL, the settings file, whether the user named the database, the working
folder, the environment and the hook's stdin bytes. `LCM_HOOK_SERVER=0` turns it off.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

SOCKET_PREFIX = ".lcm-hooks-"
MAX_SOCKET_PATH = 100  # bytes: sun_path holds 104-108, by platform
CONNECT_SECONDS = 0.5
ANSWER_SECONDS = 30.0
_LENGTH = struct.Struct(">I")
OFF_VALUES = ("0", "off", "no", "false")


def enabled() -> bool:
    return os.environ.get("LCM_HOOK_SERVER", "").strip().lower() not in OFF_VALUES


def socket_path(db_url: str, config_path: str | None) -> str | None:
    """Where the warm server for this database and settings listens; None when it cannot.

    Beside the database file, so it is as private as the database's folder; a server
    URL, an in-memory database or a too long path gets none.
    """
    location = db_url[len("sqlite://") :] if db_url.startswith("sqlite://") else db_url
    if "://" in location or location in ("", ":memory:"):
        return None
    database = Path(location).expanduser().absolute()
    code = str(Path(__file__).resolve().parent)
    key = "\0".join((str(database), str(Path(config_path).absolute()) if config_path else "", code))
    path = database.parent / f"{SOCKET_PREFIX}{zlib.crc32(key.encode('utf-8')):08x}.sock"
    return str(path) if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None  # bytes, not chars


def send(sock: socket.socket, value: dict[str, Any]) -> None:
    body = json.dumps(value, ensure_ascii=False).encode("utf-8")
    sock.sendall(_LENGTH.pack(len(body)) + body)


def receive(sock: socket.socket) -> dict[str, Any]:
    """One length-prefixed JSON object; raises OSError or ValueError on anything else."""
    head = _read(sock, _LENGTH.size)
    value = json.loads(_read(sock, _LENGTH.unpack(head)[0]))
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _read(sock: socket.socket, size: int) -> bytes:
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
    """The request for one hook call (stdin's bytes travel as latin-1, losslessly)."""
    return {
        "event": event,
        "db": db_url,
        "config": str(Path(config_path).absolute()) if config_path else None,
        "named": named,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdin": raw.decode("latin-1"),
    }


def ask(path: str, call: dict[str, Any]) -> tuple[str | None, list[str]] | None:
    """The warm server's (reply, error lines) for a call; None when it did not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_SECONDS)
            sock.connect(path)
            sock.settimeout(ANSWER_SECONDS)
            send(sock, call)
            answer = receive(sock)
    except (OSError, ValueError):
        return None
    reply, errors = answer.get("reply"), answer.get("errors")
    if answer.get("stale") or not isinstance(errors, list):
        return None
    return (reply if isinstance(reply, str) else None), [str(e) for e in errors]


def start(path: str) -> None:
    """Start a warm server for the next call, detached; any failure is silently skipped."""
    if not os.access(os.path.dirname(path), os.W_OK):
        return  # it could not make its socket there
    import subprocess

    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "lcm_adapter.claude.server", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )


def stdin_bytes() -> bytes:
    """The hook's stdin as bytes, whatever kind of stream it is."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return bytes(buffer.read())
    return sys.stdin.read().encode("utf-8", errors="replace")
