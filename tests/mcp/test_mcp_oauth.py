"""The MCP authorization flow on a real `pcp serve --http` (127.0.0.1, a free port), driven by the
MCP Python SDK's OAuth client; the test plays the person at the consent page, reading the
approval code from the server's stderr. Then every bad input the issue names, each a clear OAuth
error, an audit record, and a server that keeps serving."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import anyio
import httpx2
import pytest

from pcp_cli.mcp.audit import read_audit
from tests.mcp.http_helpers import Running, make_store, pcp, running_server, token

pytestmark = pytest.mark.anyio
REDIRECT = "http://127.0.0.1:9/callback"  # never contacted: the test reads the redirect
NAMESPACES = ["user:ada-lumen", "project:tidewatch"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("oauth") / "store")


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[Running]:
    with running_server(store) as running:
        yield running


# -- playing the person -----------------------------------------------------------------------
def approval_code(running: Running, request_id: str) -> str:
    deadline = time.monotonic() + 300  # a guard: the line comes when the server writes it
    while time.monotonic() < deadline:
        for line in running.stderr.read_text(errors="replace").splitlines():
            if f"pcp grant approve {request_id}" in line:
                found = re.search(r"approval code (\d{4}-\d{4})", line)
                assert found, line
                return found.group(1)
        time.sleep(0.05)
    raise AssertionError(f"no approval code printed for {request_id}")


def field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} in the consent page"
    return found.group(1)


def open_consent(http: httpx2.Client, authorize_url: str) -> tuple[str, str]:
    """GET /authorize (-> 302 to the consent page) and the page; (request id, page)."""
    first = http.get(authorize_url)
    assert first.status_code == 302, first.text
    location = first.headers["location"]
    assert urlparse(location).path == "/consent"
    page = http.get(location)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    return parse_qs(urlparse(location).query)["request"][0], page.text


def play_person(running: Running, authorize_url: str, *, scopes: list[str] = NAMESPACES,
                decision: str = "approve") -> str:
    """What a person does in the browser; returns where the page sends them back."""
    with httpx2.Client(base_url=running.base, timeout=30) as http:
        request_id, page = open_consent(http, authorize_url)
        assert '<button name="decision" value="approve">' in page
        assert "Test Assistant" in page and "127.0.0.1" in page
        assert "<script" not in page and "http" not in page.split("<body>")[1].split(
            "form")[0].replace("127.0.0.1", "")
        answer = http.post("/consent", data={
            "request": request_id, "csrf": field(page, "csrf"),
            "approval": approval_code(running, request_id), "scope": scopes,
            "decision": decision})
        assert answer.status_code == 303, answer.text
        return answer.headers["location"]


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


def sdk_auth(running: Running, storage: MemoryStorage) -> Any:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    back: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:
        back["location"] = await anyio.to_thread.run_sync(lambda: play_person(running, url))

    async def callback_handler() -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlparse(back["location"]).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                       iss=query.get("iss"))

    metadata = OAuthClientMetadata(
        client_name="Test Assistant", redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    return OAuthClientProvider(running.url, metadata, storage, redirect_handler,
                               callback_handler)


async def list_tools(running: Running, auth: Any) -> list[str]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    with anyio.fail_after(60):
        async with create_mcp_http_client(auth=auth) as http, Client(
                streamable_http_client(running.url, http_client=http),
                read_timeout_seconds=30) as client:
            return [tool.name for tool in (await client.list_tools()).tools]


def mcp_status(running: Running, bearer: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return httpx2.post(running.url, json=body, timeout=30, headers={
        "authorization": f"Bearer {bearer}", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18"}).status_code


def audit_tools(store: Path) -> list[tuple[str, str, str | None]]:
    return [(r["tool"], r["outcome"], r.get("error_code")) for r in read_audit(store)
            if str(r["tool"]).startswith("oauth_")]


# -- the whole flow with the SDK's OAuth client -----------------------------------------------
async def test_python_sdk_oauth_flow_end_to_end(server: Running, store: Path) -> None:
    storage = MemoryStorage()
    auth = sdk_auth(server, storage)
    tools = await list_tools(server, auth)  # discovery, registration, consent, token, call
    assert "pcp_search" in tools
    first = storage.tokens
    assert first.access_token.startswith("pcpat_") and first.expires_in <= 3600
    assert storage.client.token_endpoint_auth_method == "none"

    # the consent made an ordinary grant, marked as OAuth's, with its last use
    listed = json.loads(pcp(store, "grant", "list", "--json").stdout)
    mine = [g for g in listed if g.get("oauth")]
    assert len(mine) == 1 and mine[0]["scopes"] == NAMESPACES
    assert mine[0]["oauth"]["client_name"] == "Test Assistant"
    assert mine[0]["oauth"]["last_used"]
    assert not mine[0]["allow_write"] and not mine[0]["allow_sensitive"]

    # refresh: the SDK sees its token expired and rotates both
    auth.context.token_expiry_time = time.time() - 1
    assert "pcp_search" in await list_tools(server, auth)
    second = storage.tokens
    assert second.refresh_token != first.refresh_token
    assert mcp_status(server, first.access_token) == 401  # the old access token went too
    assert mcp_status(server, second.access_token) == 200

    # revocation (RFC 7009), then refused
    revoked = httpx2.post(server.base + "/revoke", data={
        "token": second.access_token, "client_id": storage.client.client_id}, timeout=30)
    assert revoked.status_code == 200
    assert mcp_status(server, second.access_token) == 401
    assert mcp_status(server, second.refresh_token) == 401

    events = [tool for tool, outcome, _ in audit_tools(store) if outcome == "allowed"]
    for event in ("oauth_register", "oauth_authorize", "oauth_consent", "oauth_token",
                  "oauth_refresh", "oauth_revoke"):
        assert event in events
    # nothing readable kept: only hashes
    state = (store / ".pcp" / "oauth.json").read_text()
    assert first.access_token not in state and second.refresh_token not in state
    assert (store / ".pcp" / "oauth.json").stat().st_mode & 0o077 == 0


# -- the same flow by hand, for the bad inputs ------------------------------------------------
def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def register(running: Running, **extra: Any) -> dict[str, Any]:
    body = {"client_name": "Test Assistant", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            **extra}
    answer = httpx2.post(running.base + "/register", json=body, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()


def authorize_url(running: Running, client_id: str, challenge: str, **extra: str) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
              "code_challenge": challenge, "code_challenge_method": "S256", "state": "st8",
              "resource": running.url, **extra}
    return f"{running.base}/authorize?{urlencode(params)}"


def code_from(location: str) -> str:
    query = parse_qs(urlparse(location).query)
    assert query["state"] == ["st8"], location
    return query["code"][0]


def exchange(running: Running, client_id: str, code: str, verifier: str | None,
             **extra: str) -> httpx2.Response:
    data = {"grant_type": "authorization_code", "code": code, "client_id": client_id,
            "redirect_uri": REDIRECT, "resource": running.url, **extra}
    if verifier is not None:
        data["code_verifier"] = verifier
    return httpx2.post(running.base + "/token", data=data, timeout=30)


def tokens_for(running: Running) -> tuple[dict[str, Any], dict[str, Any]]:
    client = register(running)
    verifier, challenge = pkce()
    code = code_from(play_person(running, authorize_url(running, client["client_id"],
                                                         challenge)))
    answer = exchange(running, client["client_id"], code, verifier)
    assert answer.status_code == 200, answer.text
    return client, answer.json()


def refresh(running: Running, client_id: str, refresh_token: str) -> httpx2.Response:
    return httpx2.post(running.base + "/token", data={
        "grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id,
        "resource": running.url}, timeout=30)


def still_serving(running: Running) -> None:
    assert httpx2.get(running.base + "/.well-known/oauth-authorization-server",
                      timeout=30).status_code == 200


def test_discovery_documents_and_the_401_that_starts_the_flow(server: Running) -> None:
    unauth = httpx2.post(server.url, json={}, timeout=30)
    assert unauth.status_code == 401
    challenge = unauth.headers["www-authenticate"]
    assert f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"' \
        in challenge
    prm = httpx2.get(server.base + "/.well-known/oauth-protected-resource/mcp",
                     timeout=30).json()
    assert prm["resource"] == server.url and prm["authorization_servers"] == [server.base]
    meta = httpx2.get(server.base + "/.well-known/oauth-authorization-server",
                      timeout=30).json()
    assert meta["issuer"] == server.base
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert meta["response_types_supported"] == ["code"]
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint",
                "revocation_endpoint"):
        assert meta[key].startswith(server.base + "/")


def test_pcp_grant_tokens_keep_working_beside_oauth(server: Running, store: Path) -> None:
    assert mcp_status(server, token(store, "tidewatch")) == 200


def test_code_used_twice_wrong_or_missing_verifier(server: Running, store: Path) -> None:
    client = register(server)
    verifier, challenge = pkce()
    code = code_from(play_person(server, authorize_url(server, client["client_id"], challenge)))
    missing = exchange(server, client["client_id"], code, None)
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    wrong = exchange(server, client["client_id"], code, pkce()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    good = exchange(server, client["client_id"], code, verifier)
    assert good.status_code == 200
    again = exchange(server, client["client_id"], code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    # a code used twice revokes what it gave
    assert mcp_status(server, good.json()["access_token"]) == 401
    refusals = [r for r in read_audit(store) if r["tool"] == "oauth_token"
                and r["outcome"] == "refused"]
    assert any("used twice" in r["params"]["reason"] for r in refusals)
    assert any("code_verifier" in r["params"]["reason"] for r in refusals)
    still_serving(server)


def test_reused_refresh_token_revokes_its_family(server: Running, store: Path) -> None:
    client, first = tokens_for(server)
    rotated = refresh(server, client["client_id"], first["refresh_token"])
    assert rotated.status_code == 200
    second = rotated.json()
    reused = refresh(server, client["client_id"], first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert "already used" in reused.json()["error_description"]
    assert mcp_status(server, second["access_token"]) == 401
    assert refresh(server, client["client_id"], second["refresh_token"]).status_code == 400
    assert any("reused" in r["params"]["reason"] for r in read_audit(store)
               if r["tool"] == "oauth_token" and r["outcome"] == "refused")
    still_serving(server)


def test_unknown_client_and_unregistered_redirect(server: Running, store: Path) -> None:
    _, challenge = pkce()
    unknown = httpx2.get(authorize_url(server, "no-such-client", challenge), timeout=30)
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_request"
    client = register(server)
    other = httpx2.get(authorize_url(server, client["client_id"], challenge,
                                     redirect_uri="https://evil.example/cb"), timeout=30)
    assert other.status_code == 400 and "not registered" in other.json()["error_description"]
    token_unknown = httpx2.post(server.base + "/token", data={
        "grant_type": "authorization_code", "code": "x", "client_id": "nobody",
        "code_verifier": "y" * 43}, timeout=30)
    assert token_unknown.status_code == 401 and token_unknown.json()["error"] == "invalid_client"
    refused = [r for r in read_audit(store) if r["outcome"] == "refused"
               and r["tool"] in ("oauth_authorize", "oauth_token")]
    assert any(r["params"].get("oauth_client") == "no-such-client" for r in refused)
    still_serving(server)


def test_loopback_redirect_may_change_port_only(server: Running) -> None:
    client = register(server)
    _, challenge = pkce()
    other_port = httpx2.get(authorize_url(server, client["client_id"], challenge,
                                          redirect_uri="http://127.0.0.1:5555/callback"),
                            timeout=30)
    assert other_port.status_code == 302
    other_path = httpx2.get(authorize_url(server, client["client_id"], challenge,
                                          redirect_uri="http://127.0.0.1:5555/other"),
                            timeout=30)
    assert other_path.status_code == 400
    http_remote = httpx2.post(server.base + "/register", json={
        "client_name": "x", "redirect_uris": ["http://example.com/cb"]}, timeout=30)
    assert http_remote.status_code == 400
    assert http_remote.json()["error"] == "invalid_redirect_uri"


def test_plain_pkce_and_other_resource_refused(server: Running) -> None:
    client = register(server)
    verifier, challenge = pkce()
    plain = httpx2.get(authorize_url(server, client["client_id"], verifier,
                                     code_challenge_method="plain"), timeout=30)
    assert plain.status_code == 302  # a known redirect: the error goes back to the client
    assert parse_qs(urlparse(plain.headers["location"]).query)["error"] == ["invalid_request"]
    elsewhere = httpx2.get(authorize_url(server, client["client_id"], challenge,
                                         resource="https://other.example/mcp"), timeout=30)
    assert parse_qs(urlparse(elsewhere.headers["location"]).query)["error"] == [
        "invalid_target"]
    implicit = httpx2.get(authorize_url(server, client["client_id"], challenge,
                                        response_type="token"), timeout=30)
    assert parse_qs(urlparse(implicit.headers["location"]).query)["error"] == [
        "unsupported_response_type"]
    password = httpx2.post(server.base + "/token", data={
        "grant_type": "password", "username": "a", "password": "b",
        "client_id": client["client_id"]}, timeout=30)
    assert password.status_code == 400 and password.json()["error"] == "invalid_request"
    # a token request naming another resource
    code = code_from(play_person(server, authorize_url(server, client["client_id"], challenge)))
    other = exchange(server, client["client_id"], code, verifier,
                     resource="https://other.example/mcp")
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[tuple[Running, Path]]:
    """A server and store of the test's own: a wrong approval code slows down every later try
    from 127.0.0.1 on that server, which would make the next test wait on the clock."""
    store = make_store(tmp_path / "store")
    with running_server(store) as running:
        yield running, store


def test_consent_needs_the_owners_code_and_the_csrf_token(
        own_server: tuple[Running, Path]) -> None:
    server, store = own_server
    client = register(server)
    _, challenge = pkce()
    url = authorize_url(server, client["client_id"], challenge)
    with httpx2.Client(base_url=server.base, timeout=30) as http:
        request_id, page = open_consent(http, url)
        base = {"request": request_id, "csrf": field(page, "csrf"), "scope": NAMESPACES,
                "decision": "approve"}
        no_code = http.post("/consent", data=base)
        assert no_code.status_code == 403 and "approval code" in no_code.text
        wrong = http.post("/consent", data={**base, "approval": "0000-0000"})
        assert wrong.status_code == 403
        no_csrf = http.post("/consent", data={**base, "csrf": "",
                                              "approval": approval_code(server, request_id)})
        assert no_csrf.status_code == 403 and "CSRF" in no_csrf.text
    # without the cookie (another site's form): refused even with the right fields
    stranger = httpx2.post(server.base + "/consent", data={
        **base, "approval": approval_code(server, request_id)}, timeout=30)
    assert stranger.status_code == 403
    reasons = [r["params"]["reason"] for r in read_audit(store)
               if r["tool"] == "oauth_consent" and r["outcome"] == "refused"]
    assert any("approval code" in reason for reason in reasons)
    assert any("CSRF" in reason for reason in reasons)
    # and the person may refuse: the client hears access_denied
    denied = play_person(server, authorize_url(server, client["client_id"], challenge),
                         decision="deny")
    assert parse_qs(urlparse(denied).query)["error"] == ["access_denied"]


def test_terminal_approval_stands_in_for_the_code(server: Running, store: Path) -> None:
    client = register(server)
    verifier, challenge = pkce()
    with httpx2.Client(base_url=server.base, timeout=30) as http:
        request_id, page = open_consent(http, authorize_url(server, client["client_id"],
                                                            challenge))
        pending = json.loads(pcp(store, "grant", "approve", "--json").stdout)
        assert request_id in [p["request"] for p in pending]
        pcp(store, "grant", "approve", request_id)
        answer = http.post("/consent", data={"request": request_id, "csrf": field(page, "csrf"),
                                             "scope": ["project:tidewatch"],
                                             "decision": "approve"})
        assert answer.status_code == 303
    assert exchange(server, client["client_id"], code_from(answer.headers["location"]),
                    verifier).status_code == 200


def test_grant_remove_ends_oauth_tokens_at_once(server: Running, store: Path) -> None:
    client, tokens = tokens_for(server)
    assert mcp_status(server, tokens["access_token"]) == 200
    clients = json.loads(pcp(store, "grant", "oauth-clients", "--json").stdout)
    grant = next(c["grant"] for c in clients if c["client_id"] == client["client_id"])
    removed = json.loads(pcp(store, "grant", "remove", grant, "--json").stdout)
    assert removed["tokens_revoked"] >= 2
    assert mcp_status(server, tokens["access_token"]) == 401
    assert refresh(server, client["client_id"], tokens["refresh_token"]).status_code == 400


def test_remove_client_forgets_registration_grant_and_tokens(server: Running,
                                                            store: Path) -> None:
    client, tokens = tokens_for(server)
    gone = json.loads(pcp(store, "grant", "remove-client", client["client_id"],
                          "--json").stdout)
    assert gone["removed"] and gone["grants"]
    assert mcp_status(server, tokens["access_token"]) == 401
    listed = json.loads(pcp(store, "grant", "list", "--json").stdout)
    assert gone["grants"][0] not in [g["client_id"] for g in listed]
    missing = pcp(store, "grant", "remove-client", client["client_id"], check=False)
    assert missing.returncode == 3 and "Error:" in missing.stderr


def test_expired_access_token_is_refused(server: Running, store: Path) -> None:
    _, tokens = tokens_for(server)
    state = store / ".pcp" / "oauth.json"
    data = json.loads(state.read_text())
    digest = hashlib.sha256(tokens["access_token"].encode()).hexdigest()
    data["tokens"][digest]["expires_at"] = int(time.time()) + 1
    state.write_text(json.dumps(data))
    time.sleep(1.1)
    answer = httpx2.post(server.url, json={}, timeout=30,
                         headers={"authorization": f"Bearer {tokens['access_token']}"})
    assert answer.status_code == 401 and "invalid_token" in answer.headers["www-authenticate"]


@pytest.mark.parametrize("path", ["/register", "/token", "/revoke", "/consent", "/authorize"])
def test_oversized_and_malformed_requests(server: Running, path: str) -> None:
    huge = httpx2.post(server.base + path, content=b"a=" + b"x" * 70_000, timeout=30,
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert huge.status_code == 413 and huge.json()["error"] == "invalid_request"
    junk = httpx2.post(server.base + path, content=b"\xff\xfe{not json", timeout=30,
                       headers={"content-type": "application/json"})
    assert 400 <= junk.status_code < 500, junk.text
    still_serving(server)


def test_public_url_names_issuer_and_resource_behind_a_proxy(store: Path) -> None:
    with running_server(store, "--public-url", "https://pcp.example.test/") as running:
        proxied = {"host": "pcp.example.test"}  # what a proxy or tunnel passes on
        prm = httpx2.get(running.base + "/.well-known/oauth-protected-resource/mcp",
                         headers=proxied, timeout=30).json()
        assert prm["resource"] == "https://pcp.example.test/mcp"
        assert prm["authorization_servers"] == ["https://pcp.example.test"]
        meta = httpx2.get(running.base + "/.well-known/oauth-authorization-server",
                          headers=proxied, timeout=30).json()
        assert meta["issuer"] == "https://pcp.example.test"
        assert meta["token_endpoint"] == "https://pcp.example.test/token"
        unauth = httpx2.post(running.url, json={}, headers=proxied, timeout=30)
        assert "https://pcp.example.test/.well-known/oauth-protected-resource/mcp" in \
            unauth.headers["www-authenticate"]
        other = httpx2.get(running.base + "/.well-known/oauth-authorization-server",
                           headers={"host": "evil.example"}, timeout=30)
        assert other.status_code == 421


def test_public_url_must_be_https_without_a_path(store: Path) -> None:
    for bad in ("http://pcp.example.test", "https://pcp.example.test/mcp", "pcp.example"):
        result = pcp(store, "serve", "--http", "127.0.0.1:0", "--public-url", bad, check=False)
        assert result.returncode == 2, result.stderr
        assert "--public-url" in result.stderr and "Traceback" not in result.stderr


# -- client ID metadata documents (served here over https on 127.0.0.1) -----------------------
@pytest.fixture
def metadata_host(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    """An https server on 127.0.0.1 (a self-signed certificate made with openssl) serving
    whatever `documents` holds; yields (base URL, CA file, documents)."""
    from tests.mcp.oauth_inprocess import json_answer, tls_server

    documents: dict[str, Any] = {}
    with tls_server(tmp_path, json_answer(documents.get)) as tls:
        yield tls.base, tls.cert, documents


async def test_client_id_metadata_document_instead_of_registration(
        metadata_host: tuple[str, Path, dict[str, Any]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    base, cert, documents = metadata_host
    url = base + "/oauth/client.json"
    documents["/oauth/client.json"] = {
        "client_id": url, "client_name": "Test Assistant", "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none"}
    documents["/oauth/liar.json"] = {**documents["/oauth/client.json"],
                                     "client_id": "https://elsewhere.example/c.json"}
    documents["/oauth/huge.json"] = b"{" + b" " * 10_000 + b"}"
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    monkeypatch.setenv("PCP_OAUTH_METADATA_LOOPBACK", "1")
    store = make_store(tmp_path / "store")
    with running_server(store) as running:
        meta = httpx2.get(running.base + "/.well-known/oauth-authorization-server",
                          timeout=30).json()
        assert meta["client_id_metadata_document_supported"] is True
        storage = MemoryStorage()
        auth = sdk_auth(running, storage)
        auth.context.client_metadata_url = url
        assert "pcp_search" in await list_tools(running, auth)
        assert storage.client.client_id == url
        clients = json.loads(pcp(store, "grant", "oauth-clients", "--json").stdout)
        assert [c["client_id"] for c in clients] == [url] and clients[0]["grant"]
        _, challenge = pkce()
        for bad in ("liar", "huge", "missing"):
            answer = httpx2.get(authorize_url(running, f"{base}/oauth/{bad}.json", challenge),
                                timeout=30)
            assert answer.status_code == 400, (bad, answer.text)
            assert answer.json()["error"] == "invalid_request"
        reasons = " ".join(r["params"].get("reason", "") for r in read_audit(store)
                           if r["tool"] == "oauth_authorize" and r["outcome"] == "refused")
        assert "not its URL" in reasons and "over" in reasons and "HTTP 404" in reasons
    monkeypatch.delenv("PCP_OAUTH_METADATA_LOOPBACK")
    with running_server(store) as running:  # without the test switch: a loopback URL is refused
        _, challenge = pkce()
        answer = httpx2.get(authorize_url(running, url, challenge), timeout=30)
        assert answer.status_code == 400


def test_expired_code_is_refused(server: Running, store: Path) -> None:
    client = register(server)
    verifier, challenge = pkce()
    code = code_from(play_person(server, authorize_url(server, client["client_id"], challenge)))
    state = store / ".pcp" / "oauth.json"
    data = json.loads(state.read_text())
    data["codes"][hashlib.sha256(code.encode()).hexdigest()]["expires_at"] = time.time() - 1
    state.write_text(json.dumps(data))
    answer = exchange(server, client["client_id"], code, verifier)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    assert "expired" in answer.json()["error_description"]
    still_serving(server)
