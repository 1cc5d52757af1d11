"""docs/conformance.md cannot drift: its table is the project's own checklist of the normative
clauses of the specifications pcp implements (the Portable Context Protocol v1.1 and its v1.2
draft, the Paged Context Protocol v0.4), each with a status and the tests that show it.

(a) every test the table names exists (collected by parsing the test files with `ast`);
(b) every normative keyword of every normative sentence of the specifications is covered by a
    clause of the table (its quote is a verbatim part of that sentence, spanning the keyword).
    The sentences are the list kept in the project (`tests/data/seed_clauses.json`, written by
    `tools/seed_clauses.py`), so this runs in every clone; where the specifications are beside
    the project (`../shared/`, the developers' workplace) the list is checked against them, and
    every quote against its specification's text;
(c) every clause has a known status, and a met clause names at least one test;
(d) the counts the document states are the table's.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conformance.md"
STATUSES = ("met", "partly", "not met", "not applicable")


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("seed_clauses", ROOT / "tools/seed_clauses.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("seed_clauses", module)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()
SEEDS = tuple(TOOL.SOURCES)
SHARED = TOOL.shared_folder(ROOT)
KEYWORDS = TOOL.KEYWORDS
LABEL = TOOL.LABEL
normalize = TOOL.normalize


@dataclass(frozen=True)
class Clause:
    id: str
    seed: str
    section: str
    quote: str
    status: str
    tests: tuple[str, ...]


def clauses() -> list[Clause]:
    """The rows of the table: `| id | seed | § | "quote" | status … | tests |`."""
    found = []
    for line in DOC.read_text("utf-8").splitlines():
        if not re.match(r"^\| (V1|V12|PG)-", line):
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
    assert {c.seed for c in rows} == set(SEEDS)


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


@pytest.mark.parametrize("seed", SEEDS)
def test_every_normative_sentence_of_the_seeds_is_in_the_table(seed: str) -> None:
    rows = [c for c in clauses() if c.seed == seed]
    sentences = TOOL.stored()[seed]
    assert sentences, f"no clauses of {seed} in tests/data/seed_clauses.json"
    # a row quoting a normative sentence quotes a part of one (extra rows quote other text)
    loose = [c.id for c in rows if "(extra)" not in c.id and c.status != "not applicable"
             and not any(c.quote in sentence for _section, sentence in sentences)]
    assert not loose, f"quotes not inside a normative sentence of {seed}: {loose}"
    uncovered = []
    for section, sentence in sentences:
        masked = LABEL.sub(lambda m: " " * len(m.group()), sentence)
        spans = [(m.start(), m.end()) for row in rows if row.section == section
                 for m in re.finditer(re.escape(row.quote), sentence)]
        for word in KEYWORDS[seed].finditer(masked):
            if not any(a <= word.start() and word.end() <= b for a, b in spans):
                uncovered.append(f"§{section}: {word.group()} in {sentence!r}")
    assert not uncovered, "normative clauses missing from docs/conformance.md:\n" + \
        "\n".join(uncovered)


@pytest.mark.skipif(SHARED is None, reason="the specifications are not beside the project")
def test_the_clause_list_is_what_the_specifications_say() -> None:
    assert SHARED is not None
    assert TOOL.clauses(SHARED) == TOOL.stored(), \
        "run python tools/seed_clauses.py --write (and read the diff)"


@pytest.mark.skipif(SHARED is None, reason="the specifications are not beside the project")
@pytest.mark.parametrize("seed", SEEDS)
def test_every_quote_is_in_its_specification(seed: str) -> None:
    assert SHARED is not None
    sub, name, _kind = TOOL.SOURCES[seed]
    flat = normalize(TOOL.text_of(seed, (SHARED / sub / name).read_text("utf-8")))
    unknown = [c.id for c in clauses() if c.seed == seed and c.quote not in flat]
    assert not unknown, f"quotes not found in the {seed} specification: {unknown}"


def test_the_counts_the_document_states_are_the_tables() -> None:
    """docs/conformance.md says how many clauses it lists and how many are met: the sentence
    must match the table (it once said 66 when the table held 67)."""
    rows = clauses()
    counts = {status: sum(c.status.startswith(status) for c in rows) for status in STATUSES}
    text = normalize(DOC.read_text("utf-8"))
    stated = re.search(r"(\d+) clauses: (\d+) met, (\d+) partly, (\d+) not met, (\d+) not "
                       r"applicable", text)
    assert stated, "docs/conformance.md must state its counts"
    assert tuple(int(n) for n in stated.groups()) == (
        len(rows), counts["met"], counts["partly"], counts["not met"], counts["not applicable"])
    for seed in SEEDS:
        of_seed = [c for c in rows if c.seed == seed]
        said = re.search(rf"`{re.escape(seed)}`: (\d+) clauses, (\d+) met", text)
        assert said, f"docs/conformance.md must state the counts of {seed}"
        assert (int(said.group(1)), int(said.group(2))) == (
            len(of_seed), sum(c.status.startswith("met") for c in of_seed)), seed
