"""Splitting a page body into passages to embed, each with its character offsets.

A short page is one chunk. A long one (a conversation transcript, an imported document) is cut
at paragraph breaks, then line breaks, then sentence ends, then spaces, into pieces of about
`TARGET` characters, so that a semantic hit names the passage that matched (its `source_spans`)
and the snippet is that passage. Offsets are `[start, end)` in characters of the body as the head
file holds it. Pure Python: no numpy, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TARGET = 1000  # characters; a static model's mean of token vectors blurs much past this
MAX = 1600  # a piece longer than this is cut again at a weaker boundary
MIN = 200  # a last piece shorter than this joins the one before when that stays under MAX
MAX_CHUNKS = 2000  # per page: a 2 MB document is 2,000 passages; the rest is not embedded

_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?。！？])\s+"),
           re.compile(r"\s+"))


@dataclass(frozen=True)
class Chunk:
    start: int
    end: int
    text: str


def split(body: str) -> list[Chunk]:
    """The body's passages, in order, covering its non-blank text."""
    pieces = _cut(body, 0, len(body), 0)
    merged: list[tuple[int, int]] = []
    for start, end in pieces:
        if merged and end - merged[-1][0] <= TARGET:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    if len(merged) > 1 and merged[-1][1] - merged[-1][0] < MIN \
            and merged[-1][1] - merged[-2][0] <= MAX:
        merged[-2:] = [(merged[-2][0], merged[-1][1])]
    chunks = []
    for start, end in merged[:MAX_CHUNKS]:
        # trim surrounding blanks, keeping offsets exact
        text = body[start:end]
        lead = len(text) - len(text.lstrip())
        text = text.strip()
        if text:
            chunks.append(Chunk(start + lead, start + lead + len(text), text))
    return chunks


def _cut(body: str, start: int, end: int, level: int) -> list[tuple[int, int]]:
    if end - start <= MAX or level >= len(_BREAKS):
        return [(start, end)] if body[start:end].strip() else []
    if level == len(_BREAKS) - 1:
        return _at_spaces(body, start, end)
    out: list[tuple[int, int]] = []
    pos = start
    for m in _BREAKS[level].finditer(body, start, end):
        if m.start() > pos:
            out += _cut(body, pos, m.start(), level + 1)
        pos = m.end()
    if pos < end:
        out += _cut(body, pos, end, level + 1)
    return out


def _at_spaces(body: str, start: int, end: int) -> list[tuple[int, int]]:
    """`body[start:end]` (no paragraph, line or sentence break in it) in pieces of at most
    `TARGET` characters, each ending at the last space that fits, or cut at `TARGET` where
    none does (a very long word, CJK text). Piece by piece, never word by word: a 10 MB line
    of words is some 10,000 pieces, not two million."""
    space = _BREAKS[-1]
    out: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        lead = space.match(body, pos, end)
        if lead:
            pos = lead.end()
            continue
        if end - pos <= TARGET:
            out.append((pos, end))
            break
        cut = None
        for m in space.finditer(body, pos + 1, pos + TARGET + 1):
            cut = m
        if cut is None:
            out.append((pos, pos + TARGET))
            pos += TARGET
        else:
            out.append((pos, cut.start()))
            pos = cut.end()
    return out


def embedding_text(title: str, chunk: Chunk, first: bool) -> str:
    """What is embedded for a chunk: the title leads the first passage (it often says what the
    page is about), the others stand alone."""
    if first and title and not chunk.text.startswith(title):
        return f"{title}\n{chunk.text}"
    return chunk.text
