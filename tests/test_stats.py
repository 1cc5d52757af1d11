"""`pcp stats`, `pcp scopes`, `pcp capabilities` and their api functions."""

from __future__ import annotations

from pcp_cli import api
from pcp_cli.query.stats import SCOPES_COUNTED
from tests.conftest import cli


def run(root, *args):
    out = cli(*args, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json


def test_stats_counts_and_time_range(example):
    data = run(example, "stats", "--include-sensitive")
    assert set(data) == {"schema_version", "total", "by_type", "by_origin", "by_namespace",
                         "by_lifecycle", "time_range", "counted",
                         "filters_applied", "protocols"}
    assert data["protocols"]["portable_context_protocol"]["served"] == "1.2"
    # 23 readable pages, but the proposal ks-p01 is not part of the read surface.
    assert data["total"] == 22
    assert data["by_type"] == {"conversation": 2, "keystone": 8, "note": 5, "profile": 1,
                               "timeline_event": 6}
    assert data["by_namespace"] == {"project:tidewatch": 2, "user:ada-lumen": 20}
    assert data["by_lifecycle"] == {"active": 21, "superseded": 1}
    assert sum(data["by_origin"].values()) == 22 and data["by_origin"]["recorded"] == 2
    assert data["time_range"]["earliest"] <= data["time_range"]["latest"]
    assert cli("stats", "--store", str(example)).stdout.startswith("total\t")


def test_stats_count_only_what_the_caller_sees(example):
    with api.open_store(example, readonly=True) as store:
        scoped = api.stats(store, scopes=["project:tidewatch"])
        hidden = api.stats(store, suppressed=frozenset({"health-notes", "ks-001"}),
                           include_sensitive=True)
        nothing = api.stats(store, scopes=[])
    assert scoped["total"] == 2 and set(scoped["by_namespace"]) == {"project:tidewatch"}
    assert hidden["total"] == 20
    assert nothing["total"] == 0 and nothing["time_range"] == {"earliest": None, "latest": None}


def test_stats_follow_lifecycle_changes(example):
    cli("archive", "newsletter-ideas", "--store", str(example))
    assert run(example, "stats", "--include-sensitive")["by_lifecycle"] == {
        "active": 20, "archived": 1, "superseded": 1}


def test_scopes_lists_namespaces_with_counts(example):
    data = run(example, "scopes")
    assert [s["namespace"] for s in data["scopes"]] == ["project:tidewatch", "user:ada-lumen"]
    tide, user = data["scopes"]
    assert tide == {"namespace": "project:tidewatch", "display_name": "tidewatch (project)",
                    "owner_id": "ada-lumen", "visibility": "private",
                    "permissions": {"read": True, "write": True, "sensitive": True},
                    "pages": 2, "last_activity": "2026-01-09T16:00:00.000Z"}
    assert user["pages"] == 19  # active, affirmed: not the superseded ks-003 nor ks-p01
    with api.open_store(example, readonly=True) as store:
        assert api.list_scopes(store, scopes=["user:*"])["scopes"] == [user]
        assert api.list_scopes(store, scopes=[]) == {"scopes": [], "next_cursor": None,
                                                     "counted": SCOPES_COUNTED}


def test_scopes_do_not_read_page_content(example, monkeypatch):
    from pcp_cli.store.store import Store

    def refuse(*args, **kwargs):
        raise AssertionError("page content was read")

    monkeypatch.setattr(Store, "read_body", refuse)
    monkeypatch.setattr(Store, "current", refuse)
    with api.open_store(example, readonly=True) as store:
        assert api.list_scopes(store)["scopes"]
        assert api.stats(store, include_sensitive=True)["total"] == 22


def test_capabilities(example):
    data = run(example, "capabilities")
    for key in ("search", "read_views", "limits", "relation_types", "operations",
                "conflict_detection", "durable_deletion", "store_id", "owner_id"):
        assert key in data, key
    from pcp_cli.semantic import installed

    semantic = ["semantic", "hybrid"] if installed() else []
    assert data["search"]["modes"] == ["auto", "text", "exact", "temporal", "graph", *semantic]
    assert bool(data["search"]["semantic"]) == installed()
    assert data["limits"] == {"search_default": 10, "search_max": 25, "snippet_chars": 240}
    assert "supersedes" in data["relation_types"]
    assert set(data["read_views"]) == {"manifest", "payload", "relations", "history", "facets",
                                       "source_spans"}
    assert data["conflict_detection"]["supported"] is True
    assert cli("capabilities", "--store", str(example)).code == 0


def test_help_does_not_import_whoosh():
    import subprocess
    import sys

    code = ("import sys; from pcp_cli.cli.main import run; run(['--help']); "
            "run(['stats', '--help']); "
            "print(sorted(m for m in sys.modules if m.startswith(('whoosh', 'jsonschema'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().endswith("[]"), out.stdout
