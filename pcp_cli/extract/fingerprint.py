"""When two statements are the same fact, and which facts hold one value at a time.

A fingerprint is the kind, plus the slot and its value for a one-value fact ("residence" →
"porto"), else the content's words lowercased, without punctuation, stop words and plural or
verb endings, in order. "I live in Porto" and "I'm based in Porto" both give
`keystone|residence|porto`; "Prefers tea" and "prefers TEA." give the same fingerprint.

`slot_of` reads the slot back from a keystone's content ("Lives in Berlin", "Ada is based in
Berlin"), so a keystone the person wrote by hand is superseded by a newer proposal of the
same slot.
"""

from __future__ import annotations

import re
import unicodedata

_STOP_WORDS = frozenset((
    "a", "an", "the", "is", "are", "am", "be", "of", "to", "in", "at", "on", "for", "with",
    "and", "or", "their", "they", "them", "my", "i", "as", "by", "from", "that", "this", "it",
    "very", "really", "mostly", "mainly", "usually", "always", "generally",
))
_SLOT_PATTERNS = (
    ("residence", re.compile(r"\b(?:lives|living|based|resides|residing|located|settled)\s+"
                             r"(?:and works\s+)?in\s+(?P<v>[^.;,]+)", re.I)),
    ("employer", re.compile(r"\bworks\s+(?:at|for)\s+(?P<v>[^.;,]+)", re.I)),
    ("role", re.compile(r"^(?:[A-Z][\w-]*\s+)?(?:is|works as)\s+(?:an?\s+)?(?P<v>[^.;,]+?)"
                        r"(?:\s+at\s+[^.;,]+)?\s*\.?$", re.I)),
)


def words(text: str) -> list[str]:
    """The normalized content words of `text`."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    found = []
    for word in re.findall(r"[a-z0-9+#]+", folded):
        if word in _STOP_WORDS:
            continue
        for ending in ("ing", "es", "s"):
            if len(word) > len(ending) + 2 and word.endswith(ending):
                word = word[: -len(ending)]
                break
        if len(word) > 4 and word.endswith("e"):  # "dance" and "dancing" are one word
            word = word[:-1]
        found.append(word)
    return found


def normalize(text: str) -> str:
    return " ".join(words(text))


def fingerprint(kind: str, content: str, *, slot: str | None = None, value: str = "",
                date: str | None = None) -> str:
    """The key two proposals of the same fact share."""
    if slot:
        return f"{kind}|{slot}|{normalize(value)}"
    if kind == "timeline_event":
        return f"{kind}|{(date or '')[:4]}|{normalize(content)}"
    return f"{kind}|{normalize(value or content)}"


def slot_of(content: str) -> tuple[str, str] | None:
    """(slot, value) a keystone's content states, for the slots one person holds one value of."""
    for slot, pattern in _SLOT_PATTERNS:
        match = pattern.search(content.strip())
        if match:
            value = match.group("v").strip()
            if slot == "role" and not re.search(r"(?:er|or|ist|ian|ant|ent|ect|ee|"
                                                r"student|lead|head|chef|nurse)s?$",
                                                value.split()[-1] if value.split() else ""):
                continue
            return slot, value
    return None


def same_fact(candidate_words: list[str], existing_words: set[str]) -> bool:
    """True when every content word of a candidate is already in an existing claim."""
    return bool(candidate_words) and set(candidate_words) <= existing_words
