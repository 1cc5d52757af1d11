"""Keep the micro_prompt in a marked block of an AGENTS.md / CLAUDE.md file.

The block is everything from `START` to `END` inclusive. A later run replaces only that block;
every other byte of the file is preserved. When the file has no block, one is appended under a
heading. A file whose markers are unbalanced, duplicated or out of order is refused rather than
guessed at, since rewriting the wrong span would destroy the person's own text.
"""

from __future__ import annotations

from pcp_cli.errors import InvalidInput

START = "<!-- pcp:profile:start -->"
END = "<!-- pcp:profile:end -->"
HEADING = "## About me (from pcp)"


def _block(text: str) -> str:
    body = text.replace("\r\n", "\n").strip("\n")
    if START in body or END in body:
        raise InvalidInput(
            "the profile text contains a pcp:profile marker",
            hint="remove '<!-- pcp:profile:' comments from the profile material",
        )
    return f"{START}\n{body}\n{END}"


def agents_md_block(text: str, existing: str | None) -> str:
    """`existing` file content with its pcp profile block set to `text` (new content if None)."""
    block = _block(text)
    if not existing:
        return f"{HEADING}\n\n{block}\n"
    starts, ends = existing.count(START), existing.count(END)
    if starts == 0 and ends == 0:
        newline = "\r\n" if "\r\n" in existing else "\n"
        separator = "" if existing.endswith("\n") else newline
        addition = f"{HEADING}\n\n{block}\n".replace("\n", newline)
        return f"{existing}{separator}{newline}{addition}"
    if starts != 1 or ends != 1 or existing.index(START) > existing.index(END):
        raise InvalidInput(
            f"the file has {starts} start and {ends} end pcp:profile markers",
            hint=f"leave exactly one '{START}' followed by one '{END}', or remove both",
        )
    head, rest = existing.split(START, 1)
    _, tail = rest.split(END, 1)
    newline = "\r\n" if "\r\n" in existing else "\n"
    return f"{head}{block.replace(chr(10), newline)}{tail}"
