"""Frontmatter parsing: the shortcut that skips the YAML event pass for plain blocks must accept
and refuse exactly what the full check does, with the same message and line."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.errors import InvalidInput
from pcp_cli.store import frontmatter


def _reference(block: str) -> object:
    """What load_mapping answered before the shortcut: the event pass, then the load."""
    try:
        frontmatter._check_events(block, "p.md", 2)
        data = yaml.load(block, Loader=frontmatter._yaml()[1])  # noqa: S506
    except InvalidInput as exc:
        return ("error", exc.message)
    except yaml.YAMLError:
        return ("yaml error",)
    try:
        return frontmatter._mapping(data, "p.md", 2)
    except InvalidInput as exc:
        return ("error", exc.message)


def _answer(block: str) -> object:
    try:
        return frontmatter.load_mapping(block, "p.md", first_line=2)
    except InvalidInput as exc:
        return ("yaml error",) if "invalid YAML" in exc.message else ("error", exc.message)


PIECES = ["a", "b", "title", ":", ": ", " ", "  ", "\n", "- ", "[", "]", "{", "}", ", ", "&x ",
          "*x", "!!str ", "!t ", "'q'", '"d"', "Q&A", "hi!", "*bold*", "1", "true", "#c", "?"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_the_shortcut_answers_what_the_event_pass_answers(pieces: list[str]) -> None:
    block = "k: v\n" + "".join(pieces) + "\n"
    assert _answer(block) == _reference(block)


def test_plain_text_with_ampersands_and_stars_loads_and_properties_are_still_refused() -> None:
    assert frontmatter.load_mapping("title: Q&A *bold* hi!\n", "p.md") == {
        "title": "Q&A *bold* hi!"}
    for block, message in (("a: &x 1\nb: *x\n", "anchors and aliases"),
                           ("a: [b, &c d]\n", "anchors and aliases"),
                           ("a: !!str 1\n", "tags are not allowed"),
                           ("a: " + "[" * 20 + "]" * 20 + "\n", "nested deeper than 16")):
        try:
            frontmatter.load_mapping(block, "p.md", first_line=2)
        except InvalidInput as exc:
            assert message in exc.message and exc.line == 2
        else:
            raise AssertionError(f"{block!r} was accepted")


def _constructed(block: str) -> object:
    try:
        return yaml.load(block, Loader=frontmatter._yaml()[1])  # noqa: S506 - SafeLoader
    except yaml.YAMLError as exc:
        return ("error", str(exc))


def _built(block: str) -> object:
    try:
        return frontmatter._load(block)
    except yaml.YAMLError as exc:
        return ("error", str(exc))


LINES = ["a: 1", "a: 2", "b: yes", "c: 2024-01-01", "d: 1_000", "e: 0x1F", "f: 1:30", "g: .inf",
         "h: ~", "i: null", "j: true", "k: 'q'", "<<: {x: 1}", "1: one", "1.5: x", "? [a]\n: b",
         "l:\n  - 1\n  - m: n", "o: {p: [q, r]}", "s: =", "t: !", "u: -", "v:", "w: [a, a]",
         "x: |\n  block\n", "y: >\n  folded\n", "z: \"\\t\"", "nested:\n  a: 1\n  a: 2"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=8), st.lists(st.sampled_from(PIECES), max_size=8))
def test_the_loader_builds_what_the_constructor_builds(lines: list[str], pieces: list[str]) -> None:
    """`_load` builds the common documents itself: the same values (and types), or the same
    refusal, as the strict loader's constructor."""
    block = "\n".join(lines) + "\n" + "".join(pieces) + "\n"
    built, constructed = _built(block), _constructed(block)
    assert built == constructed
    assert repr(built) == repr(constructed)  # 1 and True, 1.0 and 1 are not told apart by ==
