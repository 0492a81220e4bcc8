"""Language packs: one module per language holding its stop words and query words.

`en` and `zh` are the two languages lcm reads; `bridge` maps the vocabulary of work
sessions between them for cross-lingual query expansion. The CJK character class every
module uses lives in `lcm_core.text` (`CJK_CLASS`).
"""
