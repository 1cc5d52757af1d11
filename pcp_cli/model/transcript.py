"""How a conversation page's text is laid out: a heading per turn.

The importers (adapters/chatgpt.py, adapters/claude.py) and the roll-up of ingested events
(store/events.py) write a transcript as blocks under `### User · 2024-05-01 10:02` /
`### Assistant · …` headings. What reads turns back — the extractor's person's words
(extract/segments.py) and search's passages (query/passages.py) — finds them with `HEADING`:
group 1 the role, group 2 the turn's date (YYYY-MM-DD) when the heading has one.
"""

from __future__ import annotations

import re

HEADING = re.compile(r"^### (User|Assistant|System|Note|Tool)(?: · ([0-9]{4}-[0-9]{2}-[0-9]{2})"
                     r"[^\n]*)?[ \t]*$", re.M)
