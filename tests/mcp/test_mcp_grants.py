"""Grant resolution: the default is safe, narrowing never widens, writing needs two keys."""

from __future__ import annotations

import pytest

from pcp_cli.errors import InvalidInput, UsageError
from pcp_cli.mcp.grants import (
    FIRST_SCOPE,
    OWNERS_NAMESPACE,
    Grant,
    call_scopes,
    implicit_defaults,
    intersect_scopes,
    is_scope_pattern,
    resolve_grant,
    scope_allows,
)

MANIFEST = {
    "format": "pcp-store/1",
    "store_id": "st_01TEST",
    "owner_id": "ada-lumen",
    "default_namespace": "user:ada-lumen",
    "clients": {
        "claude-desktop": {
            "scopes": ["user:ada-lumen", "project:tidewatch"],
            "allow_sensitive": False,
            "allow_write": False,
        },
        "cursor": {"scopes": ["project:*"], "allow_sensitive": True, "allow_write": True},
        "everything": {"scopes": ["*"], "allow_write": True},
    },
}


def test_known_client_gets_its_grant():
    grant = resolve_grant(MANIFEST, "claude-desktop", None, False)
    assert grant == Grant(
        client_id="claude-desktop",
        actor="model",
        scopes=("user:ada-lumen", "project:tidewatch"),
        allow_sensitive=False,
        allow_write=False,
        granted_by="pcp.yaml",
        # no default_scopes in pcp.yaml: a call naming none reads the owner's namespace
        default_scopes=("user:ada-lumen",),
        default_scopes_source=OWNERS_NAMESPACE,
    )


@pytest.mark.parametrize("client_id", ["unknown-app", None])
def test_unknown_or_anonymous_client_gets_safe_default(client_id):
    grant = resolve_grant(MANIFEST, client_id, None, True)
    assert grant.scopes == ("user:ada-lumen",)
    assert grant.allow_sensitive is False
    assert grant.allow_write is False
    assert grant.granted_by == "default"
    assert any("--allow-write ignored" in n for n in grant.notices)


def test_default_namespace_falls_back_to_owner():
    grant = resolve_grant({"owner_id": "bo"}, "x", None, False)
    assert grant.scopes == ("user:bo",)


def test_manifest_without_owner_or_default_shows_nothing():
    assert resolve_grant({}, "x", None, False).scopes == ()


def test_write_needs_grant_and_flag():
    assert resolve_grant(MANIFEST, "cursor", None, False).allow_write is False
    assert resolve_grant(MANIFEST, "cursor", None, True).allow_write is True
    refused = resolve_grant(MANIFEST, "claude-desktop", None, True)
    assert refused.allow_write is False
    assert any("allow_write: true" in n for n in refused.notices)


def test_scope_can_only_narrow():
    requested = ["project:tidewatch", "project:secret"]
    grant = resolve_grant(MANIFEST, "claude-desktop", requested, False)
    assert grant.scopes == ("project:tidewatch",)
    assert grant.dropped_scopes == ("project:secret",)
    assert any("project:secret" in n for n in grant.notices)


def test_narrowing_to_nothing_shows_nothing_not_everything():
    grant = resolve_grant(MANIFEST, "claude-desktop", ["user:someone-else"], False)
    assert grant.scopes == ()
    assert not scope_allows(grant, "user:ada-lumen")


def test_a_pattern_request_is_narrowed_to_the_grant():
    # A pattern means "what I may see of this": never more than the grant, never nothing
    # when the grant has something there.
    grant = resolve_grant(MANIFEST, "claude-desktop", ["project:*"], False)
    assert grant.scopes == ("project:tidewatch",) and grant.dropped_scopes == ()
    wide = resolve_grant(MANIFEST, "cursor", ["project:tidewatch:*", "project:x"], False)
    assert wide.scopes == ("project:tidewatch:*", "project:x")
    star = resolve_grant(MANIFEST, "everything", ["*"], False)
    assert star.scopes == ("*",)
    cursor = resolve_grant(MANIFEST, "cursor", [], False)
    assert resolve_grant(MANIFEST, "cursor", ["*"], False).scopes == \
        resolve_grant(MANIFEST, "cursor", None, False).scopes != ()
    assert cursor.scopes == ()
    none_there = resolve_grant(MANIFEST, "claude-desktop", ["team:*"], False)
    assert none_there.scopes == () and none_there.dropped_scopes == ("team:*",)


@pytest.mark.parametrize(("grant", "requested", "kept"), [
    (("*",), ["user:*"], ("user:*",)),
    (("user:a", "project:*"), ["*"], ("user:a", "project:*")),
    (("project:*",), ["project:tide:*"], ("project:tide:*",)),
    (("project:tide:*",), ["project:*"], ("project:tide:*",)),
    (("project:tide",), ["project:*", "project:tide"], ("project:tide",)),
    (("user:a",), ["user:b"], ()),
])
def test_intersection_of_patterns(grant, requested, kept):
    assert intersect_scopes(grant, requested)[0] == kept


def test_invalid_requested_scope_is_dropped():
    grant = resolve_grant(MANIFEST, "everything", ["../etc", "user:ada-lumen"], False)
    assert grant.scopes == ("user:ada-lumen",)
    assert grant.dropped_scopes == ("../etc",)


@pytest.mark.parametrize(
    ("scopes", "namespace", "allowed"),
    [
        (("user:ada-lumen",), "user:ada-lumen", True),
        (("user:ada-lumen",), "user:ada-lumen:journal", False),
        (("project:*",), "project:tidewatch", True),
        (("project:*",), "project:tidewatch:notes", True),
        (("project:*",), "project", False),
        (("project:*",), "projects:x", False),
        (("*",), "anything:at-all", True),
        ((), "user:ada-lumen", False),
    ],
)
def test_scope_allows(scopes, namespace, allowed):
    grant = Grant(None, "model", scopes, False, False, "default")
    assert scope_allows(grant, namespace) is allowed


def test_intersect_scopes_none_keeps_grant():
    assert intersect_scopes(("a:b",), None) == (("a:b",), ())
    assert intersect_scopes(("a:*",), ["a:b", "a:b", "c"]) == (("a:b",), ("c",))


@pytest.mark.parametrize("value", ["*", "user:x", "project:*", "a"])
def test_valid_patterns(value):
    assert is_scope_pattern(value)


@pytest.mark.parametrize("value", ["", "User:X", "a:**", "*:a", "a/b", 3, None, "a:"])
def test_invalid_patterns(value):
    assert not is_scope_pattern(value)


@pytest.mark.parametrize(
    "entry",
    [
        {"scopes": "user:ada-lumen"},
        {"scopes": ["not a scope"]},
        {"scopes": [], "allow_write": "yes"},
        {"scopes": [], "actor": "user"},
        {"scope": ["user:ada-lumen"]},
        ["user:ada-lumen"],
    ],
)
def test_malformed_grant_is_invalid_input(entry):
    with pytest.raises(InvalidInput) as info:
        resolve_grant({"clients": {"c": entry}}, "c", None, False)
    assert info.value.hint
    assert "pcp.yaml" in info.value.message


def test_bad_clients_section_and_default_namespace():
    with pytest.raises(InvalidInput):
        resolve_grant({"clients": ["c"]}, "c", None, False)
    with pytest.raises(InvalidInput):
        resolve_grant({"default_namespace": "Not Valid"}, "c", None, False)


def test_a_client_always_acts_as_a_model():
    grant = resolve_grant({"clients": {"sync": {"scopes": ["*"], "description": "x"}}}, "sync")
    assert grant.actor == "model"
    with pytest.raises(InvalidInput, match="unknown key 'actor'"):
        resolve_grant({"clients": {"sync": {"scopes": ["*"], "actor": "system"}}}, "sync")


@pytest.mark.parametrize("client_id", ["", "has space", "../x", "x" * 65])
def test_bad_client_id_is_usage_error(client_id):
    with pytest.raises(UsageError):
        resolve_grant(MANIFEST, client_id, None, False)


def test_grant_to_dict_has_no_notices():
    data = resolve_grant(MANIFEST, "cursor", None, True).to_dict()
    assert data == {
        "client_id": "cursor",
        "actor": "model",
        "scopes": ["project:*"],
        "default_scopes": ["project:*"],
        "default_scopes_source": FIRST_SCOPE,
        "allow_sensitive": True,
        "allow_write": True,
        "granted_by": "pcp.yaml",
        "pcp_version": "1.2",
    }


@pytest.mark.parametrize("scopes, default_namespace, expected", [
    (("user:ada-lumen", "project:tidewatch"), "user:ada-lumen", ("user:ada-lumen",)),
    (("project:tidewatch", "user:ada-lumen"), "user:ada-lumen", ("user:ada-lumen",)),
    (("*",), "user:ada-lumen", ("user:ada-lumen",)),
    (("user:*",), "user:ada-lumen", ("user:ada-lumen",)),
    (("project:*", "project:x"), "user:ada-lumen", ("project:*",)),
    (("project:x",), None, ("project:x",)),
    ((), "user:ada-lumen", ()),
])
def test_a_grant_without_default_scopes_reads_one_home(scopes, default_namespace, expected):
    """Never every granted scope: the owner's namespace when granted, else the first scope."""
    assert implicit_defaults(scopes, default_namespace)[0] == expected


def test_a_call_reads_the_defaults_unless_it_names_scopes():
    grant = resolve_grant(MANIFEST, "claude-desktop", None, False)
    assert call_scopes(grant, None)[0] == ("user:ada-lumen",)
    assert call_scopes(grant, "*")[0] == ("user:ada-lumen", "project:tidewatch")
    assert call_scopes(grant, ["*"])[0] == ("user:ada-lumen", "project:tidewatch")
    kept, dropped, source = call_scopes(grant, ["project:tidewatch", "project:secret"])
    assert (kept, dropped) == (("project:tidewatch",), ("project:secret",))
    assert source.startswith("the call's scopes")
    # narrowing the server to scopes without the defaults moves the default inside them
    narrowed = resolve_grant(MANIFEST, "claude-desktop", ["project:tidewatch"], False)
    assert narrowed.default_scopes == ("project:tidewatch",)


def test_a_grant_names_the_protocol_version_it_is_served():
    manifest = {**MANIFEST, "clients": {"old": {"scopes": ["*"], "pcp_version": "1.1"},
                                        "bad": {"scopes": ["*"], "pcp_version": 1.1}}}
    assert resolve_grant(manifest, "old").pcp_version == "1.1"
    assert resolve_grant(MANIFEST, "cursor").pcp_version == "1.2"
    with pytest.raises(InvalidInput, match="pcp_version 1.1 is not a version"):
        resolve_grant(manifest, "bad")
