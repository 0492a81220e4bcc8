"""The steps a host runs, in order: capture and its follow-up, the pre-step, re-extraction.

Each face (the DSH sidecar, the Claude Code hooks, the CLI, the benchmarks, the golden
tests) calls these, so the order of stages is written once: `prestep` (assemble,
same-turn dedup, log, repair reminder; and the dry run), `capture` (store, then
extract after a user message and validate after an assistant message), `reextract`.
"""
