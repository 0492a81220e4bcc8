"""The adapter tests' folder is put on `sys.path` (pytest runs with `--import-mode=importlib`)
so the docs tests can share `docs_markdown`, which is a helper, not a test module."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
