"""Issue #22 on the CLI: a grant's default scopes (`pcp grant add --default-scope`, shown by
`pcp grant list`), the namespaces a `pcp search` reports it searched, and `pcp timeline list` /
`pcp stats` taking the same `--include-sensitive` opt-in as `pcp search`, saying so in
`filters_applied`."""

from __future__ import annotations

from pathlib import Path

from pcp_cli.errors import ExitStatus
from tests.conftest import cli, snapshot

HIGH_EVENT = "tl-secret"


def _ok(*args: str):
    out = cli(*args, "--json")
    assert out.code == 0, (args, out.stderr)
    return out.json


def test_grant_default_scopes_are_stored_listed_and_checked(example: Path) -> None:
    s = ("--store", str(example))
    added = _ok("grant", "add", "agent", "--scope", "user:ada-lumen", "--scope", "project:*",
                "--default-scope", "project:tidewatch", *s)
    assert added["default_scopes"] == ["project:tidewatch"]
    assert "default_scopes:" in (example / "pcp.yaml").read_text()
    listed = {g["client_id"]: g for g in _ok("grant", "list", *s)}
    assert listed["agent"]["default_scopes"] == ["project:tidewatch"]
    human = cli("grant", "list", *s).stdout
    assert "agent\tuser:ada-lumen, project:*\tproject:tidewatch\t" in human
    shown = _ok("grant", "show", "agent", *s)
    assert shown["effective"]["default_scopes"] == ["project:tidewatch"]
    # a default outside the grant's scopes is refused, and pcp.yaml is left as it was
    before = snapshot(example)
    out = cli("grant", "add", "agent", "--scope", "user:ada-lumen", "--default-scope",
              "project:tidewatch", *s)
    assert out.code == ExitStatus.USAGE
    assert "--default-scope project:tidewatch is not inside" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 2  # Error: + Hint:, no traceback
    assert snapshot(example) == before


def test_a_search_reports_the_namespaces_it_searched(example: Path) -> None:
    s = ("--store", str(example))
    every = _ok("search", "tidewatch", *s)["filters_applied"]
    assert every["scopes"] == ["project:tidewatch", "user:ada-lumen"]
    assert every["scopes_requested"] is None
    narrowed = _ok("search", "tidewatch", "--scope", "project:*", *s)["filters_applied"]
    assert narrowed["scopes"] == ["project:tidewatch"]
    assert narrowed["scopes_requested"] == ["project:*"]
    nothing = _ok("search", "tidewatch", "--scope", "work:*", *s)
    assert nothing["filters_applied"]["scopes"] == [] and nothing["results"] == []


def _add_high_event(example: Path) -> None:
    s = ("--store", str(example))
    _ok("timeline", "add", "2022-07", "A private matter", "--id", HIGH_EVENT, *s)
    _ok("revise", HIGH_EVENT, "--sensitivity", "high", *s)


def test_timeline_list_leaves_high_events_out_unless_asked(example: Path) -> None:
    _add_high_event(example)
    s = ("--store", str(example))
    plain = _ok("timeline", "list", *s)
    asked = _ok("timeline", "list", "--include-sensitive", *s)
    assert HIGH_EVENT not in {e["id"] for e in plain["events"]}
    assert HIGH_EVENT in {e["id"] for e in asked["events"]}
    assert asked["count"] == plain["count"] + 1
    assert plain["filters_applied"]["include_sensitive"] is False
    assert plain["filters_applied"]["sensitivity_filtering"] == "all_records"
    assert plain["filters_applied"]["unclassified_sensitivity"].startswith("included")
    assert asked["filters_applied"]["include_sensitive"] is True
    assert "A private matter" not in cli("timeline", "list", *s).stdout
    # the same rule as search: sensitive events are found only with the same opt-in
    found = _ok("search", "private matter", "--type", "timeline_event", *s)
    assert HIGH_EVENT not in {r["id"] for r in found["results"]}


def test_stats_count_high_pages_only_when_asked(example: Path) -> None:
    _add_high_event(example)
    s = ("--store", str(example))
    plain = _ok("stats", *s)
    asked = _ok("stats", "--include-sensitive", *s)
    # health-notes and the new event are high
    assert asked["total"] == plain["total"] + 2
    assert asked["by_type"]["timeline_event"] == plain["by_type"]["timeline_event"] + 1
    assert plain["filters_applied"]["include_sensitive"] is False
    assert asked["filters_applied"]["include_sensitive"] is True
    assert plain["filters_applied"]["review_status"] == "affirmed_only"


def test_pcp_yaml_default_scopes_are_checked_and_narrowed_with_the_grant() -> None:
    import pytest

    from pcp_cli.errors import InvalidInput
    from pcp_cli.mcp.grants import resolve_grant

    manifest = {"clients": {"agent": {"scopes": ["user:ada", "project:*"],
                                      "default_scopes": ["project:tide"]}}}
    assert resolve_grant(manifest, "agent").default_scopes == ("project:tide",)
    # `pcp serve --scope` narrows the defaults with the grant; none left: the implicit rule
    # picks one of what is served (never all of it), and it says so
    narrowed = resolve_grant(manifest, "agent", ["user:ada"])
    assert narrowed.default_scopes == ("user:ada",)
    assert any("default scopes" in n for n in narrowed.notices)
    assert resolve_grant(manifest, "agent", ["project:*"]).default_scopes == ("project:tide",)
    bad = {"clients": {"agent": {"scopes": ["user:ada"], "default_scopes": ["project:tide"]}}}
    with pytest.raises(InvalidInput, match="default_scopes 'project:tide' is not inside"):
        resolve_grant(bad, "agent")
    with pytest.raises(InvalidInput, match="default_scopes must be a list"):
        resolve_grant({"clients": {"agent": {"scopes": ["*"], "default_scopes": "x"}}}, "agent")
