"""Property tests for the round trips the store depends on.

If rendering a head file and parsing it back were not exact, every command would see a
"hand edit" that nobody made; if revision files did not round-trip, history would drift.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pcp_cli import api
from pcp_cli.model import vocab
from pcp_cli.model.page import Actor, PageState, ProvenanceStep, Revision, file_json
from pcp_cli.store.headfile import parse_head, render_head

# Text YAML and UTF-8 can carry: no surrogates; the tricky cases are added explicitly.
TRICKY = ["yes", "no", "on", "off", "y", "n", "true", "False", "null", "~", "Null", "", " ",
          "2024-01-01", "2024-01-01T10:00:00Z", "12:30", "1e3", "0x1F", "0o17", "010", ".inf",
          "-.nan", "1_000", "- item", "key: value", "# comment", "&anchor", "*alias",
          "!!python/object", "!tag", "'quoted'", '"double"', "  leading spaces",
          "trailing spaces  ", "multi\nline\n", "a\n---\nb", "---", "...", "\ttab", "é ü 中文 🙂",
          "\u2028line sep", "\x85nel", "back\\slash", "{a: 1}", "[1, 2]", "%TAG", "@at", "`tick",
          "|", ">", "?", ":", "\r\nCRLF", "\x00nul", "\x1b[31m"]
text = st.one_of(
    st.sampled_from(TRICKY),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(text, children, max_size=4),
    ),
    max_leaves=12,
)
ext_keys = st.builds(
    lambda a, b: f"{a}.{b}",
    st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True),
    st.from_regex(r"[A-Za-z0-9_-]{1,8}([.:][A-Za-z0-9_-]{1,8})?", fullmatch=True),
)
extensions = st.dictionaries(ext_keys, json_values, max_size=4)
records = st.dictionaries(text, json_values, max_size=4)
bodies = st.one_of(st.sampled_from(TRICKY), st.text(st.characters(blacklist_categories=("Cs",)),
                                                    max_size=200))
ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True).filter(
    lambda s: s.lower() not in ("con", "prn", "aux", "nul") and not s.lower().startswith(
        ("com", "lpt")))


@st.composite
def states(draw: st.DrawFn) -> PageState:
    return PageState(
        page_id=draw(ids),
        type=draw(st.sampled_from([t for t in vocab.PAGE_TYPES
                                   if t not in ("keystone", "timeline_event")])),
        namespace=draw(st.sampled_from(["user:ada", "project:x", "a:b.c:d-e"])),
        owner_id="ada",
        content=draw(bodies),
        title=draw(text),
        media_type=draw(st.sampled_from(vocab.MEDIA_TYPES)),
        visibility=draw(st.sampled_from(vocab.VISIBILITIES)),
        lifecycle_status=draw(st.sampled_from(vocab.LIFECYCLE_STATUSES)),
        review_status=draw(st.sampled_from(vocab.REVIEW_STATUSES)),
        origin=draw(st.sampled_from(vocab.ORIGINS)),
        sensitivity=draw(st.sampled_from(vocab.SENSITIVITIES)),
        integrity=draw(st.sampled_from(vocab.INTEGRITIES)),
        epistemic_status=draw(st.sampled_from(vocab.EPISTEMIC_STATUSES)),
        instruction_policy=draw(st.sampled_from(vocab.INSTRUCTION_POLICIES)),
        tags=tuple(draw(st.lists(text, max_size=4))),
        source_refs=tuple(draw(st.lists(text, max_size=3))),
        record=draw(records),
        facets=draw(records),
        extensions=draw(extensions),
    )


@st.composite
def revisions(draw: st.DrawFn) -> Revision:
    state = draw(states())
    stamp = draw(st.sampled_from(["2024-01-01T00:00:00.000Z", "2026-11-30T11:00:00.123Z"]))
    parent = draw(st.one_of(st.none(), st.just("rev_01PARENT")))
    return Revision(
        revision_id=draw(ids.map(lambda s: "rev_" + s)),
        state=state,
        created_at=stamp,
        created_by=Actor(draw(st.sampled_from(vocab.ACTOR_TYPES)), draw(text)),
        provenance=(ProvenanceStep(draw(st.sampled_from(vocab.OPERATIONS)), "user", "ada", stamp,
                                   (parent,) if parent else (), draw(st.none() | text)),),
        page_created_at=stamp,
        parent_revision_id=parent,
        merged_revision_ids=tuple(draw(st.lists(ids, max_size=2))),
        idempotency_key=draw(st.none() | text),
    )


@settings(max_examples=300, deadline=None)
@given(revisions())
def test_head_file_round_trip(revision: Revision) -> None:
    raw = render_head(revision).encode("utf-8")
    parsed = parse_head(raw, path="pages/x.md", file_page_id=revision.page_id,
                        folder_namespace=revision.state.namespace, owner_id="ada")
    assert parsed.state == revision.state
    assert parsed.revision_id == revision.revision_id
    assert parsed.state.content_hash == revision.content_hash
    assert parsed.frontmatter["content_hash"] == revision.content_hash
    # deterministic: the same revision always gives the same bytes
    assert render_head(revision).encode("utf-8") == raw


@settings(max_examples=300, deadline=None)
@given(revisions())
def test_revision_dict_round_trip(revision: Revision) -> None:
    assert Revision.from_dict(revision.to_dict()) == revision
    text_form = file_json(revision.to_dict())
    again = Revision.from_dict(json.loads(text_form))
    assert again == revision
    assert file_json(again.to_dict()) == text_form
    assert text_form.endswith("}\n") and "\r" not in text_form


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roundtrip") / "store"
    api.init_store(root, owner_id="ada")
    return root


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(exts=extensions, body=bodies, title=text)
def test_extensions_survive_write_revise_read(shared_store: Path, exts: dict, body: str,
                                              title: str) -> None:
    assume(body.strip())
    with api.open_store(shared_store) as store:
        state = store.new_state(body, title=title, extensions=exts)
        written = store.write_page(state)
        revised = api.revise_page(store, written.page_id, content=body + "\nmore")
        assert revised.status == "revised"
    # a fresh process-like open: nothing is mistaken for a hand edit
    with api.open_store(shared_store) as store:
        assert store.hand_edits == []
        current = store.current(written.page_id)
        assert current.revision_id == revised.revision_id
        assert current.state.extensions == exts
        assert current.state.title == title
        entry = store.head_entry(written.page_id)
        assert entry is not None and not entry.edited and entry.problem is None
        head = (shared_store / entry.path).read_bytes()
        parsed = parse_head(head, path=entry.path, file_page_id=written.page_id,
                            folder_namespace=current.state.namespace, owner_id="ada")
        assert parsed.state is not None and parsed.state.extensions == exts
        assert parsed.state == current.state
