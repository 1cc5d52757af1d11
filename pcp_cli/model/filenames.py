"""File names that are not text, and how pcp names any file to a person.

A name on disk is bytes, and need not be UTF-8 (a file copied from an old Windows share or a
Latin-1 zip, a name made by a script). Python hands such a name over with each undecodable
byte as a lone surrogate (PEP 383), which cannot be encoded as UTF-8: it can be neither an
import key nor a catalog row, nor be printed to a UTF-8 terminal or a JSON document. So pcp
skips such a file wherever it walks a folder (an import, `pcp watch`, the store's `pages/`),
says so with the name escaped (`bad\\xffname.md`), and carries on with the rest.

`shown` is how a path is written wherever a person or a program reads it: undecodable bytes
as `\\xNN`, and control characters (an escape code in a name would otherwise drive the
terminal) as `\\x1b`-style escapes too.
"""

from __future__ import annotations

import os
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def is_text(name: str) -> bool:
    """Whether `name` (a file name or path as Python decoded it) is valid Unicode text: no
    undecodable byte (PEP 383's lone surrogates) in it."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """`path` as text that can be printed and stored: undecodable bytes as `\\xNN`, control
    characters escaped. A plain name comes back unchanged."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not is_text(text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate that is no escaped byte (from JSON)
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


NOT_TEXT = "the file name is not valid UTF-8; skipped (rename the file to import it)"
