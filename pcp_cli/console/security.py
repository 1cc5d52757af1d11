"""Who may use the console, checked before any page is built.

- **Sign-in.** `pcp console` prints a URL carrying a one-time token (256 random bits). Opening
  it once sets a session cookie (`HttpOnly`, `SameSite=Strict`, path `/`) and redirects to the
  console without the token; the token then no longer works. Sessions live in the server's
  memory: stopping the console signs everyone out. A browser keeps cookies per host, not per
  port, so the cookie's name carries the port (`pcp_console_8770`): a second console (another
  store, another port) sets its own instead of replacing the first one's.
- **Nothing without the session**: every request without a valid session cookie (the static
  files included) is 401 with a body that says how to sign in and nothing else.
- **DNS rebinding**: the `Host` header must be exactly the address the console serves
  (`127.0.0.1:PORT`); anything else is 421, before the cookie is even looked at.
- **CSRF**: a state-changing request (any method but GET and HEAD) must carry the session's
  CSRF token (form field `csrf`) and an `Origin` header equal to the console's own origin;
  otherwise 403. Tokens are compared in constant time.
- **Headers**: a strict Content-Security-Policy (only the console's own script and style, no
  inline code, no frames, forms post only to the console), no referrer, no caching, no
  sniffing; referrers only within the console.

Pure functions over header values: no web framework here.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass, field

COOKIE = "pcp_console"
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # not no-referrer: with it a browser sends `Origin: null` on a form post
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# What a refused request's body says: how to get in, and never anything of the store.
SIGN_IN_HINT = ("Sign in with the link `pcp console` printed when it started "
                "(or start it again for a new one).")


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


@dataclass
class Session:
    session_id: str
    csrf: str


@dataclass
class Gate:
    """The console's sign-in token and sessions, for the origin it serves."""

    host: str  # "127.0.0.1:PORT", what the Host header must say
    signin_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    _used: bool = False
    _sessions: dict[str, Session] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def cookie(self) -> str:
        """The session cookie's name: one per port (cookies are not kept apart by port)."""
        return f"{COOKIE}_{self.host.rsplit(':', 1)[-1]}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    @property
    def signin_url(self) -> str:
        return f"{self.origin}/signin?token={self.signin_token}"

    def check_host(self, host: str | None) -> Refusal | None:
        if host != self.host:
            return Refusal(421, "This console answers only at its own address "
                                f"({self.origin}).")
        return None

    def sign_in(self, token: str | None) -> Session | None:
        """The new session for the one-time token, or None (wrong, or already used)."""
        with self._lock:
            if self._used or not token or not hmac.compare_digest(
                    token.encode(), self.signin_token.encode()):
                return None
            self._used = True
            session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
            self._sessions[session.session_id] = session
            return session

    def session(self, cookie: str | None) -> Session | None:
        if not cookie:
            return None
        with self._lock:
            for session_id, session in self._sessions.items():
                if hmac.compare_digest(session_id.encode(), cookie.encode()):
                    return session
        return None

    def sign_out(self, session: Session) -> None:
        with self._lock:
            self._sessions.pop(session.session_id, None)

    def check_write(self, session: Session, origin: str | None,
                    csrf: str | None) -> Refusal | None:
        """A state-changing request: same-origin `Origin` and the session's CSRF token."""
        if origin != self.origin:
            return Refusal(403, "Refused: this request did not come from the console's own "
                                "page (its Origin header is missing or foreign).")
        if not csrf or not hmac.compare_digest(csrf.encode(), session.csrf.encode()):
            return Refusal(403, "Refused: the form's security token is missing or stale; "
                                "reload the page and try again.")
        return None
