"""Proposals from the person's own words: the extractor behind `pcp propose`.

Pure functions over text, below the facade: it imports nothing of `api`, `cli` or `mcp`, reads
no file and writes nothing. `segments` finds what the person wrote (the user turns of a
conversation or session page, a note's body) and masks what is not a claim of theirs (code,
quotes, pasted documents and emails); `rules` turns plain first-person self-statements into
`Candidate`s with the sentence they came from; `fingerprint` says when two candidates are the
same fact; `llm` asks an OpenAI-compatible model for the same shape and keeps only what it can
find verbatim in the person's text.

Languages: the rules are English patterns only. Text in other languages produces no proposals
(it matches none of the patterns), never wrong ones; `--llm` with a multilingual model is the
way to read it.
"""

from __future__ import annotations

from pcp_cli.extract import (
    answers,  # noqa: F401  (and so does this one)
    phrasings,  # noqa: F401  (registers its rules into rules.RULES)
    spoken,  # noqa: F401  (registers its rules too)
)
from pcp_cli.extract.rules import Candidate, extract_sentences
from pcp_cli.extract.segments import Sentence, person_sentences

EXTRACTOR_ID = "pcp-propose-rules/1"

__all__ = ["EXTRACTOR_ID", "Candidate", "Sentence", "extract_sentences", "person_sentences"]
