"""Stored text made safe to show a person: the characters that would act instead of being read
are replaced by visible marks.

- A terminal's control characters: an escape code in a title or a conversation can colour,
  clear the screen, plant a hyperlink (OSC 8) or write the clipboard (OSC 52) when pcp prints
  it. Each C0 and C1 control and DEL becomes its code point, ESC `[U+001B]` (plain ASCII: the
  Control Pictures block is missing from many fonts, and a box says nothing).
- The explicit bidi controls (embeddings, overrides, isolates): an override reverses what
  follows it, so "Invoice [RLO]fdp.exe" reads "Invoice exe.pdf" and a line's ids and tags
  come out backwards. Each becomes `[U+202E]`. (The marks LRM/RLM only steer neutral
  characters and stay: right-to-left text needs them.)

Tabs and line breaks stay. Used where pcp shows stored or client-sent text to a person (the
console's pages, the CLI's tables and review on a terminal), never on data (`--json`, exports,
piped tables).
"""

from __future__ import annotations

_MARKS = {code: f"[U+{code:04X}]" for code in (
    *(c for c in range(0x20) if chr(c) not in "\t\n"), *range(0x7F, 0xA0),
    *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def visible(text: str) -> str:
    """`text` with its control and bidi-control characters shown as marks."""
    return text.translate(_MARKS)
