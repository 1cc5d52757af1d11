"""OAuth 2.1 for `pcp serve --http`: the MCP authorization flow, with the person's consent.

`pcp serve --http` is its own authorization server (one process, one store). The protocol work
is the `mcp` SDK's (`mcp.server.auth`): request validation at /authorize, /token, /register and
/revoke, PKCE S256 checking (`plain` is refused by its request model), client authentication and
the RFC 8414 metadata. This module is the SDK's `OAuthAuthorizationServerProvider` over a file of
hashes, plus what the SDK leaves to the server: the consent page, binding tokens to this
server's /mcp resource (RFC 8707), short-lived access tokens, rotating refresh tokens with reuse
detection, and an audit record for every step.

State lives in `<store>/.pcp/oauth.json` (mode 0600; `.pcp/` is never committed): registered
clients (public clients only: the server answers every registration with
`token_endpoint_auth_method: none`, as RFC 7591 lets it, so there is no client secret to keep;
PKCE protects the code), pending authorization requests, codes and tokens. Codes, tokens and
approval codes are kept only as SHA-256 hashes: they are random (256 bits, or a short approval
code that dies after a few wrong tries), so a plain hash is enough. Every change is a
read-modify-write under `fcntl.flock` on `.pcp/oauth.lock`, so `pcp grant remove` in another
terminal and the server never lose each other's writes; the server re-reads the file when its
stat changes, as `TokenRegistry` does for `.pcp/tokens.json`.

A consent makes an ordinary grant in `pcp.yaml` (client id `oauth-<name>-<hex>`); the grant is
what the Guard checks on every request, so `pcp grant remove` ends the client's access at once
(and this module forgets its tokens).
"""

from __future__ import annotations

import contextvars
import hmac
import html
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from pcp_cli import api
from pcp_cli.errors import InvalidInput
from pcp_cli.mcp import oauth_metadata
from pcp_cli.mcp.audit import now_iso
from pcp_cli.mcp.oauth_state import (
    REQUEST_TTL,
    clients_path,
    digest,
    empty_state,
    read_state,
    state_path,
    transaction,
)

ACCESS_TTL = 3600  # seconds: an hour, the most the issue allows
REFRESH_TTL = 30 * 24 * 3600
CODE_TTL = 300
# Wrong approval codes: a request is dropped after APPROVAL_TRIES; an address may give
# ADDRESS_TRIES, and every address together ALL_TRIES, in a REQUEST_TTL window; after each wrong
# code the address waits GUESS_DELAY seconds (doubling, at most GUESS_DELAY_MAX) before its next
# try is even compared. The code is 8 digits: an attacker compares a handful of 10^8.
APPROVAL_TRIES = 5
ADDRESS_TRIES = 10
ALL_TRIES = 50
GUESS_DELAY = 2.0
GUESS_DELAY_MAX = 60.0
LAST_USED_EVERY = 60.0  # seconds between writes of a grant's last use
SCOPES = ("pcp.read", "pcp.sensitive", "pcp.write")
ACCESS_PREFIX, REFRESH_PREFIX, CODE_PREFIX = "pcpat_", "pcprt_", "pcpac_"
# Registered clients (by /register and by metadata document alike): at most MAX_CLIENTS; when
# full, the oldest one that has no grant and nothing waiting, registered more than REQUEST_TTL
# ago, makes room; an address may register REGISTRATIONS_PER_ADDRESS in a REQUEST_TTL window.
# A registration keeps MAX_REDIRECT_URIS redirect URIs of at most MAX_URI characters, a name of
# NAME_MAX, and nothing else the client sent: under 5 KB a client.
MAX_CLIENTS = 200
REGISTRATIONS_PER_ADDRESS = 20
MAX_REDIRECT_URIS = 8
MAX_URI = 512
NAME_MAX = 100
KEPT_METADATA = ("client_id", "client_id_issued_at", "client_name", "redirect_uris",
                 "grant_types", "response_types", "token_endpoint_auth_method", "scope")
# Authorization requests waiting for consent: at most MAX_PENDING, MAX_PENDING_PER_CLIENT per
# client and MAX_PENDING_PER_ADDRESS per address; a new one always gets in, the oldest of the
# fullest of those goes. At most ANNOUNCE_PER_CLIENT requests of one client, and
# ANNOUNCE_PER_MINUTE in all, are printed on the terminal each minute.
MAX_PENDING = 100
MAX_PENDING_PER_CLIENT = 5
MAX_PENDING_PER_ADDRESS = 10
ANNOUNCE_PER_CLIENT = 3
ANNOUNCE_PER_MINUTE = 30
# Schemes a redirect URI may never have: they run or read something in the browser.
FORBIDDEN_SCHEMES = ("javascript", "vbscript", "data", "file", "blob", "about", "filesystem",
                     "view-source")

# the request being answered: its base URL (scheme://host), parsed form and client address
request_base: contextvars.ContextVar[str] = contextvars.ContextVar("pcp_oauth_base",
                                                                  default="")
request_address: contextvars.ContextVar[str] = contextvars.ContextVar("pcp_oauth_address",
                                                                     default="")
request_form: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("pcp_oauth_form")
# why a request was refused, when the error response alone does not say it (for the audit)
request_notes: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "pcp_oauth_notes", default=None)


def note(reason: str) -> None:
    notes = request_notes.get()
    if notes is not None:
        notes.append(reason)


# -- loopback redirects -----------------------------------------------------------------------
LOOPBACK_HOSTS = ("127.0.0.1", "[::1]", "localhost")


def _loopback_equal(registered: str, given: str) -> bool:
    """RFC 8252 §7.3 / OAuth 2.1: for a loopback redirect the port may differ; all else is
    compared exactly."""
    a, b = urlparse(registered), urlparse(given)
    return (a.scheme == b.scheme == "http" and a.hostname == b.hostname
            and a.hostname in ("127.0.0.1", "::1", "localhost")
            and a.path == b.path and a.query == b.query and not b.fragment)


class PcpClient(OAuthClientInformationFull):
    """A registered client whose redirect URIs match exactly, a loopback one on any port."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None:
            given = str(redirect_uri)
            for registered in self.redirect_uris or []:
                if str(registered) == given or _loopback_equal(str(registered), given):
                    return redirect_uri
            raise InvalidRedirectUriError(f"redirect_uri {given[:200]} is not registered for "
                                          "this client")
        return super().validate_redirect_uri(redirect_uri)


class PcpRefreshToken(RefreshToken):
    used: bool = False
    family: str = ""
    grant: str = ""


class PcpAccessToken(AccessToken):
    family: str = ""
    grant: str = ""
    kind: str = "access"


METADATA_TTL = 300.0
METADATA_FAILED_TTL = 30.0  # a document that could not be used is not fetched again for this long


def is_metadata_url(client_id: str) -> bool:
    parsed = urlparse(client_id)
    return parsed.scheme == "https" and bool(parsed.hostname) and parsed.path not in ("", "/")


def safe_name(name: str | None, limit: int = NAME_MAX) -> str:
    """A client's name as pcp shows it: one line, no control or formatting characters (an
    escape code or a newline in a name could forge a line on the server's terminal), at most
    `limit` characters."""
    import unicodedata

    shown = "".join(
        ch if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn")
        else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in (name or "")[: limit * 2])
    shown = " ".join(shown.split())[:limit]
    return shown or "unnamed client"


def check_redirect_uri(uri: str) -> None:
    """RegistrationError unless `uri` may be a redirect URI here: https, http on loopback, or
    an app's own scheme; never one that runs something in the browser; no fragment."""
    parsed = urlparse(uri)
    scheme = parsed.scheme.lower()
    if len(uri) > MAX_URI:
        raise RegistrationError("invalid_redirect_uri", f"a redirect URI is longer than "
                                f"{MAX_URI} characters")
    if not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme) or scheme in FORBIDDEN_SCHEMES:
        raise RegistrationError("invalid_redirect_uri", f"{uri[:100]}: a {scheme or 'relative'}"
                                " URI cannot be a redirect URI; use https")
    if scheme == "http" and parsed.hostname not in ("127.0.0.1", "::1", "localhost"):
        raise RegistrationError("invalid_redirect_uri",
                                f"{uri[:200]}: an http redirect must be loopback; use https")
    if parsed.fragment:
        raise RegistrationError("invalid_redirect_uri", "a redirect URI has no fragment")


def _bounded(client: OAuthClientInformationFull) -> dict[str, Any]:
    """What is kept of a registration (KEPT_METADATA), checked and bounded."""
    uris = [str(u) for u in client.redirect_uris or []]
    if len(uris) > MAX_REDIRECT_URIS:
        raise RegistrationError("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect "
                                "URIs")
    for uri in uris:
        check_redirect_uri(uri)
    client.client_name = safe_name(client.client_name)
    data = client.model_dump(mode="json", exclude_none=True)
    return {key: data[key] for key in KEPT_METADATA if key in data}


def _ago(seconds: float) -> str:
    """now_iso() of `seconds` ago (the same format, so the two compare as strings)."""
    from datetime import UTC, datetime, timedelta

    when = datetime.now(UTC) - timedelta(seconds=seconds)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _make_room(data: dict[str, Any]) -> bool:
    """Whether one more client fits (MAX_CLIENTS), forgetting the oldest idle one if not."""
    if len(data["clients"]) < MAX_CLIENTS:
        return True
    busy = {e.get("oauth_client") for e in data["grants"].values()}
    busy |= {p["client_id"] for table in ("pending", "codes") for p in data[table].values()}
    before = _ago(REQUEST_TTL)
    idle = sorted((info.get("registered_at", ""), client_id)
                  for client_id, info in data["clients"].items()
                  if client_id not in busy and info.get("registered_at", "") < before)
    if not idle:
        return False
    del data["clients"][idle[0][1]]
    return True


def _too_many_clients() -> RegistrationError:
    return RegistrationError("invalid_client_metadata", f"{MAX_CLIENTS} clients are registered "
                             "and each has a grant or a request waiting; the owner removes "
                             "some with `pcp grant remove-client`")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "client"


class Provider:
    """The SDK's `OAuthAuthorizationServerProvider`, over `.pcp/oauth.json`.

    `audit(event, client_id, params)` records a step that went through; refusals are recorded
    by the HTTP layer from the error response (one place for all of them). `announce(line)`
    prints the approval code on the server's terminal.
    """

    def __init__(self, root: Path, *, audit: Callable[[str, str | None, dict[str, Any]], None],
                 announce: Callable[[str], None]) -> None:
        self.root = root
        self.audit = audit
        self.announce = announce
        self._stamp: tuple[tuple[int, int, int], ...] | None = None
        self._cache: dict[str, Any] = empty_state()
        self._lock = threading.Lock()
        self._last_used: dict[str, float] = {}
        self._documents: dict[str, tuple[float, PcpClient]] = {}
        self._failed: dict[str, tuple[float, str]] = {}
        self.metadata_deadline = oauth_metadata.DEADLINE
        self.guesses = Guesses()
        self.registrations = Window(REGISTRATIONS_PER_ADDRESS, REQUEST_TTL)
        self.announced = Window(ANNOUNCE_PER_MINUTE, 60.0)
        self.announced_client = Window(ANNOUNCE_PER_CLIENT, 60.0)
        self.unshown_notice = Window(1, 60.0)

    # -- the cached view the hot path reads -----------------------------------------------
    def _current(self) -> dict[str, Any]:
        stamp = tuple(self._stat(path) for path in (state_path(self.root),
                                                     clients_path(self.root)))
        with self._lock:
            if stamp != self._stamp:
                try:
                    self._cache = read_state(self.root)
                except (OSError, InvalidInput):
                    self._cache = empty_state()  # fail closed
                self._stamp = stamp
            return self._cache

    @staticmethod
    def _stat(path: Path) -> tuple[int, int, int]:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return (0, 0, 0)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    @staticmethod
    def resource() -> str:
        return request_base.get() + "/mcp"

    # -- registration -----------------------------------------------------------------------
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if is_metadata_url(client_id):
            return await self._metadata_document(client_id)
        found = self._current()["clients"].get(client_id)
        return PcpClient.model_validate(found["metadata"]) if found else None

    async def _metadata_document(self, url: str) -> PcpClient | None:
        """A client ID metadata document (the current MCP spec's preferred registration): the
        client id is an https URL, fetched here (`pcp_cli.mcp.oauth_metadata`: public
        addresses only, one deadline, a size cap), kept METADATA_TTL seconds (a failure
        METADATA_FAILED_TTL); its `client_id` must be that URL. It counts as a registered
        client, under the same cap."""
        now = time.monotonic()
        cached = self._documents.get(url)
        if cached is not None and now - cached[0] < METADATA_TTL:
            return cached[1]
        failed = self._failed.get(url)
        if failed is not None and now - failed[0] < METADATA_FAILED_TTL:
            note(failed[1])
            return None
        try:
            client = await self._fetch_document(url)
        except oauth_metadata.Refused as refused:
            why = f"client id metadata document: {refused}"
            self._failed[url] = (now, why)
            if len(self._failed) > MAX_CLIENTS:
                self._failed.pop(next(iter(self._failed)))
            note(why)
            return None
        if url not in self._current()["clients"]:
            name = safe_name(client.client_name or url)
            with transaction(self.root) as data:
                fits = url in data["clients"] or _make_room(data)
                if fits:
                    data["clients"][url] = {"client_name": name, "registered_at": now_iso(),
                                            "metadata_document": True,
                                            "metadata": _bounded(client)}
            if not fits:
                note(_too_many_clients().error_description or "")
                return None
            self.audit("oauth_register", url, {"client_name": name,
                                               "client_id_metadata_document": True})
        self._documents[url] = (now, client)
        if len(self._documents) > MAX_CLIENTS:
            self._documents.pop(next(iter(self._documents)))
        return client

    async def _fetch_document(self, url: str) -> PcpClient:
        from pydantic import ValidationError

        body = await oauth_metadata.fetch(url, deadline=self.metadata_deadline)
        try:
            document = json.loads(body)
        except ValueError:
            raise oauth_metadata.Refused("not JSON") from None
        if not isinstance(document, dict) or document.get("client_id") != url:
            raise oauth_metadata.Refused("its client_id is not its URL")
        if document.get("client_secret") or document.get(
                "token_endpoint_auth_method", "none") != "none":
            raise oauth_metadata.Refused("only public clients (auth method none)")
        try:
            client = PcpClient.model_validate({
                **document, "token_endpoint_auth_method": "none",
                "grant_types": [g for g in document.get("grant_types") or
                                ["authorization_code", "refresh_token"]
                                if g in ("authorization_code", "refresh_token")],
                "scope": " ".join(SCOPES)})
            _bounded(client)
        except (ValidationError, ValueError) as exc:
            raise oauth_metadata.Refused(f"unusable ({exc.__class__.__name__})") from None
        except RegistrationError as exc:
            raise oauth_metadata.Refused(exc.error_description or exc.error) from None
        if not client.redirect_uris:
            raise oauth_metadata.Refused("no redirect_uris")
        return client

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # RFC 7591 §3.2.1: the server may replace requested metadata and says so in its
        # answer (the SDK returns this same object). Public clients only: nothing secret kept,
        # and of the rest only what the flow needs (KEPT_METADATA), bounded.
        client_info.token_endpoint_auth_method = "none"
        client_info.client_secret = None
        client_info.client_secret_expires_at = None
        client_info.grant_types = [g for g in client_info.grant_types
                                   if g in ("authorization_code", "refresh_token")]
        kept = _bounded(client_info)
        for key in type(client_info).model_fields:
            if key not in KEPT_METADATA and key not in ("client_secret",
                                                        "client_secret_expires_at"):
                setattr(client_info, key, None)
        address = request_address.get()
        if not self.registrations.admit(address):
            raise RegistrationError("invalid_client_metadata", "too many registrations from "
                                    f"your address ({REGISTRATIONS_PER_ADDRESS} in "
                                    f"{REQUEST_TTL // 60} minutes); try again later")
        name = kept["client_name"]
        with transaction(self.root) as data:  # nothing is raised inside: see ConsentRefused
            fits = _make_room(data)
            if fits:
                data["clients"][client_info.client_id] = {
                    "client_name": name, "registered_at": now_iso(), "metadata": kept}
        if not fits:
            raise _too_many_clients()
        self.audit("oauth_register", client_info.client_id,
                   {"client_name": name, "redirect_uris": kept.get("redirect_uris", [])})

    # -- authorization: park the request until the person consents --------------------------
    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        resource = params.resource or self.resource()
        if resource.rstrip("/") != self.resource():
            raise AuthorizeError("invalid_target", f"this server issues tokens for "
                                 f"{self.resource()} only, not {resource[:200]}")
        request_id = secrets.token_urlsafe(24)
        approval = f"{secrets.randbelow(10**8):08d}"
        approval = f"{approval[:4]}-{approval[4:]}"
        address = request_address.get()
        with transaction(self.root) as data:
            dropped = _make_pending_room(data, client.client_id, address)
            data["pending"][request_id] = {
                "client_id": client.client_id, "redirect_uri": str(params.redirect_uri),
                "redirect_explicit": params.redirect_uri_provided_explicitly,
                "state": params.state, "scopes": params.scopes or ["pcp.read"],
                "code_challenge": params.code_challenge, "resource": self.resource(),
                "csrf": secrets.token_urlsafe(24), "approval": digest(approval), "tries": 0,
                "expires_at": time.time() + REQUEST_TTL, "base": request_base.get(),
                "address": address}
        name = safe_name(client.client_name, 60)
        host = safe_name(urlparse(str(params.redirect_uri)).hostname or "an app", 100)
        self._announce(client.client_id,
                       f'pcp serve: the client "{name}" (redirect to {host}) asks to read '
                       f"your context; approval code {approval} (or: pcp grant approve "
                       f"{request_id}); valid {REQUEST_TTL // 60} minutes")
        self.audit("oauth_authorize", client.client_id,
                   {"scopes": params.scopes, "redirect_host": host, "request": request_id,
                    **({"dropped_requests": dropped} if dropped else {})})
        return f"{request_base.get()}/consent?{urlencode({'request': request_id})}"

    def _announce(self, client_id: str, line: str) -> None:
        """A line on the terminal, at most ANNOUNCE_PER_CLIENT a minute for one client and
        ANNOUNCE_PER_MINUTE in all; past that, one line a minute says some were not printed."""
        if self.announced_client.admit(client_id) and self.announced.admit(""):
            self.announce(line)
        elif self.unshown_notice.admit(""):
            self.announce("pcp serve: too many authorization requests at once; some are not "
                          "printed (`pcp grant approve` lists every request waiting)")

    def pending(self, request_id: str) -> dict[str, Any] | None:
        found = self._current()["pending"].get(request_id)
        if found is None or found["expires_at"] <= time.time():
            return None
        client = self._current()["clients"].get(found["client_id"])
        return {**found, "client_name": (client or {}).get("client_name", "unnamed client")}

    def decide(self, request_id: str, *, csrf: str, approval: str, approve: bool,
               scopes: list[str], sensitive: bool, write: bool, address: str = "") -> str:
        """The consent POST: checks the owner's proof, makes the grant and the code; returns the
        redirect back to the client. Raises ConsentRefused."""
        with transaction(self.root) as data:
            found = data["pending"].get(request_id)
            client = data["clients"].get(found["client_id"]) if found else None
            refusal: ConsentRefused | None = None
            if found is None or found["expires_at"] <= time.time():
                refusal = ConsentRefused("unknown or expired authorization request", None)
            elif not hmac.compare_digest(found["csrf"], csrf):
                refusal = ConsentRefused("the form's CSRF token is missing or wrong", None)
            elif client is None:
                del data["pending"][request_id]
                refusal = ConsentRefused("the client was removed", None)
            elif not approve:
                del data["pending"][request_id]
                refusal = ConsentRefused("the person refused", _redirect(
                    found["redirect_uri"], error="access_denied",
                    error_description="the owner refused", state=found["state"],
                    iss=found["base"]))
            elif not found.get("approved"):
                refusal = self._check_code(data, request_id, found, approval, address)
            if refusal is None:
                assert found is not None and client is not None
                back = found["redirect_uri"]
                del data["pending"][request_id]
                grant_id = next((g for g, e in data["grants"].items()
                                 if e["oauth_client"] == found["client_id"]), None)
                if grant_id is None:
                    grant_id = f"oauth-{_slug(client['client_name'])}-{secrets.token_hex(3)}"
                before = data["grants"].get(grant_id) or {}
                data["grants"][grant_id] = {  # consenting again keeps what was known
                    "oauth_client": found["client_id"],
                    "created_at": before.get("created_at") or now_iso(),
                    "last_used": before.get("last_used")}
                code = CODE_PREFIX + secrets.token_urlsafe(32)
                data["codes"][digest(code)] = {
                    "client_id": found["client_id"], "grant": grant_id,
                    "redirect_uri": back, "redirect_explicit": found["redirect_explicit"],
                    "code_challenge": found["code_challenge"], "resource": found["resource"],
                    "scopes": _granted_scopes(sensitive, write),
                    "expires_at": time.time() + CODE_TTL}
                self._write_grant(grant_id, client, back, scopes, sensitive, write)
        # raised once the transaction is written: a wrong try is counted, never rolled back
        if refusal is not None:
            raise refusal
        self.audit("oauth_consent", found["client_id"],
                   {"grant": grant_id, "scopes": scopes, "sensitive": sensitive, "write": write})
        return _redirect(back, code=code, state=found["state"], iss=found["base"])

    def _check_code(self, data: dict[str, Any], request_id: str, found: dict[str, Any],
                    approval: str, address: str) -> ConsentRefused | None:
        """None when `approval` is the request's code; else the refusal, the wrong try
        counted in `data` (the request dropped at APPROVAL_TRIES) and against `address`."""
        waiting = self.guesses.refusal(address)
        if waiting is not None:
            return ConsentRefused(waiting + f"; or approve from a terminal: pcp grant approve "
                                  f"{request_id}", None, retry=True)
        if hmac.compare_digest(found["approval"], digest(approval.strip())):
            return None
        self.guesses.wrong(address)
        found["tries"] = found.get("tries", 0) + 1
        if found["tries"] < APPROVAL_TRIES:
            return ConsentRefused("the approval code is missing or wrong (it is printed where "
                                  "`pcp serve` runs)", None, retry=True)
        del data["pending"][request_id]
        return ConsentRefused("wrong approval code too often; the request is dropped",
                              _redirect(found["redirect_uri"], error="access_denied",
                                        error_description="approval failed",
                                        state=found["state"], iss=found["base"]))

    def _write_grant(self, grant_id: str, client: dict[str, Any], redirect: str,
                     scopes: list[str], sensitive: bool, write: bool) -> None:
        with api.open_store(self.root, refresh=False) as store:
            clients = api.client_grants(store)
            clients[grant_id] = {
                "scopes": scopes, "allow_sensitive": sensitive, "allow_write": write,
                "description": f"made by OAuth consent for {client['client_name'][:60]} "
                               f"(redirects to {urlparse(redirect).hostname})"}
            api.set_client_grants(store, clients)

    # -- codes and tokens -------------------------------------------------------------------
    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        found = self._current()["codes"].get(digest(authorization_code))
        if found is None:
            used = self._current()["tokens"]
            if any(t.get("code") == digest(authorization_code) for t in used.values()):
                self._revoke_where(lambda t: t.get("code") == digest(authorization_code))
                note("the authorization code was used twice: the tokens it gave are revoked")
            return None
        return AuthorizationCode(
            code=authorization_code, scopes=found["scopes"], expires_at=found["expires_at"],
            client_id=found["client_id"], code_challenge=found["code_challenge"],
            redirect_uri=AnyUrl(found["redirect_uri"]),
            redirect_uri_provided_explicitly=found["redirect_explicit"],
            resource=found["resource"], subject=found["grant"])

    def _check_target(self, bound: str | None) -> None:
        asked = request_form.get({}).get("resource")
        if asked is not None and asked.rstrip("/") != (bound or "").rstrip("/"):
            raise TokenError("invalid_target", f"these tokens are for {bound}, not "
                             f"{asked[:200]}")

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self._check_target(authorization_code.resource)
        key = digest(authorization_code.code)
        with transaction(self.root) as data:
            found = data["codes"].pop(key, None)
            if found is not None:
                family = secrets.token_hex(8)
                token = self._issue(data, found["client_id"], found["grant"], family,
                                    found["resource"], found["scopes"], code=key)
        if found is None:  # a second exchange racing the first
            raise TokenError("invalid_grant", "the authorization code was already used")
        self.audit("oauth_token", found["client_id"], {"grant": found["grant"],
                                                       "family": family})
        return token

    def _issue(self, data: dict[str, Any], client_id: str, grant: str, family: str,
               resource: str, scopes: list[str], code: str | None = None) -> OAuthToken:
        now = time.time()
        access = ACCESS_PREFIX + secrets.token_urlsafe(32)
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        common = {"client_id": client_id, "grant": grant, "family": family,
                  "resource": resource, "scopes": scopes, "code": code}
        data["tokens"][digest(access)] = {**common, "kind": "access",
                                          "expires_at": int(now + ACCESS_TTL)}
        data["tokens"][digest(refresh)] = {**common, "kind": "refresh", "used": False,
                                           "expires_at": int(now + REFRESH_TTL)}
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=ACCESS_TTL,
                          refresh_token=refresh, scope=" ".join(scopes))

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> PcpRefreshToken | None:
        found = self._current()["tokens"].get(digest(refresh_token))
        if found is None or found["kind"] != "refresh":
            return None
        return PcpRefreshToken(token=refresh_token, client_id=found["client_id"],
                               scopes=found["scopes"], expires_at=found["expires_at"],
                               resource=found["resource"], used=found.get("used", False),
                               family=found["family"], grant=found["grant"])

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: PcpRefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self._check_target(refresh_token.resource)
        key = digest(refresh_token.token)
        with transaction(self.root) as data:
            found = data["tokens"].get(key)
            if found is None or found.get("used"):
                family = refresh_token.family
                data["tokens"] = {k: t for k, t in data["tokens"].items()
                                  if t["family"] != family}
                reused = True
            else:
                reused = False
                found["used"] = True
                for other in data["tokens"].values():  # the old access token goes too
                    if other["family"] == found["family"] and other["kind"] == "access":
                        other["expires_at"] = 0
                token = self._issue(data, found["client_id"], found["grant"], found["family"],
                                    found["resource"], scopes, code=found.get("code"))
        if reused:
            note("a refresh token was reused: its whole family is revoked")
            raise TokenError("invalid_grant", "this refresh token was already used: every "
                             "token of its authorization is revoked (sign in again)")
        self.audit("oauth_refresh", refresh_token.client_id, {"grant": refresh_token.grant,
                                                              "family": refresh_token.family})
        return token

    async def load_access_token(self, token: str) -> PcpAccessToken | None:
        found = self._current()["tokens"].get(digest(token))
        if found is None or found["kind"] != "access" or found["expires_at"] <= time.time():
            return None
        return PcpAccessToken(token=token, client_id=found["client_id"],
                              scopes=found["scopes"], expires_at=found["expires_at"],
                              resource=found["resource"], family=found["family"],
                              grant=found["grant"])

    async def revoke_token(self, token: PcpAccessToken | PcpRefreshToken) -> None:
        family = getattr(token, "family", "")
        self._revoke_where(lambda t: t["family"] == family)
        self.audit("oauth_revoke", token.client_id, {"family": family})

    def _revoke_where(self, predicate: Callable[[dict[str, Any]], bool]) -> None:
        with transaction(self.root) as data:
            data["tokens"] = {k: t for k, t in data["tokens"].items() if not predicate(t)}

    async def exchange_identity_assertion(self, client: Any, params: Any) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "only authorization_code and refresh_token")

    # -- the resource server's check, on every /mcp request ---------------------------------
    def verify(self, token: str, resource: str) -> tuple[str | None, str]:
        """(grant client id, "") for a good access token, else (None, why)."""
        found = self._current()["tokens"].get(digest(token))
        if found is None or found["kind"] != "access":
            return None, "unknown, revoked or rotated token"
        if found["expires_at"] <= time.time():
            return None, "the access token expired (refresh it)"
        if found["resource"].rstrip("/") != resource.rstrip("/"):
            return None, f"the token is for {found['resource'][:200]}, not this server"
        grant = found["grant"]
        now = time.monotonic()
        if now - self._last_used.get(grant, -LAST_USED_EVERY) >= LAST_USED_EVERY:
            self._last_used[grant] = now
            with transaction(self.root) as data:
                if grant in data["grants"]:
                    data["grants"][grant]["last_used"] = now_iso()
        return grant, ""


def _forget_before(times: dict[str, list[float]], cutoff: float) -> None:
    """Keep only the times after `cutoff` (a key left with none goes)."""
    for key, kept in list(times.items()):
        kept = [t for t in kept if t > cutoff]
        if kept:
            times[key] = kept
        else:
            del times[key]


class Window:
    """At most `limit` events per key in any `seconds` (in this server's memory)."""

    def __init__(self, limit: int, seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.seconds, self.clock = limit, seconds, clock
        self._seen: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def admit(self, key: str) -> bool:
        """Count one event of `key` if it fits; whether it did."""
        with self._lock:
            now = self.clock()
            _forget_before(self._seen, now - self.seconds)
            mine = self._seen.setdefault(key, [])
            if len(mine) >= self.limit:
                return False
            mine.append(now)
            return True


def _make_pending_room(data: dict[str, Any], client_id: str, address: str) -> int:
    """Room for one more pending request of `client_id` from `address`: the oldest request of
    that client, of that address, or of all, goes while its cap is reached. How many went."""
    dropped = 0
    for cap, same in ((MAX_PENDING_PER_CLIENT, lambda p: p["client_id"] == client_id),
                      (MAX_PENDING_PER_ADDRESS, lambda p: p.get("address", "") == address),
                      (MAX_PENDING, lambda p: True)):
        mine = sorted((p["expires_at"], rid) for rid, p in data["pending"].items() if same(p))
        while len(mine) >= cap:
            del data["pending"][mine.pop(0)[1]]
            dropped += 1
    return dropped


class Guesses:
    """Wrong approval codes by address, in this server's memory (see APPROVAL_TRIES)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._wrong: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def refusal(self, address: str) -> str | None:
        """Why a try from `address` is not compared now (None: it is)."""
        with self._lock:
            now = self.clock()
            _forget_before(self._wrong, now - REQUEST_TTL)
            if sum(len(t) for t in self._wrong.values()) >= ALL_TRIES:
                return (f"too many wrong approval codes lately ({ALL_TRIES} in "
                        f"{REQUEST_TTL // 60} minutes); codes are not checked for a while")
            mine = self._wrong.get(address, [])
            if len(mine) >= ADDRESS_TRIES:
                return (f"too many wrong approval codes from your address ({ADDRESS_TRIES} in "
                        f"{REQUEST_TTL // 60} minutes)")
            if mine:
                wait = min(GUESS_DELAY * 2 ** (len(mine) - 1), GUESS_DELAY_MAX)
                left = mine[-1] + wait - now
                if left > 0:
                    return (f"slow down: after a wrong approval code, try again in "
                            f"{max(1, round(left))} s")
            return None

    def wrong(self, address: str) -> None:
        with self._lock:
            self._wrong.setdefault(address, []).append(self.clock())


class ConsentRefused(Exception):
    """Why the consent POST was refused. Like every error here it is raised after the state's
    transaction, never inside it: an exception leaves the state as it was (a wrong try would
    not be counted), and the SDK's errors are frozen dataclasses that cannot pass through a
    context manager (setting their traceback fails: the 500 of issue #31)."""

    def __init__(self, reason: str, redirect: str | None, *, retry: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.redirect = redirect
        self.retry = retry


def _granted_scopes(sensitive: bool, write: bool) -> list[str]:
    return ["pcp.read"] + (["pcp.sensitive"] if sensitive else []) + (
        ["pcp.write"] if write else [])


def _redirect(base: str, **params: str | None) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return base + ("&" if urlparse(base).query else "?") + query


# -- the consent page -------------------------------------------------------------------------
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pcp: allow {name}?</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:16px/1.4 system-ui,sans-serif;max-width:36em;margin:2em auto;padding:0 1em}}
fieldset{{margin:1em 0}} .warn{{color:#a40}} label{{display:block;margin:.2em 0}}</style>
</head><body>
<h1>Allow <em>{name}</em> to read your context?</h1>
<p>It will be sent back to <strong>{host}</strong>. It asks for: <strong>{asked}</strong>.</p>
{error}
<form method="post" action="/consent">
<input type="hidden" name="request" value="{request}">
<input type="hidden" name="csrf" value="{csrf}">
<fieldset><legend>Namespaces it may read</legend>
{namespaces}
</fieldset>
<fieldset><legend>More</legend>
<label><input type="checkbox" name="sensitive" value="yes"> also high-sensitivity pages</label>
<label><input type="checkbox" name="write" value="yes"> let it write (needs
<code>pcp serve --allow-write</code>)</label>
</fieldset>
<p><label>Approval code, printed where <code>pcp serve</code> runs:
<input name="approval" autocomplete="off" inputmode="numeric" size="10"></label></p>
<p><button name="decision" value="approve">Allow</button>
<button name="decision" value="deny">Refuse</button></p>
</form></body></html>
"""


def consent_page(pending: dict[str, Any], request_id: str, namespaces: list[str],
                 error: str | None = None) -> str:
    e = html.escape
    boxes = "\n".join(
        f'<label><input type="checkbox" name="scope" value="{e(ns)}"> {e(ns)}</label>'
        for ns in namespaces) or "<p>(the store has no namespaces yet)</p>"
    return _PAGE.format(
        name=e(pending["client_name"]), host=e(urlparse(pending["redirect_uri"]).hostname or ""),
        asked=e(", ".join(pending["scopes"])), request=e(request_id), csrf=e(pending["csrf"]),
        namespaces=boxes, error=f'<p class="warn">{e(error)}</p>' if error else "")
