"""Read a `--config` settings file (JSON or TOML) without the command line's machinery;
the project id the user set."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lcm_core.config import Config


def configured_project(config: Config) -> str:
    """The project id the user set: `$LCM_PROJECT`, else `memory.project` ("" for none)."""
    return os.environ.get("LCM_PROJECT", "").strip() or config.memory.project.strip()


class SettingsError(ValueError):
    """A settings file that cannot be read or is not an object of settings (one line)."""


def read_settings_file(path: str | None) -> dict[str, Any] | None:
    """The settings in a JSON or TOML file; None without a path."""
    if path is None:
        return None
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read config {file}: {exc.strerror or exc}") from exc
    try:
        if file.suffix.lower() == ".toml":
            import tomllib  # only TOML files pay for the parser's import

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise SettingsError(f"config {file} is not valid: {exc}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"config {file} must hold an object of settings")
    # A DSH-style `{"config": {...}}` wrapper is accepted as well as the bare settings.
    inner = data.get("config")
    return inner if isinstance(inner, dict) and len(data) == 1 else data
