"""Language packs: one module per language naming its stop words and query words.

`en` and `zh` are the two languages lcm reads; `bridge` maps the vocabulary of work
sessions between them for cross-lingual query expansion. Their word lists are package
data in `data/*.json`, read and checked by `vocabulary`. The CJK character class every
module uses lives in `lcm_core.text.tokens` (`CJK_CLASS`).
"""
