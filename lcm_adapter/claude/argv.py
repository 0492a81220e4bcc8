"""Whether a command line is a plain hook call, read by `lcm` and by the hook client alike.

Built-in modules only, and its own module, so the console entry and the client script
(run under `python -S`) share it without importing each other.
"""

from __future__ import annotations

_VALUED = ("--db", "--config")


def hook_call(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """`(event, db, config)` when argv is exactly a hook call; None sends it to click."""
    options: dict[str, str] = {}
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        word = argv[index]
        name, equals, value = word.partition("=")
        if name in _VALUED and equals:
            options[name] = value
        elif word in _VALUED and index + 1 < len(argv):
            index += 1
            options[word] = argv[index]
        elif word != "--debug":
            return None
        index += 1
    rest = argv[index:]
    if len(rest) != 2 or rest[0] != "hook" or rest[1].startswith("-"):
        return None
    return rest[1], options.get("--db"), options.get("--config")
