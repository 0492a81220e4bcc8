"""The DeepSeek Harness face: the plugin file shipped as package data, and its profile patch."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PLUGIN_FILE = "plugin.mjs"


def plugin_path() -> Path:
    """The absolute path of the installed `plugin.mjs`."""
    return Path(str(resources.files(__name__).joinpath(PLUGIN_FILE))).resolve()
