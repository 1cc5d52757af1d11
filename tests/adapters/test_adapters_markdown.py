from __future__ import annotations

import string
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pcp_cli.adapters import ImportItem, ItemProblem, iter_items
from pcp_cli.adapters.base import FRONTMATTER_EXT
from pcp_cli.adapters.markdown import DOCUMENT_CHARS, parse_tags, wikilink_targets
from pcp_cli.adapters.markdown import iter_items as markdown_items
from tests.adapters.adapter_builders import write_folder

VAULT = {
    "Home.md": "---\ntitle: Start here\ntags: [index, '#meta']\naliases: [Index]\n"
    "created: 2024-01-02\nmood: calm\ncustom: {nested: [1, 2]}\n---\n"
    "See [[Projects/Tidewatch|the dashboard]], [[Ideas#Later]], [[Missing note]] and "
    "`[[not a link]]`.\n\n![[attachments/image.png]]\n",
    "Projects/Tidewatch.md": "# Tidewatch\n\nBack to [[index]] and [[Home]]. 中文内容。\n",
    "Ideas.md": "---\ntags: 'rust, #go  python'\nupdated: 2024-03-04T05:06:07Z\n---\n"
    "No heading here.\n",
    "docs/Manual.md": "# Manual\n\nShort but under docs.\n",
    "Long.md": "# Long\n\n" + "word " * (DOCUMENT_CHARS // 5 + 10),
    ".obsidian/workspace.md": "# hidden\n",
    ".trash/Old.md": "# deleted\n",
    "attachments/image.png": b"\x89PNG",
}


def run(root: Path) -> tuple[dict[str, ImportItem], list[ItemProblem]]:
    results = list(markdown_items(root))
    items = {r.key: r for r in results if isinstance(r, ImportItem)}
    return items, [r for r in results if isinstance(r, ItemProblem)]


def test_vault_maps_frontmatter_titles_types_and_links(tmp_path: Path) -> None:
    items, problems = run(write_folder(tmp_path / "vault", VAULT))
    assert problems == []
    assert sorted(items) == [
        "markdown:Home.md",
        "markdown:Ideas.md",
        "markdown:Long.md",
        "markdown:Projects/Tidewatch.md",
        "markdown:docs/Manual.md",
    ]
    home = items["markdown:Home.md"]
    assert home.title == "Start here" and home.type == "note" and home.origin == "imported"
    assert home.tags == ("index", "meta")
    assert home.record == {"aliases": ["Index"], "created_at": "2024-01-02"}
    assert home.timestamp == "2024-01-02"
    assert home.extensions[FRONTMATTER_EXT] == {"mood": "calm", "custom": {"nested": [1, 2]}}
    assert home.extensions["org.pcp-cli.markdown"] == {"unresolved_links": ["Missing note"]}
    assert home.links == ("markdown:Projects/Tidewatch.md", "markdown:Ideas.md")
    assert home.source_refs == ("markdown:Home.md",)
    assert home.content.startswith("See [[Projects/Tidewatch|the dashboard]]")

    tidewatch = items["markdown:Projects/Tidewatch.md"]
    assert tidewatch.title == "Tidewatch"
    assert tidewatch.links == ("markdown:Home.md",)  # via the alias, then by name: one link
    ideas = items["markdown:Ideas.md"]
    assert ideas.title == "Ideas" and ideas.tags == ("rust", "go", "python")
    assert ideas.timestamp == "2024-03-04T05:06:07.000Z"
    assert items["markdown:docs/Manual.md"].type == "document"
    assert items["markdown:Long.md"].type == "document"


def test_dispatch_detects_a_folder_of_notes(tmp_path: Path) -> None:
    vault = write_folder(tmp_path / "vault", VAULT)
    assert list(iter_items(vault)) == list(markdown_items(vault))


def test_bad_frontmatter_non_utf8_and_anchors_are_problems(tmp_path: Path) -> None:
    vault = write_folder(
        tmp_path / "vault",
        {
            "good.md": "# Good\n",
            "bad.md": "---\ntitle: ok\ntags: [unclosed\n---\nbody\n",
            "anchors.md": "---\nbase: &b {a: 1}\nother: *b\n---\nbody\n",
            "unclosed.md": "---\ntitle: never closed\n",
            "list.md": "---\n- a\n- b\n---\n",
            "latin1.md": "caf\xe9".encode("latin-1"),
            "python.md": "---\nx: !!python/object/apply:os.system ['echo hi']\n---\n",
        },
    )
    items, problems = run(vault)
    assert list(items) == ["markdown:good.md"]
    found = {p.item: p for p in problems}
    assert set(found) == {
        "bad.md",
        "anchors.md",
        "unclosed.md",
        "list.md",
        "latin1.md",
        "python.md",
    }
    assert found["bad.md"].line == 4 and found["bad.md"].source.endswith("bad.md")
    assert "anchors and aliases" in found["anchors.md"].reason and found["anchors.md"].line == 2
    assert "UTF-8" in found["latin1.md"].reason
    assert all(p.skipped for p in problems)


def test_single_file_and_crlf_and_bom(tmp_path: Path) -> None:
    note = tmp_path / "one.md"
    note.write_bytes("\ufeff---\r\ntitle: Windows\r\n---\r\nLine\r\n".encode())
    [item] = list(iter_items(note))
    assert isinstance(item, ImportItem)
    assert item.title == "Windows" and item.content == "Line\n" and item.key == "markdown:one.md"


def test_wikilink_forms() -> None:
    body = "[[A]] [[B|shown]] [[C#Heading]] [[D#H|x]] ![[E.md]] `[[G]]`\n```md\n[[F]]\n```\n[[ ]]"
    assert wikilink_targets(body) == ["A", "B", "C", "D", "E.md"]


TAG_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-_/中文é", min_size=1)


@given(st.lists(TAG_TEXT, max_size=5))
def test_tags_as_list_or_comma_string_agree(tags: list[str]) -> None:
    as_list = parse_tags(tags)
    assert as_list == parse_tags(", ".join(tags)) == parse_tags(" ".join("#" + t for t in tags))


@given(st.text(st.sampled_from("[]`~|#!\n ab"), max_size=40))
def test_wikilinks_and_headings_skip_the_code_pass_only_when_it_changes_nothing(body: str) -> None:
    """The shortcuts (no '[' means no link; no backtick or '~~~' means no code to remove) find
    what the full pass finds."""
    from pcp_cli.adapters import markdown

    visible = markdown._CODE.sub("", body)
    assert markdown._outside_code(body) == visible
    full = [m.group(2).strip() for m in markdown._WIKILINK.finditer(visible)
            if m.group(2).strip()]
    assert wikilink_targets(body) == full
