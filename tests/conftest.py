"""Project-wide test configuration."""

from __future__ import annotations

# `pytester` lets a test run the conformance suite against deliberately broken stores.
pytest_plugins = ["pytester"]
