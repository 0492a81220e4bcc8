"""Project-wide test configuration."""

from __future__ import annotations

import os

# `pytester` lets a test run the conformance suite against deliberately broken stores.
pytest_plugins = ["pytester"]

# A hook run as its own process starts a warm hook server beside its database; in tests
# those databases are temporary, so their servers leave soon after the last call.
os.environ.setdefault("LCM_HOOK_SERVER_IDLE", "20")
