"""The micro_prompt on a fresh clone (no `.pcp/`): read from the profile and keystone head files
only, and byte for byte what the catalog path gives on the same store, safeguards included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.errors import InvalidInput
from pcp_cli.store import frontmatter
from pcp_cli.store.peek import frontmatter_type
from tests.conftest import cli, run_pcp

NS = "user:ada-lumen"
HEADS = Path("pages") / "user" / "ada-lumen"


def export(root: Path, *scopes: str) -> str:
    args = [a for scope in scopes for a in ("--scope", scope)]
    result = cli("export", "--format", "micro_prompt", "--store", root, *args)
    assert result.code == 0, result.stderr
    return result.stdout


def catalog(root: Path) -> Path:
    return root / ".pcp" / "catalog.sqlite"


def fresh_clone(root: Path) -> None:
    shutil.rmtree(root / ".pcp", ignore_errors=True)


def assert_same_both_ways(root: Path, *scopes: str, falls_back: bool = False) -> str:
    """The fresh path's text, after checking it equals the catalog's and built no catalog
    (unless it `falls_back` to the catalog path, which builds the whole catalog)."""
    fresh_clone(root)
    fresh = export(root, *scopes)
    assert catalog(root).exists() == falls_back
    assert cli("ls", "--store", root).code == 0  # builds the catalog of every page
    assert catalog(root).exists()
    assert export(root, *scopes) == fresh
    return fresh


def add_keystone(root: Path, text: str, *extra: str) -> str:
    result = cli("keystone", "add", text, "--store", root, "--json", *extra)
    assert result.code == 0, result.stderr
    return str(result.json["page_id"])


def write_page(root: Path, content: str, **fields: object) -> str:
    from pcp_cli.store.store import Store

    with Store.open(root) as store:
        store.refresh()
        state = store.new_state(content, **fields)
        return store.write_page(state).page_id


@pytest.fixture
def rich(example: Path) -> Path:
    """The example store plus what the safeguards are about, and head files in odd layouts."""
    add_keystone(example, "Ada keeps a secret high-sensitivity fact.", "--sensitivity", "high")
    add_keystone(example, "Ada likes medium-sensitivity walks by the sea.",
                 "--sensitivity", "medium", "--category", "preference")
    add_keystone(example, "Ada reviews pull requests before lunch.", "--category", "rule",
                 "--importance", "0.9", "--id", "ks-odd-layout")
    add_keystone(example, "Ada writes her notes in Markdown first.", "--category", "preference",
                 "--id", "ks-crlf")
    write_page(example, "Ada wants charts to start their y axis at zero.", type="keystone",
               namespace="project:tidewatch", review_status="affirmed",
               record={"category": "rule", "source": "user_stated", "importance": 0.7})
    write_page(example, "Ada prefers long frontmatter to be handled too.", type="keystone",
               review_status="affirmed", page_id="ks-long",
               record={"category": "preference", "source": "user_stated",
                       "detail": "x " * 3000})
    write_page(example, "A note that only looks like a keystone.", type="note",
               title="type: keystone")
    # An unclassified keystone: its head file lost the sensitivity line (recorded as an edit).
    unclassified = add_keystone(example, "Ada's unclassified claim must never be served.")
    head = next((example / "pages").rglob(f"{unclassified}.md"))
    head.write_text(head.read_text().replace("sensitivity: low\n", ""))
    assert cli("ls", "--store", example).code == 0  # records the edit
    assert "sensitivity:" not in head.read_text()
    # Same pages, unusual but equivalent YAML (the catalog sees no edit in either).
    odd = example / HEADS / "ks-odd-layout.md"
    text = odd.read_text()
    block, body = text[4:].split("\n---\n", 1)
    odd.write_text("---\n" + "".join(f"  {line}\n" for line in block.splitlines())
                   .replace("  type: keystone", '  "type": keystone') + "---\n" + body)
    crlf = example / HEADS / "ks-crlf.md"
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    assert cli("ls", "--store", example).code == 0
    assert cli("validate", "--store", example).code == 0
    return example


def test_fresh_clone_micro_prompt_is_the_catalog_one_on_the_example_store(example):
    text = assert_same_both_ways(example)
    assert "Ada Lumen" in text and text.endswith(")\n")


@pytest.mark.parametrize("scopes", [(), (NS,), ("project:*",), ("user:*", "project:tidewatch")])
def test_fresh_clone_keeps_every_safeguard_and_matches_the_catalog(rich, scopes):
    text = assert_same_both_ways(rich, *scopes)
    assert "secret high-sensitivity" not in text
    assert "unclassified claim" not in text
    assert "dark-mode dashboards" not in text  # a proposal
    assert "Prefers Svelte + D3 with small" not in text  # superseded
    assert "only looks like a keystone" not in text


def test_fresh_clone_reads_keystones_in_odd_layouts_and_other_scopes(rich):
    text = assert_same_both_ways(rich)
    assert "pull requests before lunch" in text  # indented mapping, quoted key
    assert "y axis at zero" in assert_same_both_ways(rich, "project:tidewatch")


def test_a_hand_edit_on_a_fresh_clone_is_recorded_and_served(example):
    head = example / HEADS / "ks-004.md"
    head.write_text(head.read_text().replace("before analyzing it", "before charting it"))
    fresh_clone(example)
    text = export(example)
    assert "before charting it" in text
    history = cli("history", "ks-004", "--store", example, "--json")
    assert history.code == 0 and len(history.json["revisions"]) == 2  # the edit, recorded
    assert assert_same_both_ways(example) == text


@pytest.mark.parametrize("frontmatter", ["", "---\n---\n", "---\n# only a comment\n---\n"])
def test_a_head_file_left_without_frontmatter_on_a_fresh_clone_is_the_page_edited(
        example, frontmatter):
    head = example / HEADS / "ks-004.md"
    head.write_text(frontmatter + "When given a dataset, Ada wants the AI to state its "
                    "assumptions about the data before charting it.\n")
    fresh_clone(example)
    text = export(example)
    assert "before charting it" in text
    assert assert_same_both_ways(example) == text


def test_a_hand_edit_raising_sensitivity_on_a_fresh_clone_hides_the_keystone(example):
    head = example / HEADS / "ks-004.md"
    assert "state its assumptions" in export(example)
    head.write_text(head.read_text().replace("sensitivity: low", "sensitivity: high"))
    fresh_clone(example)
    assert "state its assumptions" not in export(example)


def test_a_dropped_keystone_file_on_a_fresh_clone_is_adopted_as_the_catalog_would(example):
    (example / HEADS / "dropped.md").write_text(
        "---\ntype: keystone\nreview_status: affirmed\nsensitivity: low\n---\n"
        "Ada drinks her coffee black.\n")
    fresh_clone(example)
    text = export(example)
    assert "coffee black" not in text  # adopted as any command would, and not affirmed by it
    assert not (example / HEADS / "dropped.md").exists()
    assert assert_same_both_ways(example) == text


def test_a_missing_head_revision_on_a_fresh_clone_falls_back_like_the_catalog(example):
    assert cli("keystone", "add", "Ada sketches on paper first.",
               "--id", "ks-two", "--store", example).code == 0
    assert cli("revise", "ks-two", "Ada sketches on paper, then in code.",
               "--store", example).code == 0
    revisions = sorted((example / "revisions" / "ks-two").iterdir())
    head = (example / HEADS / "ks-two.md").read_text()
    named = next(p for p in revisions if p.stem in head)
    named.unlink()  # the head file names a revision this clone lacks
    assert assert_same_both_ways(example, falls_back=True)


def test_the_typer_route_and_a_real_process_give_the_same_fresh_text(example, tmp_path):
    expected = assert_same_both_ways(example)
    fresh_clone(example)
    out = tmp_path / "prompt.txt"
    assert cli("export", "--format", "micro_prompt", "--out", out, "--store", example).code == 0
    assert out.read_text() == expected
    fresh_clone(example)
    result = run_pcp("export", "--format", "micro_prompt", "--store", example)
    assert result.code == 0, result.stderr
    assert result.stdout == expected
    assert not catalog(example).exists()


# -- the type line, read without YAML ---------------------------------------------------------
LINES = [
    "page_id: p1", "title: A title", "type: keystone", "type: note", "type: profile",
    '"type": keystone', "'type': note", "  type: keystone", "type:", "  keystone", "- item",
    "type: keystone # a comment", "type:\tkeystone", "type : keystone", "? type", ": keystone",
    'title: "two', 'lines"', "{type: keystone}", "<<: {type: keystone}", "# a comment", "",
    "type: null", "type: 'keystone'", "tags: [a,", "type: note]", "record:", "  type: profile",
    "title: x\u2028type: keystone", "title: x\rtype: keystone", "...", "%YAML 1.1",
    "--- type: keystone", "\ttype: keystone", "type: keystone  ", "type: key stone",
]
# (Blocks with no key at all are left undecided: an existing page's head file without
# frontmatter is that page edited, whatever type it is.)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=8), st.booleans())
def test_the_type_read_from_the_lines_is_the_type_yaml_reads(lines, bom):
    """Whenever the lines decide, they say what the full parse says (or the file is broken)."""
    raw = ("\ufeff" if bom else "") + "---\n" + "".join(f"{line}\n" for line in lines) + \
        "---\nbody\n"
    decided = frontmatter_type(raw.encode("utf-8"))
    if decided is None:
        return
    try:
        head = frontmatter.split(raw, "x.md")
    except InvalidInput:
        return  # the catalog lists the file as a problem: never a page of any type
    assert head.frontmatter.get("type", "note") == (decided or "note"), raw


@pytest.mark.parametrize("raw", [
    "---\n  page_id: p\n  type: note\n---\n",  # an indented mapping: not decided from lines
    "---\npage_id: p\ntype: note\ntype: keystone\n---\n",
    "---\n{page_id: p, type: note}\n---\n",
    "---\r\npage_id: p\r\ntype: note\r\n---\r\n",
    "no frontmatter at all\n",
    "---\npage_id: p\ntype: note\n",  # no closing line
    "---\n---\nbody\n",
    "---\n# a comment\n\n---\nbody\n",
])
def test_unusual_frontmatter_is_left_to_the_full_parse(raw):
    assert frontmatter_type(raw.encode()) is None


def test_the_type_of_a_plain_frontmatter_is_read_from_its_line():
    assert frontmatter_type(b"---\npage_id: p\ntype: keystone\n---\nbody\n") == "keystone"
    assert frontmatter_type(b"---\npage_id: p\ntitle: t\n---\nbody\n") == ""  # a note


def test_agents_md_on_a_fresh_clone_reads_the_profile_material_only(example, tmp_path):
    """`pcp export --format agents-md` takes the micro_prompt's path: no catalog built, and the
    file written is the one the catalog path writes."""
    fresh_clone(example)
    out = tmp_path / "AGENTS.md"
    out.write_text("# Project notes\n\nKeep this line.\n")
    result = cli("export", "--format", "agents-md", "--out", out, "--store", example)
    assert result.code == 0, result.stderr
    assert not catalog(example).exists()
    fresh = out.read_text()
    assert "Keep this line." in fresh and "Ada Lumen" in fresh
    again = tmp_path / "AGENTS-again.md"
    again.write_text("# Project notes\n\nKeep this line.\n")
    assert cli("ls", "--store", example).code == 0  # builds the catalog
    result = cli("export", "--format", "agents-md", "--out", again, "--store", example)
    assert result.code == 0, result.stderr
    assert again.read_text() == fresh
    assert cli("export", "--format", "agents-md", "--store", example).code == 2  # no --out


def test_the_report_says_what_was_left_out_and_why(tmp_path) -> None:
    """`api.micro_prompt_report` (the console's profile page): the same text as the
    micro_prompt a client gets, and each thing left out with its reason."""
    from pcp_cli import api

    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    with api.open_store(root) as store:
        api.add_keystone(store, "Works on Tidewatch, an ocean dashboard.", category="objective",
                         page_id="ks-old")
        api.add_keystone(store, "Works on Saltmarsh, a river tool.", category="objective",
                         page_id="ks-new")
        for number in range(40):
            api.add_keystone(store, f"Prefers option {number} of many, written out at length "
                             "so that forty of them cannot fit in fourteen hundred characters.",
                             category="preference", page_id=f"ks-p{number}")
        api.add_keystone(store, "Has a private health matter.", category="other",
                         sensitivity="high", page_id="ks-secret")
        report = api.micro_prompt_report(store)
        assert report["text"] == api.profile_text(store, "micro_prompt")
    reasons = {item["page_id"]: item["reason"] for item in report["left_out"]}
    assert len(report["text"]) <= report["limit"] == 1400
    assert "Saltmarsh" in report["text"] and "newer or stronger claim" in reasons["ks-old"]
    assert sum("did not fit" in r for r in reasons.values()) >= 10
    assert "ks-secret" not in reasons and report["sensitive_keystones"] == 1


def test_the_report_names_a_few_per_reason_and_is_kept(tmp_path) -> None:
    """Thousands of keystones leave thousands out: `per_reason` names the first few of each
    reason and counts them all; the report is kept, as the micro_prompt is, until the store
    changes (the console's profile page cost ~1.5 s of CPU per load at 9,000 keystones)."""
    from pcp_cli import api

    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    with api.open_store(root) as store:
        for number in range(40):
            api.add_keystone(store, f"Prefers option {number} of many, written out at length "
                             "so that forty of them cannot fit in fourteen hundred characters.",
                             category="preference", page_id=f"ks-p{number}")
        whole = api.micro_prompt_report(store)
        short = api.micro_prompt_report(store, per_reason=3)
        kept = root / ".pcp" / "micro-prompt-report.json"
        assert kept.exists()
        assert api.micro_prompt_report(store, per_reason=3) == short
        api.add_keystone(store, "Prefers tea.", category="preference", page_id="ks-tea")
        assert "Prefers tea." in api.micro_prompt_report(store, per_reason=3)["text"]
    assert short["text"] == whole["text"]
    assert short["left_out_counts"] == whole["left_out_counts"]
    assert sum(whole["left_out_counts"].values()) == len(whole["left_out"]) >= 10
    for reason, total in whole["left_out_counts"].items():
        assert sum(i["reason"] == reason for i in short["left_out"]) == min(3, total)
