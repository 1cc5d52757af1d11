"""`pcp propose`: the person's own self-statements become proposals, served nowhere until
accepted, deduplicated, never re-proposed once rejected, and superseding a stale keystone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcp_cli.extract import extract_sentences, person_sentences
from tests.conftest import cli

CONVERSATION = """### User · 2024-06-12 10:00

Hi! I'm a data engineer at Frachtwerk, and I moved to Porto in March 2024. I prefer short \
answers with code first.

### Assistant · 2024-06-12 10:01

Got it. You live in Berlin and I'm a language model; I prefer long answers.

### User · 2024-06-12 10:05

If I were a doctor I'd know this. Suppose I live in Oslo. Do I live in Rome? My sister lives \
in Lyon. She said "I'm a lawyer" once. I have two kids.

```
I'm a python developer
```

Here is the email I got:

Dear Ilse,

I am a senior accountant at Big Bank and I live in Zurich. Please send the report.

Best regards,
Jonas

> I live in Madrid.

`I use Emacs` is what the docs say.
"""


def _add(store: Path, body: str, *, title: str = "chat", page_type: str = "conversation",
         page_id: str | None = None) -> str:
    args = ["add", "--type", page_type, "--title", title, "--json", "--store", str(store), "-"]
    if page_id:
        args[1:1] = ["--id", page_id]
    result = cli(*args, input=body)
    assert result.code == 0, result.stderr
    return result.json["page_id"]


def _propose(store: Path, *args: str) -> dict:
    result = cli("propose", *args, "--json", "--store", str(store))
    assert result.code == 0, result.stderr
    return result.json


def _contents(result: dict) -> set[str]:
    return {p["content"] for p in result["proposals"]}


# -- the extractor ----------------------------------------------------------------------------
def test_only_the_persons_plain_statements_are_taken() -> None:
    found = extract_sentences(person_sentences(CONVERSATION, "conversation"))
    contents = {c.content for c in found}
    assert contents == {
        "Is a data engineer at Frachtwerk.", "Works at Frachtwerk.",
        "Moved to Porto in March 2024.", "Lives in Porto.",
        "Prefers short answers with code first.", "Has two kids."}
    for candidate in found:  # the span is the sentence, in the body
        s = candidate.sentence
        assert CONVERSATION[s.start:s.end] == s.text
    event = next(c for c in found if c.kind == "timeline_event")
    assert (event.category, event.date) == ("move", "2024-03")
    assert {c.category for c in found if c.kind == "keystone"} == {
        "identity", "preference", "relationship"}


@pytest.mark.parametrize("sentence", [
    "If I were a teacher I would love it.",
    "Suppose I'm a nurse in Leeds.",
    "Imagine I live in Paris.",
    "Am I a good engineer?",
    "I live in Berlin?",
    "My brother works at Google.",
    "My friend said I'm a genius.",
    "Jag bor i Göteborg och undervisar i fysik.",
    "Je suis ingénieure et j'habite à Lyon.",
    "I like this idea.",
    "I love it.",
])
def test_no_claim_is_taken_from(sentence: str) -> None:
    body = f"### User · 2024-01-01 10:00\n\n{sentence}\n"
    assert extract_sentences(person_sentences(body, "conversation")) == []


def test_indented_code_and_notes() -> None:
    note = "Some notes.\n\n    I live in Code Town\n\nI work remotely from Lisbon.\n"
    found = extract_sentences(person_sentences(note, "note"))
    assert [c.content for c in found] == ["Works remotely from Lisbon."]


# -- pcp propose through the CLI --------------------------------------------------------------
def test_proposals_wait_in_the_queue_and_are_served_nowhere(store: Path) -> None:
    page = _add(store, CONVERSATION)
    result = _propose(store)
    assert result["counts"]["proposals"] == 6
    for proposal in result["proposals"]:
        assert set(proposal) >= {"id", "kind", "category", "content", "date", "confidence",
                                 "supersedes", "evidence"}
        assert proposal["id"] and 0 < proposal["confidence"] <= 1
        for evidence in proposal["evidence"]:
            assert evidence["page_id"] == page
    queue = cli("review", "--json", "--store", str(store)).json
    assert {i["content"] for i in queue} == _contents(result)
    shown = cli("show", result["proposals"][0]["id"], "--json", "--store", str(store)).json
    page_state = shown["page"]
    assert page_state["review_status"] == "proposed"
    assert page_state["origin"] == "inferred"
    assert page_state["instruction_policy"] == "data_only"
    assert page_state["record"]["source"] == "inferred"
    assert page_state["provenance"][0]["input_revision_ids"] == [
        result["proposals"][0]["evidence"][0]["revision_id"]]
    # served nowhere
    for args in (("export", "--format", "micro_prompt"), ("export", "--format", "json"),
                 ("export", "--format", "archive"), ("export", "--format", "markdown"),
                 ("keystone", "list", "--json"), ("search", "Porto", "--json"),
                 ("search", "Frachtwerk", "--json"), ("timeline", "list", "--json"),
                 ("stats", "--json")):
        out = cli(*args, "--store", str(store))
        assert out.code == 0, (args, out.stderr)
        assert "Lives in Porto" not in out.stdout and "Moved to Porto" not in out.stdout, args
        for proposal in result["proposals"]:
            assert proposal["id"] not in out.stdout, args
    stats = cli("stats", "--json", "--store", str(store)).json
    assert "keystone" not in json.dumps(stats.get("by_type", {}))
    assert cli("validate", "--store", str(store)).code == 0


def test_evidence_points_at_the_sentence(store: Path) -> None:
    page = _add(store, CONVERSATION)
    result = _propose(store)
    body = cli("show", page, "--json", "--store", str(store)).json["page"]["payload"]["content"]
    for proposal in result["proposals"]:
        for evidence in proposal["evidence"]:
            assert body[evidence["start"]:evidence["end"]] == evidence["text"]
    spans = cli("review", "show", result["proposals"][0]["id"], "--json", "--store",
                str(store)).json["source_spans"]
    assert spans == result["proposals"][0]["evidence"]
    view = cli("show", result["proposals"][0]["id"], "--view", "source_spans", "--json",
               "--store", str(store))
    if view.code == 0:  # the store's own read view of the same facet
        assert view.json["source_spans"]["spans"] == spans


def test_dry_run_writes_nothing(store: Path) -> None:
    from tests.conftest import snapshot

    _add(store, CONVERSATION)
    before = snapshot(store)
    result = _propose(store, "--dry-run")
    assert result["dry_run"] is True and result["counts"]["proposals"] == 6
    assert all(p["id"] is None for p in result["proposals"])
    assert snapshot(store) == before


def test_rerunning_proposes_nothing_and_one_fact_said_often_is_one_proposal(store: Path) -> None:
    for day in ("01", "02", "03"):
        _add(store, f"### User · 2024-02-{day} 09:00\n\nI live in Porto. I use Neovim.\n",
             title=f"chat {day}")
    first = _propose(store)
    assert _contents(first) == {"Lives in Porto.", "Uses Neovim."}
    assert all(len(p["evidence"]) == 3 for p in first["proposals"])
    again = _propose(store)
    assert again["proposals"] == [] and again["counts"]["already_known"] == 2
    # a new conversation saying it again adds evidence to the pending proposal
    _add(store, "### User · 2024-03-01 09:00\n\nFor context: I live in Porto.\n", title="more")
    more = _propose(store)
    assert [p["status"] for p in more["proposals"]] == ["evidence_added"]
    pending = more["proposals"][0]["id"]
    assert pending in {p["id"] for p in first["proposals"]}
    queue = cli("review", "--json", "--store", str(store)).json
    assert len(queue) == 2
    item = next(i for i in queue if i["page_id"] == pending)
    assert len(item["source_spans"]) == 4
    assert _propose(store)["proposals"] == []


def test_a_rejected_proposal_is_never_proposed_again(store: Path) -> None:
    _add(store, "### User · 2024-02-01 09:00\n\nI'm a morning person.\n")
    [proposal] = _propose(store)["proposals"]
    assert cli("review", "reject", proposal["id"], "--store", str(store)).code == 0
    _add(store, "### User · 2024-05-01 09:00\n\nHonestly, I'm a morning person.\n", title="b")
    again = _propose(store)
    assert again["proposals"] == [] and again["counts"]["rejected_before"] == 1


def test_an_accepted_or_hand_written_keystone_is_not_proposed(store: Path) -> None:
    assert cli("keystone", "add", "Uses Neovim every day.", "--store", str(store)).code == 0
    _add(store, "### User · 2024-02-01 09:00\n\nI use Neovim. I live in Porto.\n")
    result = _propose(store)
    assert _contents(result) == {"Lives in Porto."}
    assert cli("review", "accept", result["proposals"][0]["id"], "--store", str(store)).code == 0
    assert _propose(store)["proposals"] == []


def test_a_newer_statement_supersedes_the_current_keystone(store: Path, monkeypatch) -> None:
    monkeypatch.setenv("PCP_NOW", "2023-01-10T10:00:00.000Z")
    old = cli("keystone", "add", "Lives in Berlin.", "--category", "identity", "--json",
              "--store", str(store)).json["page_id"]
    monkeypatch.delenv("PCP_NOW")
    _add(store, "### User · 2024-09-20 09:00\n\nWe moved to Porto in September 2024.\n")
    result = _propose(store)
    residence = next(p for p in result["proposals"] if p["content"] == "Lives in Porto.")
    assert residence["supersedes"] == old
    event = next(p for p in result["proposals"] if p["kind"] == "timeline_event")
    assert (event["date"], event["category"]) == ("2024-09", "move")
    # nothing changes before acceptance
    assert "Lives in Berlin." in cli("export", "--format", "micro_prompt", "--store",
                                     str(store)).stdout
    assert cli("review", "accept", residence["id"], event["id"], "--store",
               str(store)).code == 0
    prompt = cli("export", "--format", "micro_prompt", "--store", str(store)).stdout
    assert "Lives in Porto." in prompt and "Berlin" not in prompt
    old_page = cli("show", old, "--json", "--store", str(store)).json["page"]
    assert old_page["lifecycle_status"] == "superseded"
    timeline = cli("timeline", "list", "--json", "--store", str(store))
    assert "Moved to Porto" in timeline.stdout
    # an older statement of the old value does not come back
    _add(store, "### User · 2022-05-01 09:00\n\nI live in Berlin.\n", title="old")
    assert _propose(store)["proposals"] == []


def test_an_older_statement_never_supersedes_a_newer_keystone(store: Path, monkeypatch) -> None:
    monkeypatch.setenv("PCP_NOW", "2025-01-10T10:00:00.000Z")
    cli("keystone", "add", "Lives in Lisbon.", "--store", str(store))
    monkeypatch.delenv("PCP_NOW")
    _add(store, "### User · 2021-03-01 09:00\n\nI live in Oslo.\n")
    result = _propose(store)
    assert result["proposals"] == [] and result["counts"]["older_than_current"] == 1


def test_the_newer_of_two_values_in_one_run_is_proposed(store: Path) -> None:
    _add(store, "### User · 2022-01-01 09:00\n\nI live in Berlin.\n", title="a")
    _add(store, "### User · 2024-06-01 09:00\n\nI live in Porto now.\n", title="b")
    assert _contents(_propose(store)) == {"Lives in Porto."}


def test_pages_type_and_since_choose_what_is_read(store: Path) -> None:
    a = _add(store, "### User · 2022-01-01 09:00\n\nI use Vim.\n", title="a")
    _add(store, "### User · 2024-06-01 09:00\n\nI use Emacs.\n", title="b")
    _add(store, "I prefer tea over coffee.\n", title="n", page_type="note")
    assert _contents(_propose(store, a, "--dry-run")) == {"Uses Vim."}
    assert _contents(_propose(store, "--type", "note", "--dry-run")) == {
        "Prefers tea over coffee."}
    since = _propose(store, "--type", "conversation", "--since", "2024", "--dry-run")
    assert _contents(since) == {"Uses Emacs."}
    bad = cli("propose", "--since", "June", "--store", str(store))
    assert bad.code == 2 and "--since" in bad.stderr
    wrong = cli("propose", "--type", "keystone", "--store", str(store))
    assert wrong.code == 2
    missing = cli("propose", "no-such-page", "--store", str(store))
    assert missing.code == 3


def test_human_output_says_what_happened(store: Path) -> None:
    _add(store, "### User · 2024-06-01 09:00\n\nI live in Porto.\n")
    result = cli("propose", "--store", str(store))
    assert result.code == 0 and "Lives in Porto." in result.stdout
    assert "proposed 1" in result.stdout and "pcp review" in result.stdout


def test_the_readme_tour_works_on_the_bundled_example(example: Path) -> None:
    before = cli("export", "--format", "micro_prompt", "--store", str(example)).stdout
    assert "Lisbon" not in before
    result = _propose(example)
    assert _contents(result) == {"Lives in Lisbon.", "Moved to Lisbon in October 2025.",
                                 "Has a partner, Inês.", "No calls before 11:00.",
                                 "Uses Observable notebooks for quick sketches."}
    assert all(e["page_id"] == "conv-weekly-rhythm"
               for p in result["proposals"] for e in p["evidence"])
    assert cli("export", "--format", "micro_prompt", "--store", str(example)).stdout == before
    accepted = cli("review", "accept", "Lives in Lisbon.", "--store", str(example))
    assert accepted.code == 0, accepted.stderr
    assert "Lives in Lisbon." in cli("export", "--format", "micro_prompt", "--store",
                                     str(example)).stdout
    assert cli("validate", "--store", str(example)).code == 0


def test_the_extractor_sits_below_the_facade() -> None:
    """extract/ and api/proposals.py import neither the api (its table or another api module)
    nor a front end (any import, even one inside a function)."""
    import ast

    package = Path(__file__).resolve().parents[1] / "pcp_cli"
    bad = []
    for path in [*sorted((package / "extract").glob("*.py")), package / "api" / "proposals.py"]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if name in ("pcp_cli.api", "pcp_cli") and isinstance(node, ast.ImportFrom) \
                        and any(a.name == "api" for a in node.names) \
                        or name.startswith(("pcp_cli.api", "pcp_cli.cli", "pcp_cli.mcp")):
                    bad.append(f"{path.name}:{node.lineno} imports {name}")
    assert not bad, bad
