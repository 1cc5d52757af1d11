"""What the person wrote, as sentences with their place in the page body.

A conversation (or session) page is a transcript of `### User · 2024-05-01 10:02` /
`### Assistant …` blocks (adapters/chatgpt.py, adapters/claude.py, store/events.py write them):
only the User blocks are the person's words. A note is the person's own text whole.

Inside those words, what is not a claim of theirs is masked (replaced by spaces, so every offset
still points into the body): fenced, indented and code-looking lines, inline code, blockquotes,
quoted strings, markup tags, URLs, table rows, and pasted material (an email from its salutation
or header to its sign-off, everything after a line like "Here is the draft:"). What is left is
split into sentences; each keeps its start and end offsets in the body and the date of its turn.

Bounded: of each turn (or note) only the first `READ_LIMIT` characters are read, cut at the
last line or sentence end before it. What a person says of themselves is in what they write,
not in a 10 MB paste of logs or data, which the extractor would otherwise read sentence by
sentence (about 10 s per MB); `over_limit` counts the turns cut, for `pcp propose` to say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from pcp_cli.model.transcript import HEADING

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_CODE_LINE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |return\b|const |let |var |function\b|"
    r"#include|SELECT\b|INSERT\b|\$ |>>> |\.\.\. |pip |npm |git |cd |sudo |"
    r"Traceback |File \"|at [\w.$]+\(|[\w.]+\s*=\s*[\w\[{(\"'])"
    r"|[;{}]\s*$|^\s*[}\])]")
_SALUTATION = re.compile(r"^(?:dear|hi|hello|hey|good (?:morning|afternoon))\b[^\n]{0,40},[ \t]*$",
                         re.I)
_MAIL_HEADER = re.compile(r"^(?:from|to|subject|cc|bcc|date|sent):[ \t]", re.I)
_SIGN_OFF = re.compile(r"^(?:best|regards|kind regards|best regards|warm regards|thanks|thank you|"
                       r"cheers|sincerely|yours(?: truly| sincerely)?|all the best)\b[^\n]{0,30}$",
                       re.I)
_PASTE_INTRO = re.compile(
    r"\b(?:here(?:'s| is| are)|below|following|this is|paste|pasted|draft|email|e-mail|letter|"
    r"message|text|document|post|bio|cv|resume|résumé|essay|article|transcript|review|reply|"
    r"story|script|poem|notes? from|they (?:said|wrote)|(?:he|she) (?:said|wrote))\b", re.I)
_ABOUT_ME = re.compile(r"\b(?:about (?:me|myself)|my (?:background|situation|context)|"
                       r"context)\b", re.I)
_INLINE = (
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\"[^\"\n]{0,400}\""),
    re.compile(r"(?<![\w])'[^'\n]{3,200}'(?![\w])"),
    re.compile(r"<([A-Za-z][\w-]*)[^>\n]*>.*?</\1\s*>", re.S),
    re.compile(r"</?[A-Za-z][\w-]*[^>\n]{0,200}>"),
    re.compile(r"\bhttps?://\S+"),
)
# A sentence ends at . ! ? (and a closing quote or bracket) before a space.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


READ_LIMIT = 50_000  # characters read of one turn or note
_CUT = re.compile(r"[.!?]\s|\n")


def _bounded(body: str, start: int, end: int) -> int:
    """Where to stop reading the stretch body[start:end]: its end, or the last line or
    sentence end before `READ_LIMIT` characters."""
    if end - start <= READ_LIMIT:
        return end
    limit = start + READ_LIMIT
    cut = max((m.end() for m in _CUT.finditer(body, max(start, limit - 2000), limit)),
              default=limit)
    return cut


def over_limit(body: str, page_type: str) -> int:
    """How many of the person's turns (or the note) are longer than `READ_LIMIT`."""
    return sum(1 for start, end, _ in person_regions(body, page_type)
               if end - start > READ_LIMIT)


@dataclass(frozen=True)
class Sentence:
    """One sentence the person wrote: `text` is the body's characters [start, end); `work` the
    same characters with apostrophes and quotes made plain (what the rules read)."""

    start: int
    end: int
    text: str
    work: str
    when: str | None  # the date of the turn (YYYY-MM-DD), when the page gives one
    # What the person said just before, for a word that points back at it: the sentence
    # before this one in the same turn (`before`), and their last `CONTEXT` sentences on the
    # page, across turns (`earlier`, oldest first). Set by `person_sentences`.
    before: str = field(default="", compare=False, repr=False)
    earlier: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # The question the other side asked just before this turn ("What's your favourite
    # style?"), "" when their turn asked none: what a short answer answers.
    asked: str = field(default="", compare=False, repr=False)


def person_regions(body: str, page_type: str) -> list[tuple[int, int, str | None]]:
    """(start, end, turn date) of each stretch of the body the person wrote."""
    if page_type != "conversation":
        return [(0, len(body), None)]
    regions: list[tuple[int, int, str | None]] = []
    headings = list(HEADING.finditer(body))
    for index, match in enumerate(headings):
        if match.group(1) != "User":
            continue
        start = match.end()
        end = headings[index + 1].start() if index + 1 < len(headings) else len(body)
        regions.append((start, end, match.group(2)))
    return regions


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def mask(text: str) -> str:
    """`text` with everything that is not the person's own prose replaced by spaces."""
    plain = (text.replace("\u2019", "'").replace("\u2018", "'")
             .replace("\u201c", '"').replace("\u201d", '"'))
    chars = list(plain)
    lines = plain.splitlines(keepends=True)
    offsets = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line)
    fence: str | None = None
    in_mail = False
    previous_blank = True
    for index, line in enumerate(lines):
        start, end = offsets[index], offsets[index] + len(line)
        stripped = line.strip()
        opened = _FENCE.match(line)
        if fence is not None:
            _blank(chars, start, end)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            _blank(chars, start, end)
            continue
        if in_mail:
            _blank(chars, start, end)
            if _SIGN_OFF.match(stripped):
                # the name under the sign-off belongs to the mail too
                if index + 1 < len(lines) and 0 < len(lines[index + 1].strip()) <= 40:
                    _blank(chars, offsets[index + 1], offsets[index + 1] + len(lines[index + 1]))
                in_mail = False
            continue
        if _SALUTATION.match(stripped) or _MAIL_HEADER.match(stripped):
            in_mail = True
            _blank(chars, start, end)
            continue
        if (stripped.endswith(":") and _PASTE_INTRO.search(stripped)
                and not _ABOUT_ME.search(stripped)):
            rest = plain[end:]
            if len(rest.strip()) >= 120:
                _blank(chars, end, len(plain))
                break
        indented = line.startswith(("    ", "\t")) and stripped and previous_blank
        if (stripped.startswith((">", "|", "#")) or indented
                or (stripped and _CODE_LINE.search(line.rstrip("\n")))):
            _blank(chars, start, end)
            previous_blank = bool(indented)  # an indented block goes on while indented
            continue
        previous_blank = not stripped
    masked = "".join(chars)
    for pattern in _INLINE:
        for match in pattern.finditer(masked):
            _blank(chars, match.start(), match.end())
        masked = "".join(chars)
    return masked


def sentences_in(body: str, start: int, end: int, when: str | None) -> Iterator[Sentence]:
    """The sentences of body[start:end] left after masking, with body offsets."""
    work = mask(body[start:end])
    position = 0
    for line in work.splitlines(keepends=True):
        line_start = position
        position += len(line)
        content = line.rstrip("\n")
        marker = _LIST_MARK.match(content)
        cursor = marker.end() if marker else 0
        pieces = []
        last = cursor
        for match in _SENTENCE_END.finditer(content, cursor):
            pieces.append((last, match.start()))
            last = match.end()
        pieces.append((last, len(content)))
        for a, b in pieces:
            raw = content[a:b]
            if not raw.strip():
                continue
            lead = len(raw) - len(raw.lstrip())
            a, b = a + lead, a + len(raw.rstrip())
            # a masked stretch stays spaces in `work`: a rule's value stops at it
            s, e = start + line_start + a, start + line_start + b
            yield Sentence(s, e, body[s:e], work[line_start + a:line_start + b], when)


def person_sentences(body: str, page_type: str) -> list[Sentence]:
    """Every sentence the person wrote on a page of `page_type`, in body order (of each turn,
    the first `READ_LIMIT` characters)."""
    found: list[Sentence] = []
    said: list[str] = []  # the person's last sentences on this page, across their turns
    last_end = 0
    for start, end, when in person_regions(body, page_type):
        asked = _asked(body, last_end, start) if page_type == "conversation" else ""
        last_end = end
        before = ""
        for sentence in sentences_in(body, start, _bounded(body, start, end), when):
            found.append(replace(sentence, before=before, earlier=tuple(said), asked=asked))
            before = sentence.work
            said = [*said[1 - CONTEXT:], before]
    return found


CONTEXT = 8  # sentences said before one that a word of it may point back to
_QUESTION = re.compile(r"[^.!?\n]*\?")


def _asked(body: str, start: int, end: int) -> str:
    """The last question in the other side's turn between the person's turns (body[start:end],
    its heading lines left out), "" when it asked none."""
    stretch = body[max(start, end - 4000):end]
    stretch = HEADING.sub("", stretch)
    questions = _QUESTION.findall(stretch[-1500:])
    return " ".join(questions[-1].split()) if questions else ""
