"""The DeepSeek Harness face: the plugin file shipped as package data, and its profile patch."""

from __future__ import annotations

from pathlib import Path

PLUGIN_FILE = "plugin.mjs"


def plugin_path() -> Path:
    """The absolute path of the installed `plugin.mjs`."""
    from importlib import resources  # ~4 ms that a hook, which imports this package, skips

    return Path(str(resources.files(__name__).joinpath(PLUGIN_FILE))).resolve()
