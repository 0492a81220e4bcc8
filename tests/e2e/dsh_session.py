"""One real DSH runtime (profile sdk-minimal) with our plugin, driven by the Python SDK.

Everything lives under one temp folder: HOME, DSH_HOME, the working folder, the patch
file and the memory database. The model is the fake on 127.0.0.1. The runtime's
native unpack cache is shared (`PKG_NATIVE_CACHE_PATH`) so it is paid once.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_model import FakeModel, request_texts

from lcm_adapter.dsh import plugin_path
from lcm_adapter.dsh.patch import PluginRow, render_block
from lcm_adapter.runtime import MemoryRuntime

# The first words of our block, Chinese or English (`assembly.language` follows the user).
MEMORY_HEADER = ("[长对话记忆 · long-conversation-memory", "[long-conversation-memory:")
HERE = Path(__file__).parent
# Small compaction thresholds (fractions of the model's 1M window) so a few padded
# turns trigger DSH's own automatic compaction.
COMPACTION_ROWS = """\
- id: compaction-basic
  config:
    thresholdRatio: 0.003
    retainRatio: 0.0008
"""
# The model's window as DSH's adapter declares it for deepseek-v4-flash (thresholds are
# fractions of it).
MODEL_WINDOW = 1_000_000


def compaction_rows(threshold_tokens: int, retain_tokens: int = 800) -> str:
    """DSH's automatic compaction at `threshold_tokens`, keeping about `retain_tokens`."""
    return (
        "- id: compaction-basic\n"
        "  config:\n"
        f"    thresholdRatio: {threshold_tokens / MODEL_WINDOW}\n"
        f"    retainRatio: {retain_tokens / MODEL_WINDOW}\n"
    )


WRITE_TOOL_ROWS = """\
- id: tool-fs
  config:
    read: true
    readImage: true
    write: true
    edit: false
"""


def driver_rows(command: str, after_turn: int, out: Path) -> str:
    """The driver plugin that runs a slash command after a given turn, into a file."""
    config = json.dumps({"command": command, "afterTurn": after_turn, "out": str(out)})
    return (
        "- insert:\n"
        "    - id: lcm-e2e-driver\n"
        f"      name: {json.dumps(str(HERE / 'driver_plugin.mjs'))}\n"
        f"      config: {config}\n"
    )


@dataclass
class DshSession:
    """A running runtime, its fake model and our database."""

    root: Path
    model: FakeModel
    settings: Mapping[str, Any] | None = None
    extra_rows: str = ""
    # False runs DSH without our plugin (the same patch otherwise), for comparisons.
    memory: bool = True
    harness: Any = None
    session: Any = None

    @property
    def db(self) -> Path:
        return self.root / "memory.sqlite"

    @property
    def dsh_home(self) -> Path:
        return self.root / "dsh"

    def start(self, cache: Path) -> DshSession:
        from deepseek_harness import DeepSeekHarness

        for folder in ("home", "dsh", "work"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        block = ""
        if self.memory:
            block = render_block(
                PluginRow(plugin_path(), sys.executable, str(self.db), True, self.settings)
            )
        patch = self.root / "patch.yml"
        patch.write_text(block + self.extra_rows, encoding="utf-8")
        env = {
            "HOME": str(self.root / "home"),
            "DSH_HOME": str(self.dsh_home),
            "PKG_NATIVE_CACHE_PATH": str(cache),
            "DSH_TELEMETRY_DISABLED": "1",
        }
        self.harness = DeepSeekHarness(
            dsh_home=str(self.dsh_home),
            cwd=str(self.root / "work"),
            profile="sdk-minimal",
            patches=(str(patch),),
            provider="deepseek-official",
            model="deepseek-v4-flash",
            base_url=self.model.base_url,
            api_key="e2e-not-a-key",
            env=env,
            initialize_timeout_seconds=120.0,
            request_timeout_seconds=120.0,
            shutdown_timeout_seconds=10.0,
        )
        self.harness.start()
        self.session = self.harness.start_session()
        return self

    def run(self, text: str) -> Any:
        return self.session.run(text)

    def compactions(self, texts: list[str]) -> int:
        """Run the turns in order; how many automatic compactions DSH made on the way."""
        count = 0
        for text in texts:
            result = self.run(text)
            if result.finish_reason != "completed":
                raise AssertionError(f"a turn did not complete: {self.stderr_tail()}")
            count += sum(1 for e in result.events if e.get("type") == "compaction/summary")
        return count

    def close(self) -> None:
        if self.harness is not None:
            self.harness.close()
            self.harness = None

    def stderr_tail(self) -> str:
        client = getattr(self.harness, "client", None)
        return "\n".join(getattr(client, "_stderr_lines", []) or [])

    # --- what happened ----------------------------------------------------------------
    def memory_block(self, body: Mapping[str, Any]) -> str | None:
        """Our block's text in one request body (the last one if several), else None."""
        blocks = [t for t in request_texts(body) if t.startswith(MEMORY_HEADER)]
        return blocks[-1] if blocks else None

    def memory_in_context(self, body: Mapping[str, Any]) -> str:
        """Every block of ours one request body holds (DSH keeps earlier blocks in its
        history): what memory puts before the model at that step, joined."""
        return "\n".join(t for t in request_texts(body) if t.startswith(MEMORY_HEADER))

    def runtime(self) -> MemoryRuntime:
        return MemoryRuntime.open(str(self.db))

    def sidecar_pids(self) -> list[int]:
        """Our sidecar processes: python running lcm_adapter.dsh.sidecar on this database."""
        found: list[int] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"lcm_adapter.dsh.sidecar" in argv and str(self.db).encode() in argv:
                found.append(int(entry.name))
        return sorted(found)

    def session_log(self) -> Path:
        """The folder of this session's log under $DSH_HOME/sessions."""
        matches = sorted(self.dsh_home.glob(f"sessions/*/{self.session.id}"))
        assert matches, f"no session folder for {self.session.id}"
        return matches[0]


def live_rows(db: Path, session_id: str) -> list[tuple[Any, ...]]:
    """The events of one session as comparable tuples (ingest time left out)."""
    runtime = MemoryRuntime.open(str(db))
    try:
        return [
            (
                e.seq,
                e.type,
                e.text,
                e.time,
                e.turn,
                e.step,
                e.role,
                e.source_kind,
                e.source_form,
                e.tool_name,
                e.call_id,
                e.store,
                e.content_hash,
                e.truncated,
            )
            for e in runtime.store.list_events(session_id)
        ]
    finally:
        runtime.close()


def env_ready() -> Iterator[str]:
    """Why the DSH runtime cannot run here (nothing when it can)."""
    try:
        import deepseek_harness  # noqa: F401
        from deepseek_harness_runtime import resolve_bundled_launch_args

        resolve_bundled_launch_args()
    except Exception as exc:  # ImportError, FileNotFoundError on an unsupported platform
        yield f"the DSH runtime wheel is not usable here: {type(exc).__name__}: {exc}"
    if not os.path.isdir("/proc"):
        yield "finding the sidecar process needs /proc"
