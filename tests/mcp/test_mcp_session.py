"""Tool-call rules in process (no subprocess): validation, cursors, the schema table."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.errors import InvalidInput
from pcp_cli.mcp.audit import AuditLog, read_audit
from pcp_cli.mcp.grants import Grant
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.tools import TOOLS, TOOLS_BY_NAME, validate_arguments
from tests.mcp.fake_backend_server import FakeBackend

READER = Grant("reader", "model", ("user:ada-lumen", "project:tidewatch"), False, False,
               "pcp.yaml")


@pytest.fixture
def session(tmp_path):
    return ToolSession(FakeBackend(), READER, AuditLog(tmp_path), max_payload_chars=100)


@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_every_input_schema_is_valid_json_schema(spec):
    jsonschema.Draft202012Validator.check_schema(spec.input_schema())
    assert spec.name.startswith("pcp_")
    assert spec.description and spec.title


def test_defaults_are_filled_and_lists_deduplicated():
    args = validate_arguments(TOOLS_BY_NAME["pcp_search"],
                              {"query": "x", "types": ["note", "note"]})
    assert args["limit"] == 10 and args["types"] == ("note",)
    assert args["include_sensitive"] is False and args["scopes"] is None
    args = validate_arguments(TOOLS_BY_NAME["pcp_read_pages"], {"ids": ["a"]})
    assert args["views"] == ("manifest", "payload")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("pcp_search", {"query": "x", "limit": True}),
        ("pcp_search", {"query": "x", "limit": 2.5}),
        ("pcp_search", {"query": "x", "min_score": 1.5}),
        ("pcp_search", {"query": "x" * 1001}),
        ("pcp_search", {"query": ""}),
        ("pcp_search", {"query": "x", "scopes": "user:ada-lumen"}),
        ("pcp_search", {"query": "x", "scopes": []}),
        ("pcp_read_pages", {"ids": []}),
        ("pcp_read_pages", {"ids": [f"pg_{i}" for i in range(21)]}),
        ("pcp_read_pages", {"ids": ["a"], "views": ["everything"]}),
        ("pcp_revise_page", {"page_id": "a", "expected_revision_id": "r"}),
        ("pcp_write_page", {"content": "x", "type": "keystone"}),
        ("pcp_link_pages", {"from_id": "a", "to_id": "b", "relation_type": "likes"}),
        ("pcp_propose_keystone", {"content": "x", "confidence": "high"}),
    ],
)
def test_invalid_arguments_raise_with_hint(tool, arguments):
    with pytest.raises(InvalidInput) as info:
        validate_arguments(TOOLS_BY_NAME[tool], arguments)
    assert info.value.message.startswith(tool)
    assert info.value.hint


def test_cursor_is_bound_to_its_request(session):
    first = session.call("pcp_read_pages", {"ids": ["pg_tide"]})
    cursor = first.data["next_cursor"]
    assert cursor and len(first.data["pages"][0]["payload"]) == 100
    other = session.call("pcp_read_pages", {"ids": ["pg_tide"], "views": ["payload"],
                                            "cursor": cursor})
    assert other.is_error and "different request" in other.text
    session.backend.pages["pg_tide"]["revision_id"] = "rev_tide2"
    changed = session.call("pcp_read_pages", {"ids": ["pg_tide"], "cursor": cursor})
    assert changed.is_error and "changed since" in changed.text


def test_views_without_payload_are_not_paged(session):
    reply = session.call("pcp_read_pages", {"ids": ["pg_tide", "pg_role"], "views": ["manifest"]})
    assert reply.data["next_cursor"] is None
    assert [p["page_id"] for p in reply.data["pages"]] == ["pg_tide", "pg_role"]


def test_timeline_range_must_be_ordered(session):
    reply = session.call("pcp_get_timeline", {"from": "2021", "to": "2020"})
    assert reply.is_error and reply.data["error"]["code"] == "invalid_input"


def test_writes_absent_without_write_grant(session, tmp_path):
    reply = session.call("pcp_propose_keystone", {"content": "Ada likes tea."})
    assert reply.is_error and reply.data["error"]["code"] == "unknown_tool"
    assert read_audit(tmp_path)[-1]["outcome"] == "refused"


def test_profile_text_formats_render_as_text(session):
    reply = session.call("pcp_get_profile", {"format": "markdown"})
    assert reply.text.startswith("Ada Lumen") and reply.data["format"] == "markdown"


# -- one source of truth: the published schema is what validates -------------------------------
@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_optional_parameters_take_null_as_their_default_and_say_so(spec):
    schema = spec.input_schema()
    for param in spec.params:
        takes_null = jsonschema.Draft202012Validator(schema["properties"][param.name]).is_valid(
            None)
        assert takes_null != param.required, param.name
        if param.required:
            continue
        base = {p.name: "x" for p in spec.params if p.required and p.kind == "string"}
        base.update({p.name: ["a"] for p in spec.params if p.required and p.kind == "list"})
        if spec.name == "pcp_revise_page":
            base.setdefault("content", "x")
        if param.name in base:
            continue
        args = validate_arguments(spec, {**base, param.name: None})
        assert args[param.name] == param.default, param.name


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.floats(-2, 2, allow_nan=False)
    | st.text(max_size=5) | st.sampled_from(["note", "json", "ids", "2024-01", "a:b", "*"]),
    lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(spec=st.sampled_from(TOOLS), data=st.data())
def test_validation_accepts_exactly_what_the_published_schema_accepts(spec, data):
    names = [p.name for p in spec.params] + ["unknown"]
    arguments = data.draw(st.dictionaries(st.sampled_from(names), _JSON, max_size=4))
    published = jsonschema.Draft202012Validator(spec.input_schema())
    try:
        validate_arguments(spec, arguments)
        accepted = True
    except InvalidInput as exc:
        accepted = False
        assert exc.message.startswith(spec.name) and exc.hint
    assert accepted == published.is_valid(arguments)
