"""How deep any JSON pcp reads may nest, checked on the bytes before a parser sees them.

A parser's cost can grow with the square of the nesting (ijson builds a dotted prefix for every
event of a buffer), and Python's `json` recurses once per level. No real export nests more than
a dozen levels, so anything deeper than `MAX_JSON_DEPTH` is refused as bad input before it is
parsed: `DepthGuard` watches a stream as it is read, `check_depth` a text or bytes read whole.

The scan runs in C (a regular expression removes the strings, `translate` keeps the brackets),
with one Python step per 64 KiB read; it costs a few per cent of a parse.
"""

from __future__ import annotations

import io
import json
import re
from itertools import accumulate
from typing import IO, Any

from pcp_cli.errors import InvalidInput

# Deepest nesting of arrays and objects accepted in any JSON input (exports, archives, ingest
# lines, MCP tool arguments). Documented in docs/import.md (Input limits).
MAX_JSON_DEPTH = 128

# A whole string, or (matched from inside a string) the rest of one up to its closing quote.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STRING_REST = re.compile(rb'(?:[^"\\]|\\.)*"', re.DOTALL)
_STRING_BODY = re.compile(rb'(?:[^"\\]|\\.)*', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# Opening brackets become 2, closing ones 0: the step of the depth is the value minus one.
_STEPS = bytes.maketrans(b"[]{}", b"\x02\x00\x02\x00")


class DepthError(InvalidInput):
    """JSON nested deeper than MAX_JSON_DEPTH."""


def too_deep(where: str | None, line: int | None = None,
             limit: int = MAX_JSON_DEPTH) -> DepthError:
    return DepthError(
        f"JSON nested deeper than {limit} levels; refused before parsing",
        path=where, line=line,
        hint=f"no real export nests this deep; pcp reads at most {limit} levels of arrays and "
        "objects (docs/import.md, Input limits)")


class DepthScanner:
    """Tracks the nesting of a JSON byte stream fed in pieces; `feed` raises when too deep."""

    def __init__(self, where: str | None = None, line: int | None = None,
                 limit: int = MAX_JSON_DEPTH) -> None:
        self.where = where
        self.line = line
        self.limit = limit
        self.depth = 0
        self._in_string = False
        self._escaped = False  # the last piece ended on a backslash inside a string

    def feed(self, data: bytes) -> None:
        pos = 0
        if self._in_string:
            if self._escaped:
                if not data:
                    return
                pos, self._escaped = 1, False
            end = _STRING_REST.match(data, pos)
            if end is None:  # the string goes on past this piece
                body = _STRING_BODY.match(data, pos)
                self._escaped = body is not None and body.end() < len(data)
                return
            pos, self._in_string = end.end(), False
        outside = _STRING.sub(b"", data[pos:] if pos else data)
        quote = outside.find(b'"')
        if quote >= 0:  # a string opens and runs past this piece
            tail = outside[quote + 1 :]
            body = _STRING_BODY.match(tail)
            self._in_string = True
            self._escaped = body is not None and body.end() < len(tail)
            outside = outside[:quote]
        brackets = outside.translate(None, _NOT_BRACKETS)
        if not brackets:
            return
        opening = brackets.count(b"[") + brackets.count(b"{")
        if self.depth + opening <= self.limit:  # cannot go too deep in this piece
            self.depth += 2 * opening - len(brackets)
            return
        steps = brackets.translate(_STEPS)
        deepest = self.depth
        for depth in accumulate((step - 1 for step in steps), initial=self.depth):
            if depth > deepest:
                deepest = depth
                if deepest > self.limit:
                    raise too_deep(self.where, self.line, self.limit)
            self.depth = depth


def check_depth(data: str | bytes, where: str | None = None, line: int | None = None,
                limit: int = MAX_JSON_DEPTH) -> None:
    """Raise DepthError when the JSON `data` (read whole) nests deeper than `limit`."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return
    DepthScanner(where, line, limit).feed(raw)


def loads(data: str | bytes, where: str | None = None, line: int | None = None) -> Any:
    """`json.loads` after `check_depth`: DepthError (never RecursionError) when too deep."""
    check_depth(data, where, line)
    return json.loads(data)


def json_depth(value: Any) -> int:
    """The nesting depth of an already parsed value (a dict or list counts one level)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


class DepthGuard(io.RawIOBase):
    """A read-only stream over `raw` that refuses JSON nested deeper than the limit as it is
    read, so a parser reading through it never sees the deep part."""

    def __init__(self, raw: IO[bytes], where: str | None, limit: int = MAX_JSON_DEPTH) -> None:
        self._raw = raw
        self._scanner = DepthScanner(where, None, limit)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if data:
            self._scanner.feed(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def guarded_stream(raw: IO[bytes], where: str | None,
                   buffer_size: int = 64 * 1024) -> io.BufferedReader:
    """`raw` behind a DepthGuard, buffered (peekable)."""
    return io.BufferedReader(DepthGuard(raw, where), buffer_size=buffer_size)
