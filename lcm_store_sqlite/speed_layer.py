"""The SQLite store's declared speed layer, and every bound it works within.

A long-lived handle (the DSH sidecar, an MCP server) copies each session it searches
into memory, its events and its items, and follows them (`session_cache`); a search of
a copy finds its matches in blocks of joined, casefolded texts (`text_blocks`). It
answers exactly what the SQL scan answers: the same rows, matched by the core's rule
(`lcm_core.store.matching`), scored by the core's `best_matches`, in the same order
(`tests/store_sqlite/test_session_cache.py` and `test_text_blocks.py` compare them).
It is a cache, not a second rule: switch it off with
`SQLiteMemoryStore(path, session_cache=False)` and only the time changes.
"""

from __future__ import annotations

from typing import Final

# --- session copies (`session_cache`) ----------------------------------------------------
# A session with more rows than this is not copied (its search is the SQL one).
CACHE_ROWS_MAX: Final = 100_000
# Rows and characters of text held across sessions; the least recently searched copy
# goes first. Text is held more than once (the rows, their casefold, the blocks searched),
# and tool output can be long: a session whose text alone passes the bound is not copied.
CACHE_TOTAL_ROWS: Final = 200_000
CACHE_TOTAL_CHARS: Final = 32_000_000
# The widest seq window `list_events` picks from a session's copy instead of SQL.
WINDOW_FROM_COPY: Final = 4096

# --- blocks of a copy's texts (`text_blocks`) --------------------------------------------
# Texts per block of joined text: a growing copy rebuilds only its last block.
BLOCK: Final = 1024
# Positions of matching texts kept per copy, over all its keys.
HITS_HELD: Final = 1_000_000
# A copy of at least `RUNS_FROM` texts indexes its runs of word characters, from its
# `RUNS_AFTER`-th search on (a one-off process never pays for an index it would not use),
# at most `RUNS_SLICE` texts per search (about 80 ms: no step waits for a whole
# 50 000-text index); until the index has caught up, the blocks are scanned.
RUNS_FROM: Final = 4 * 1024
RUNS_AFTER: Final = 4
RUNS_SLICE: Final = 8 * 1024
