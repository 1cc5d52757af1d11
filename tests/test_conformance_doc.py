"""docs/conformance.md cannot drift: its table is the project's own checklist of the two seeds'
normative clauses, each with a status and the tests that show it.

(a) every test the table names exists (collected by parsing the test files with `ast`);
(b) when the seeds are beside the project (`../shared/seeds/`, the developers' workplace), every
    normative keyword of every normative sentence in them is covered by a clause of the table
    (its quote is a verbatim part of that sentence, spanning the keyword), and every quote is
    found in its seed; without the folder this part is skipped (a clone has nothing beside it);
(c) every clause has a known status, and a met clause names at least one test.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conformance.md"
SEED_FILES = {"v1": "000_a12baaca31d0096f.txt", "paged": "001_40f42804021e353a.txt"}
# Beside the project (or beside the folder of worktrees it is checked out in).
SEEDS = next((folder for folder in (ROOT.parent / "shared" / "seeds",
                                    ROOT.parent.parent / "shared" / "seeds")
              if all((folder / name).is_file() for name in SEED_FILES.values())),
             ROOT.parent / "shared" / "seeds")
STATUSES = ("met", "partly", "not met", "not applicable")

# RFC 2119 words (the Portable Context Protocol, in English) and their Chinese counterparts (the
# Paged Context Protocol): 必须 must, 不能/不得 must not, 要求 requires.
KEYWORDS = {
    "v1": re.compile(r"\b(MUST NOT|MUST|SHOULD NOT|SHOULD|SHALL NOT|SHALL|REQUIRED|"
                     r"RECOMMENDED)\b"),
    "paged": re.compile(r"必须|不能|不得|要求"),
}
# "Freshness (MUST)." labels the sentences after it, which carry the clause itself.
LABEL = re.compile(r"\((?:MUST|SHOULD|MAY)\)")


@dataclass(frozen=True)
class Clause:
    id: str
    seed: str
    section: str
    quote: str
    status: str
    tests: tuple[str, ...]


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def clauses() -> list[Clause]:
    """The rows of the table: `| id | seed | § | "quote" | status … | tests |`."""
    found = []
    for line in DOC.read_text("utf-8").splitlines():
        if not re.match(r"^\| (V1|PG)-", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 6, f"docs/conformance.md: a row needs 6 cells: {line}"
        clause_id, seed, section, quote, status, tests = cells
        assert quote.startswith('"') and quote.endswith('"'), f"{clause_id}: quote the clause"
        found.append(Clause(clause_id, seed, section, normalize(quote[1:-1]), status,
                            tuple(re.findall(r"`([^`]+)`", tests))))
    return found


def test_the_table_is_there_and_ids_are_unique() -> None:
    rows = clauses()
    assert len(rows) > 50
    ids = [c.id for c in rows]
    assert len(ids) == len(set(ids)), "a clause id is used twice"
    assert {c.seed for c in rows} == set(SEED_FILES)


def _test_ids() -> set[str]:
    """`path::name` (and `path::Class::name`) of every test function, from the source."""
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(f"{rel}::{node.name}")
            elif isinstance(node, ast.ClassDef):
                names.update(f"{rel}::{node.name}::{item.name}" for item in node.body
                             if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def test_every_named_test_exists() -> None:
    known = _test_ids()
    missing = [(c.id, t) for c in clauses() for t in c.tests if t not in known]
    assert not missing, f"tests named in docs/conformance.md that do not exist: {missing}"


def test_every_clause_has_a_status_and_met_ones_name_a_test() -> None:
    for c in clauses():
        status = next((s for s in STATUSES if c.status.startswith(s)), None)
        assert status is not None, f"{c.id}: status must start with one of {STATUSES}"
        if status == "met":
            assert c.tests, f"{c.id} is met: name the tests that show it"
        if status != "met":
            assert len(c.status) > len(status) + 5, f"{c.id}: say why it is {status}"


def normative_sentences(seed: str, text: str) -> list[tuple[str, str]]:
    """(section, sentence) of every sentence of a seed holding a normative keyword. Sections:
    `3.2`-style headings (v1) or `## ` headings (paged); sentences end at . ! ? (v1) or 。；
    (paged), and each line (a table row, a bullet) ends one too."""
    section = "preamble"
    out = []
    for line in text.splitlines():
        heading = (re.match(r"^([1-9](?:\.[1-9])?)\.?\s+[A-Za-z]", line) if seed == "v1"
                   else re.match(r"^##\s+(.+)$", line))
        if heading:
            section = heading.group(1).strip()
            continue
        parts = (re.split(r"(?<=[.!?])\s+(?=[A-Z])", line) if seed == "v1"
                 else re.split(r"(?<=[。；])", line))
        for part in parts:
            sentence = normalize(part)
            if KEYWORDS[seed].search(LABEL.sub("", sentence)):
                out.append((section, sentence))
    return out


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds are not beside the project")
@pytest.mark.parametrize("seed", sorted(SEED_FILES))
def test_every_normative_sentence_of_the_seeds_is_in_the_table(seed: str) -> None:
    text = (SEEDS / SEED_FILES[seed]).read_text("utf-8")
    rows = [c for c in clauses() if c.seed == seed]
    flat = normalize(text)
    unknown = [c.id for c in rows if c.quote not in flat]
    assert not unknown, f"quotes not found in the {seed} seed: {unknown}"
    uncovered = []
    for section, sentence in normative_sentences(seed, text):
        masked = LABEL.sub(lambda m: " " * len(m.group()), sentence)
        spans = [(m.start(), m.end()) for row in rows if row.section == section
                 for m in re.finditer(re.escape(row.quote), sentence)]
        for word in KEYWORDS[seed].finditer(masked):
            if not any(a <= word.start() and word.end() <= b for a, b in spans):
                uncovered.append(f"§{section}: {word.group()} in {sentence!r}")
    assert not uncovered, "normative clauses missing from docs/conformance.md:\n" + \
        "\n".join(uncovered)
