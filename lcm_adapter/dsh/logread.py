"""Read the lines of a DSH session log, plain or multi-frame zstd, without writing anything.

A compressed log is a run of independent zstd frames (one for the header line, one per
append batch). Frames are split by their own headers rather than by decoding one long
stream, so a damaged frame costs only its own lines: it is reported with the line
number where it starts, and reading goes on at the next frame. A plain log can end in
a half-written line while its writer is busy; that line is yielded and flagged as
incomplete so the caller can report it.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

ZSTD_SUFFIXES: Final = (".zstd", ".zst")
_MAGIC: Final = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_LOW: Final = 0x184D2A50  # skippable frames use magics 0x184D2A50 .. 0x184D2A5F
_FCS_BYTES: Final = (0, 2, 4, 8)
_DICT_BYTES: Final = (0, 1, 2, 4)
# The whole decoded frame is held at once; no real append batch comes near this.
MAX_FRAME_OUTPUT: Final = 1 << 30


class MissingZstdError(RuntimeError):
    """A compressed log needs the optional `zstandard` package."""


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the log: its 1-based number, its bytes, and whether it ended cleanly."""

    number: int
    data: bytes
    complete: bool = True


@dataclass(frozen=True, slots=True)
class Damage:
    """A part of the file that could not be read, at the line where it starts."""

    line: int
    reason: str


def is_compressed(path: Path) -> bool:
    return path.name.endswith(ZSTD_SUFFIXES)


def read_lines(path: Path, damage: list[Damage]) -> Iterator[Line]:
    """Every line of the log in order; unreadable parts are appended to `damage`."""
    if is_compressed(path):
        yield from _zstd_lines(path, damage)
    else:
        yield from _plain_lines(path)


def _plain_lines(path: Path) -> Iterator[Line]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            complete = raw.endswith(b"\n")
            data = raw.rstrip(b"\r\n")
            if data.strip():
                yield Line(number, data, complete)


def frame_size(buf: memoryview, pos: int) -> int:
    """The byte length of the zstd (or skippable) frame starting at `pos`.

    Raises ValueError when the bytes there are not a well-formed frame header or the
    frame runs past the end of the buffer.
    """
    end = len(buf)
    if pos + 4 > end:
        raise ValueError("frame header cut short")
    magic = int.from_bytes(buf[pos : pos + 4], "little")
    if magic & 0xFFFFFFF0 == _SKIPPABLE_LOW:
        if pos + 8 > end:
            raise ValueError("skippable frame cut short")
        size = 8 + int.from_bytes(buf[pos + 4 : pos + 8], "little")
    elif bytes(buf[pos : pos + 4]) == _MAGIC:
        size = _zstd_frame_size(buf, pos)
    else:
        raise ValueError("no zstd frame magic")
    if pos + size > end:
        raise ValueError("frame runs past the end of the file")
    return size


def _zstd_frame_size(buf: memoryview, pos: int) -> int:
    end = len(buf)
    if pos + 5 > end:
        raise ValueError("frame header cut short")
    descriptor = buf[pos + 4]
    if descriptor & 0x08:
        raise ValueError("reserved bit set in frame header")
    single_segment = bool(descriptor & 0x20)
    fcs = _FCS_BYTES[descriptor >> 6] or (1 if single_segment else 0)
    cursor = pos + 5 + (0 if single_segment else 1) + _DICT_BYTES[descriptor & 0x03] + fcs
    while True:
        if cursor + 3 > end:
            raise ValueError("block header cut short")
        header = int.from_bytes(buf[cursor : cursor + 3], "little")
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        if kind == 3:
            raise ValueError("reserved block type")
        cursor += 3 + (1 if kind == 1 else size)  # an RLE block stores one byte
        if last:
            break
    if descriptor & 0x04:
        cursor += 4  # content checksum
    return cursor - pos


def _next_magic(buf: Any, start: int) -> int:
    found = buf.find(_MAGIC, start)
    return len(buf) if found < 0 else found


def _zstd_lines(path: Path, damage: list[Damage]) -> Iterator[Line]:
    try:
        import zstandard
    except ImportError as exc:
        raise MissingZstdError(
            "reading .jsonl.zstd logs needs zstandard: pip install 'long-conversation-memory[dsh]'"
        ) from exc
    decompressor = zstandard.ZstdDecompressor()
    with path.open("rb") as handle:
        if path.stat().st_size == 0:
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                yield from _frames_to_lines(view, mapped, decompressor, damage, zstandard.ZstdError)
            finally:
                view.release()


def _frames_to_lines(
    view: memoryview, mapped: Any, decompressor: Any, damage: list[Damage], zstd_error: Any
) -> Iterator[Line]:
    pos, number, frame_index, carry = 0, 0, 0, b""
    while pos < len(view):
        frame_index += 1
        try:
            size = frame_size(view, pos)
            chunk = decompressor.decompressobj()
            out = chunk.decompress(view[pos : pos + size])
            if not chunk.eof:
                raise ValueError("frame ends early")
        except (ValueError, zstd_error) as exc:
            resume = _next_magic(mapped, pos + 1)
            lost = " and a partial line before it" if carry else ""
            damage.append(
                Damage(
                    number + 1,
                    f"corrupt zstd frame {frame_index} at byte {pos} ({exc}); "
                    f"skipped {resume - pos} bytes{lost}",
                )
            )
            carry, pos = b"", resume
            continue
        pos += size
        if not out:
            continue
        pieces = (carry + out).split(b"\n")
        carry = pieces.pop()
        for piece in pieces:
            number += 1
            data = piece.rstrip(b"\r")
            if data.strip():
                yield Line(number, data)
    if carry.strip():
        yield Line(number + 1, carry.rstrip(b"\r"), complete=False)


def decode_line(data: bytes) -> tuple[str, int]:
    """A log line as text, and how many bytes of it were not UTF-8.

    A byte that is not UTF-8 (a torn write, a tool's binary output) becomes U+FFFD and
    the line is kept: dropping it would drop the whole turn, and with it what the user
    said. The count leaves out U+FFFD characters the line already held.
    """
    try:
        return data.decode("utf-8-sig"), 0  # a byte-order mark is not content
    except UnicodeDecodeError:
        text = data.decode("utf-8-sig", errors="replace")
        return text, text.count("\ufffd") - data.count("\ufffd".encode())
