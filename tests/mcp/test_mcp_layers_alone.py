"""Each of the doubled checks, one layer at a time: the outer check bypassed, the inner one
must still hold (a mutation audit found both layers masking each other's removal).

- A grant's sensitivity: the session clamps `include_sensitive` to the grant, and the store
  backend clamps it again. Each is tested with the other out of the way.
- A related walk's start page: the session refuses a suppressed start page, and the backend
  refuses a start page outside the grant or suppressed. Each alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pcp_cli.errors import NotFound
from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.grants import Grant
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.store_backend import StoreBackend
from pcp_cli.model.search_request import SearchRequest
from tests.mcp.fake_backend_server import FakeBackend

EXAMPLE = Path(__file__).resolve().parents[2] / "store_layout" / "example"
NO_SENSITIVE = Grant("reader", "model", ("user:ada-lumen", "project:tidewatch"), False, False,
                     "pcp.yaml")


@pytest.fixture
def example(tmp_path: Path) -> Path:
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".pcp"))
    return root


def _search(backend: Any, grant: Grant, include_sensitive: bool) -> list[str]:
    request = SearchRequest("energy health", mode="text", limit=25, include_superseded=True,
                            include_sensitive=include_sensitive, scopes=grant.scopes)
    data = backend.search(grant, request)
    return [r["id"] for r in data["results"]]


def test_the_store_backend_alone_withholds_high_pages_from_a_grant_without_sensitive(
        example: Path) -> None:
    """The session is bypassed: include_sensitive=True reaches the backend unclamped."""
    backend = StoreBackend(example)
    allowed = Grant("owner", "model", NO_SENSITIVE.scopes, True, False, "pcp.yaml")
    assert "health-notes" in _search(backend, allowed, True)  # the page is findable at all
    assert "health-notes" not in _search(backend, NO_SENSITIVE, True)
    visible = backend.visible_page_ids(NO_SENSITIVE, ("health-notes",), suppressed=frozenset())
    assert visible == frozenset()


class _Recording(FakeBackend):
    """A backend with no sensitivity check of its own: it records what the session asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[bool] = []
        self.related: list[str] = []

    def search(self, grant, request):  # type: ignore[no-untyped-def]
        self.asked.append(request.include_sensitive)
        return {"results": [], "filters_applied": {}}

    def related_pages(self, grant, *, page_id, **rest):  # type: ignore[no-untyped-def]
        self.related.append(page_id)
        return {"page_id": page_id, "pages": [{"page_id": "other"}], "count": 1}


def test_the_session_alone_clamps_include_sensitive_to_the_grant(tmp_path: Path) -> None:
    backend = _Recording()
    session = ToolSession(backend, NO_SENSITIVE, AuditLog(tmp_path))
    reply = session.call("pcp_search", {"query": "x", "include_sensitive": True})
    assert backend.asked == [False]
    assert "include_sensitive ignored" in str(reply)


def test_the_session_alone_refuses_a_suppressed_start_page(tmp_path: Path) -> None:
    backend = _Recording()
    session = ToolSession(backend, NO_SENSITIVE, AuditLog(tmp_path))
    session._suppressed.add("p1")  # suppressed earlier, whatever the backend says of it now
    reply = session.call("pcp_related_pages", {"page_id": "p1"})
    assert backend.related == []  # never asked: refused in the session
    assert "not found" in str(reply).lower()


@pytest.mark.parametrize("why", ["suppressed", "sensitive", "outside_scopes"])
def test_the_store_backend_alone_refuses_a_start_page_the_grant_cannot_read(
        example: Path, why: str) -> None:
    """The session is bypassed: the backend is asked directly."""
    backend = StoreBackend(example)
    grant, start, suppressed = {
        "suppressed": (NO_SENSITIVE, "tidewatch-architecture",
                       frozenset({"tidewatch-architecture"})),
        "sensitive": (NO_SENSITIVE, "health-notes", frozenset()),
        "outside_scopes": (Grant("tidewatch", "model", ("project:tidewatch",), False, False,
                                 "pcp.yaml"), "health-notes", frozenset()),
    }[why]
    with pytest.raises(NotFound):
        backend.related_pages(grant, page_id=start, relation_types=(), depth=1,
                              suppressed=suppressed)
    readable = backend.related_pages(NO_SENSITIVE, page_id="conv-tidewatch-mobile",
                                     relation_types=(), depth=1, suppressed=frozenset())
    assert readable["page_id"] == "conv-tidewatch-mobile" or readable["pages"]


# -- reading by revision id: the page's guard, alone -------------------------------------------
def _old_revision_then(example: Path, change: str) -> str:
    """A page whose first revision any reader may see; then the page itself is made
    unreadable to NO_SENSITIVE (the old revision stays low, affirmed, inside the grant)."""
    from pcp_cli import api

    with api.open_store(example) as store:
        written = api.add_page(store, "Old address: 12 Kelp Street.", page_type="note",
                               namespace="user:ada-lumen", sensitivity="low")
        old = written.revision_id
        if change == "tombstoned":
            api.set_lifecycle(store, written.page_id, "tombstoned")
        elif change == "high":
            api.revise_page(store, written.page_id, content="New address: withheld.",
                            sensitivity="high")
        else:
            store.revise(written.page_id, changes={"namespace": "team:secret"})
    return old


@pytest.mark.parametrize("change", ["tombstoned", "high", "moved"])
def test_the_page_guard_alone_refuses_an_old_revision_of_a_page_now_unreadable(
        example: Path, change: str) -> None:
    """The revision's own checks all pass (it was low, active, in the grant): only the page's
    guard (its head as it is now) can refuse it."""
    old = _old_revision_then(example, change)
    backend = StoreBackend(example)
    read = backend.read_pages(NO_SENSITIVE, ids=(old,), views=("manifest", "payload"),
                              suppressed=frozenset())
    assert read["not_found"] == [old] and read["pages"] == []
    assert "Kelp" not in str(read)


# -- related_pages' start page: the query layer, alone -----------------------------------------
@pytest.mark.parametrize("why", ["suppressed", "sensitive", "outside_scopes", "tombstoned"])
def test_the_query_layer_alone_refuses_a_related_start_page_it_cannot_show(
        example: Path, why: str) -> None:
    """`api.related` asked directly (no session, no backend): the start page must pass the
    same checks as every page the walk reaches."""
    from pcp_cli import api

    start = {"suppressed": "tidewatch-architecture", "sensitive": "health-notes",
             "outside_scopes": "tidewatch-architecture",
             "tombstoned": "tidewatch-architecture"}[why]
    with api.open_store(example) as store:
        if why == "tombstoned":
            api.set_lifecycle(store, start, "tombstoned")
        kwargs: dict[str, Any] = {"scopes": ["user:ada-lumen", "project:tidewatch"]}
        if why == "suppressed":
            kwargs["suppressed"] = frozenset({start})
        if why == "outside_scopes":
            kwargs["scopes"] = ["user:ada-lumen"]
        with pytest.raises(NotFound):
            api.related(store, start, include_superseded=True, **kwargs)
        readable = api.related(store, "conv-tidewatch-mobile", include_superseded=True,
                               scopes=["user:ada-lumen", "project:tidewatch"])
        assert readable["page_id"] == "conv-tidewatch-mobile"


# -- the micro_prompt's sensitivity filter: the query layer, alone -----------------------------
def test_the_query_layer_alone_keeps_high_keystones_out_of_the_micro_prompt(
        example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The renderer's own filter is switched off (it would let `high` through): what the query
    layer hands it must already leave the high keystone out."""
    from pcp_cli import api
    from pcp_cli.render import select

    with api.open_store(example) as store:
        api.add_keystone(store, "Takes lithium for bipolar disorder.", category="identity",
                         sensitivity="high", importance=1.0)
        api.add_keystone(store, "Swims at dawn on Saturdays.", category="preference",
                         sensitivity="low")
    monkeypatch.setattr(select, "ALLOWED_SENSITIVITIES", ("low", "medium", "high"))
    with api.open_store(example) as store:
        text = api.micro_prompt_text(store)
    assert "Swims at dawn" in text and "lithium" not in text
