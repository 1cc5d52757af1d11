"""The normative clauses of the specifications pcp implements, as `docs/conformance.md` covers them.

    python tools/seed_clauses.py --write   # regenerate tests/data/seed_clauses.json
    python tools/seed_clauses.py           # check it against the specifications (exit 1 if not)

The specifications live beside the project (`../shared/`, the developers' workplace): the
Portable Context Protocol v1.1 and the Paged Context Protocol v0.4 (`seeds/`), and the Portable
Context Protocol v1.2 draft (`pcp-v1.2/pcp-v1.2.md`). A clone has no `../shared/`, so
`tests/test_conformance_doc.py` reads the list this writes: every sentence holding a normative
word (MUST, SHOULD, … in English; 必须, 不能, 不得, 要求 in Chinese), with its section. For v1.2
only the sentences v1.2 added or changed are listed: the rest are v1.1's, covered by its rows.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "data" / "seed_clauses.json"
# seed -> (folder under shared/, file, how it is written)
SOURCES = {
    "v1": ("seeds", "000_a12baaca31d0096f.txt", "text"),
    "paged": ("seeds", "001_40f42804021e353a.txt", "paged"),
    "v1.2": ("pcp-v1.2", "pcp-v1.2.md", "markdown"),
}
# RFC 2119 words (the Portable Context Protocol, in English) and their Chinese counterparts (the
# Paged Context Protocol): 必须 must, 不能/不得 must not, 要求 requires.
ENGLISH = re.compile(r"\b(MUST NOT|MUST|SHOULD NOT|SHOULD|SHALL NOT|SHALL|REQUIRED|"
                     r"RECOMMENDED)\b")
KEYWORDS = {"v1": ENGLISH, "v1.2": ENGLISH, "paged": re.compile(r"必须|不能|不得|要求")}
# "Freshness (MUST)." labels the sentences after it, which carry the clause itself.
LABEL = re.compile(r"\((?:MUST|SHOULD|MAY)\)")


def shared_folder(root: Path = ROOT) -> Path | None:
    """`shared/` beside the project, or beside the folder of worktrees it is checked out in."""
    for folder in (root.parent / "shared", root.parent.parent / "shared"):
        if all((folder / sub / name).is_file() for sub, name, _kind in SOURCES.values()):
            return folder
    return None


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _markdown_line(line: str) -> str:
    """A Markdown line as plain text: table cells joined by spaces, no list or quote markers,
    no code ticks, emphasis, link targets or escaped pipes."""
    line = line.replace("\\|", "\0")  # an escaped pipe is text, not a cell border
    if line.strip().startswith("|"):
        line = " ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
    line = line.replace("\0", "|")
    line = re.sub(r"^\s*(?:[-*]|>)\s+", "", line)
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)
    return line.replace("`", "").replace("**", "").replace("*", "")


def text_of(seed: str, raw: str) -> str:
    """The seed as the table quotes it (Markdown written as plain text)."""
    if SOURCES[seed][2] != "markdown":
        return raw
    return "\n".join(_markdown_line(line) for line in raw.splitlines())


def normative_sentences(seed: str, raw: str) -> list[tuple[str, str]]:
    """(section, sentence) of every sentence of a seed holding a normative keyword. Sections:
    `3.2`-style headings (v1, `#`-headings with a number in v1.2, `Appendix A` as `A`) or `## `
    headings (paged); sentences end at . ! ? (English) or 。；(Chinese), and each line (a table
    row, a bullet) ends one too."""
    kind = SOURCES[seed][2]
    section = "preamble"
    out = []
    for line in raw.splitlines():
        if kind == "text":
            heading = re.match(r"^([1-9](?:\.[1-9])?)\.?\s+[A-Za-z]", line)
        elif kind == "markdown":
            heading = re.match(r"^#{1,4}\s+(?:Appendix\s+([A-Z])\b|([1-9](?:\.[1-9]){0,2})\.?\s)",
                               line)
        else:
            heading = re.match(r"^##\s+(.+)$", line)
        if heading:
            section = next(g for g in heading.groups() if g).strip()
            continue
        if re.match(r"^#{1,6}\s", line):  # a heading without a number (Goals): no clause
            continue
        if kind == "markdown":
            line = _markdown_line(line)
        parts = (re.split(r"(?<=[。；])", line) if kind == "paged"
                 else re.split(r"(?<=[.!?])\s+(?=[A-Z])", line))
        for part in parts:
            sentence = normalize(part)
            if KEYWORDS[seed].search(LABEL.sub("", sentence)):
                out.append((section, sentence))
    return out


def _key(sentence: str) -> str:
    """A sentence compared across v1.1 and v1.2 (bullets and emphasis aside)."""
    return normalize(sentence.replace("•", "").replace("*", ""))


def clauses(shared: Path) -> dict[str, list[tuple[str, str]]]:
    """Every seed's normative sentences; for v1.2 only those v1.1 does not hold."""
    found = {seed: normative_sentences(seed, (shared / sub / name).read_text("utf-8"))
             for seed, (sub, name, _kind) in SOURCES.items()}
    older = {_key(sentence) for _section, sentence in found["v1"]}
    found["v1.2"] = [(section, sentence) for section, sentence in found["v1.2"]
                     if _key(sentence) not in older]
    return found


def stored() -> dict[str, list[tuple[str, str]]]:
    """The list kept in the project (tests/data/seed_clauses.json)."""
    data = json.loads(LIST.read_text("utf-8"))
    return {seed: [(section, sentence) for section, sentence in data[seed]["sentences"]]
            for seed in SOURCES}


def write(shared: Path) -> None:
    data = {seed: {"source": f"{sub}/{name}",
                   "sentences": [list(pair) for pair in clauses(shared)[seed]]}
            for seed, (sub, name, _kind) in SOURCES.items()}
    LIST.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", "utf-8")


def main(argv: list[str]) -> int:
    shared = shared_folder()
    if shared is None:
        print("no ../shared/ beside the project: nothing to read the clauses from",
              file=sys.stderr)
        return 2
    if argv[1:] == ["--write"]:
        write(shared)
        return 0
    if clauses(shared) != stored():
        print(f"{LIST.relative_to(ROOT)} is not what the specifications say: run "
              "python tools/seed_clauses.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
