"""One MCP server session: validate, authorize, call the backend, audit, shape the reply.

SDK-free (the server module adapts it to the `mcp` SDK), so every rule here is testable in
process. The session holds the only mutable state of a server: the pages suppressed for the rest
of the session.

Nothing outside the grant may leak: ids that are out of grant, suppressed or non-existent all get
the same "not found"; scopes a call asks for outside the grant are ignored and reported without
saying what lies there; unexpected failures are reported without their details (those go to the
log on stderr).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pcp_cli import __version__
from pcp_cli.errors import InvalidInput, NotFound, PcpError, UsageError
from pcp_cli.mcp.audit import AuditLog, AuditUnavailable
from pcp_cli.mcp.backend import Backend
from pcp_cli.mcp.grants import Grant, call_scopes, scope_allows
from pcp_cli.mcp.tools import (
    PROFILE_FORMATS,
    READ_VIEWS,
    SEARCH_MAX_LIMIT,
    TIMELINE_MAX_LIMIT,
    ToolSpec,
    tools_for,
    validate_arguments,
)
from pcp_cli.model.search_request import SearchRequest

log = logging.getLogger("pcp.mcp")

# Characters of page payload one pcp_read_pages call returns at most (about 5,000 tokens).
DEFAULT_PAYLOAD_CHARS = 20_000
CURSOR_VERSION = 1


class NotPermitted(PcpError):
    """The call is well-formed but this client's grant does not allow it."""

    code = "not_permitted"


class UnknownTool(InvalidInput):
    code = "unknown_tool"


class InternalError(PcpError):
    """Something unexpected failed; the details stay in the log, not in the reply."""

    code = "internal"


# Failures that are a refusal (the caller asked for something it may not have, or asked badly)
# rather than an error (something went wrong while serving an allowed request).
_REFUSALS = (InvalidInput, UsageError, NotFound, NotPermitted)


@dataclass(frozen=True)
class Reply:
    """What a tool call answers: structured data, the same as text, and whether it failed."""

    data: dict[str, Any]
    text: str
    is_error: bool = False


def _error_reply(error: PcpError) -> Reply:
    data = {"error": {"code": error.code, "message": error.message, "hint": error.hint}}
    text = f"Error: {error.message}"
    if error.hint:
        text += f"\nHint: {error.hint}"
    return Reply(data=data, text=text, is_error=True)


class TimedOut(PcpError):
    code = "timeout"


def timed_out(name: str, seconds: float) -> Reply:
    """The answer to a call still running after the server's request-time cap."""
    return _error_reply(TimedOut(
        f"{name[:80]} took longer than {seconds:g}s and was abandoned",
        hint="narrow the request (a smaller limit, fewer ids) and try again",
    ))


def _not_found(page_id: str) -> NotFound:
    # One message for "does not exist", "outside your grant" and "suppressed".
    return NotFound(
        f"page {page_id} not found",
        hint="use pcp_search to find the ids of pages you can read",
    )


def _count(key: str) -> Callable[[dict[str, Any]], int | None]:
    def count(data: dict[str, Any]) -> int | None:
        value = data.get(key)
        return len(value) if isinstance(value, list) else None

    return count


RESULT_COUNTS: dict[str, Callable[[dict[str, Any]], int | None]] = {
    "pcp_search": _count("results"),
    "pcp_get_timeline": _count("events"),
    "pcp_read_pages": _count("pages"),
    "pcp_suppress_pages": _count("suppressed"),
    "pcp_list_scopes": _count("scopes"),
    "pcp_related_pages": _count("pages"),
}


def _ids(key: str, *, id_key: str = "page_id") -> Callable[[dict[str, Any]], list[str]]:
    """The page ids in `data[key]`: a v1 object names its page in the pcp-cli extension."""
    def ids(data: dict[str, Any]) -> list[str]:
        found = []
        for item in data.get(key) or ():
            if not isinstance(item, dict):
                continue
            own = (item.get("extensions") or {}).get("org.pcp-cli") or {}
            page_id = own.get("page_id") if isinstance(own, dict) else None
            page_id = page_id or item.get(id_key)
            if isinstance(page_id, str):
                found.append(page_id)
        return found

    return ids


def _profile_ids(data: dict[str, Any]) -> list[str]:
    """The profile page, when the answer carries anything of it."""
    from pcp_cli.api import PROFILE_PAGE_ID
    from pcp_cli.render.micro_prompt import EMPTY

    text = data.get("text")
    if isinstance(text, str):
        return [PROFILE_PAGE_ID] if text.strip() and text != EMPTY else []
    return [PROFILE_PAGE_ID] if set(data) - {"schema_version", "generated_at"} else []


# The pages each tool's answer carries, recorded in the audit log (what an assistant read).
RESULT_PAGE_IDS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "pcp_search": _ids("results", id_key="id"),
    "pcp_get_timeline": _ids("events", id_key="id"),
    "pcp_read_pages": _ids("pages"),
    "pcp_related_pages": _ids("pages"),
    "pcp_get_profile": _profile_ids,
}


def _encode_cursor(key: str, index: int, offset: int, revision: Any) -> str:
    raw = json.dumps({"v": CURSOR_VERSION, "k": key, "p": index, "o": offset, "r": revision},
                     separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, key: str) -> tuple[int, int, Any]:
    invalid = InvalidInput("cursor is not valid",
                           hint="pass next_cursor exactly as returned, or call without cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError):
        raise invalid from None
    if not isinstance(data, dict) or data.get("v") != CURSOR_VERSION:
        raise invalid
    index, offset = data.get("p"), data.get("o")
    if not (isinstance(index, int) and isinstance(offset, int) and index >= 0 and offset >= 0):
        raise invalid
    if data.get("k") != key:
        raise InvalidInput(
            "cursor belongs to a different request",
            hint="pass the same ids and views as the call that returned next_cursor",
        )
    return index, offset, data.get("r")


class ToolSession:
    """Serves tool calls for one client under one grant."""

    def __init__(
        self,
        backend: Backend,
        grant: Grant,
        audit: AuditLog,
        *,
        max_payload_chars: int = DEFAULT_PAYLOAD_CHARS,
    ) -> None:
        self.backend = backend
        self.grant = grant
        self.audit = audit
        self.max_payload_chars = max_payload_chars
        self.specs: dict[str, ToolSpec] = {s.name: s for s in tools_for(grant.allow_write)}
        self._suppressed: set[str] = set()
        # Says how long suppression lasts (HTTP sessions are per client and context id).
        self.suppression_scope = "until this server session ends"
        # Calls are served one at a time: suppression and audit order stay simple and exact.
        self._lock = threading.Lock()

    def regrant(self, grant: Grant) -> None:
        """Serve later calls under `grant` (the client's grant was edited while serving); the
        session's suppressed pages stay suppressed."""
        with self._lock:
            self.grant = grant
            self.specs = {s.name: s for s in tools_for(grant.allow_write)}

    @property
    def suppressed(self) -> frozenset[str]:
        return frozenset(self._suppressed)

    # -- the one entry point ---------------------------------------------------------------------
    def call(self, name: str, arguments: Mapping[str, Any] | None) -> Reply:
        with self._lock:
            return self._call(name, arguments)

    def _call(self, name: str, arguments: Mapping[str, Any] | None) -> Reply:
        try:
            sink = self.audit.open()
        except AuditUnavailable as exc:
            log.error("refusing %s: %s", name, exc.message)
            return _error_reply(exc)
        with sink:
            reply: Reply
            outcome, count, code = "allowed", None, None
            page_ids: list[str] | None = None
            try:
                spec = self.specs.get(name)
                if spec is None:
                    raise UnknownTool(
                        f"unknown tool {name[:80]!r}",
                        hint="call tools/list for the tools this server offers",
                    )
                args = validate_arguments(spec, arguments)
                data = getattr(self, "_" + spec.name.removeprefix("pcp_"))(args)
                count = RESULT_COUNTS.get(name, lambda _d: None)(data)
                read = RESULT_PAGE_IDS.get(name)
                page_ids = read(data) if read is not None else None
                reply = Reply(data=data, text=self._render(name, args, data))
            except PcpError as exc:
                outcome = "refused" if isinstance(exc, _REFUSALS) else "error"
                code = exc.code
                reply = _error_reply(exc)
            except Exception:
                log.exception("%s failed unexpectedly", name)
                outcome, code = "error", "internal"
                reply = _error_reply(InternalError(
                    "internal error in pcp; the details are in the server's log on stderr",
                    hint="try again; if it keeps failing, run `pcp doctor` on the store",
                ))
            try:
                sink.write(
                    client_id=self.grant.client_id,
                    actor=self.grant.actor,
                    tool=name,
                    params=arguments or {},
                    outcome=outcome,
                    result_count=count,
                    error_code=code,
                    page_ids=page_ids,
                )
            except AuditUnavailable as exc:
                log.error("dropping the answer to %s: %s", name, exc.message)
                return _error_reply(exc)
            return reply

    @staticmethod
    def _render(name: str, args: dict[str, Any], data: dict[str, Any]) -> str:
        if name == "pcp_get_profile" and args["format"] != "json" and "text" in data:
            return str(data["text"])
        return json.dumps(data, ensure_ascii=False)

    # -- id checks shared by several tools -------------------------------------------------------
    def _require_visible(self, *ids: str) -> None:
        visible = self.backend.visible_page_ids(self.grant, tuple(ids), suppressed=self.suppressed)
        for page_id in ids:
            if page_id not in visible or page_id in self._suppressed:
                raise _not_found(page_id)

    # -- scopes: which ones a call reads ---------------------------------------------------------
    def _scoped(self, args: dict[str, Any]) -> tuple[Grant, str, list[str]]:
        """The grant narrowed to the scopes this call reads, where they came from, and notices.

        A call naming no scopes reads the grant's default scopes only; every other granted
        scope is read only when the call names it (`scopes: [...]`, or `"*"` for all):
        cross-scope recall is explicit (Paged Context Protocol)."""
        scopes, dropped, source = call_scopes(self.grant, args.get("scopes"))
        notices = [f"ignored scopes outside this client's grant: {', '.join(dropped)}"] \
            if dropped and args.get("scopes") is not None else []
        return dataclasses.replace(self.grant, scopes=scopes), source, notices

    @staticmethod
    def _report_scopes(data: dict[str, Any], grant: Grant, source: str,
                       notices: list[str]) -> dict[str, Any]:
        """Say in the answer which scopes were read and why (in filters_applied, where the
        answer has one), and add the notices."""
        filters = data.get("filters_applied")
        if isinstance(filters, dict):
            filters["scopes_read"] = list(grant.scopes)
            filters["scope_source"] = source
        if notices:
            data["notices"] = [*notices, *(data.get("notices") or [])]
        return data

    # -- read-only tools --------------------------------------------------------------------------
    def _get_profile(self, args: dict[str, Any]) -> dict[str, Any]:
        grant, source, notices = self._scoped(args)
        data = self.backend.get_profile(grant, format=args["format"],
                                        suppressed=self.suppressed, as_of=args["as_of"])
        if args["format"] != "json":  # the json profile is the strict §3.1 object, nothing more
            data = {**data, "scopes_read": list(grant.scopes), "scope_source": source}
            if notices:
                data["notices"] = notices
        return data

    def _related_pages(self, args: dict[str, Any]) -> dict[str, Any]:
        if args["page_id"] in self._suppressed:
            raise _not_found(args["page_id"])
        grant, source, notices = self._scoped(args)
        visible = self.backend.visible_page_ids(grant, (args["page_id"],),
                                                suppressed=self.suppressed)
        if args["page_id"] not in visible:
            if args["page_id"] in self.backend.visible_page_ids(
                    self.grant, (args["page_id"],), suppressed=self.suppressed):
                raise InvalidInput(
                    f"page {args['page_id']} is outside the scopes this call reads "
                    f"({', '.join(grant.scopes) or 'none'})",
                    hint='name its scope in scopes, or pass scopes: ["*"] to walk every '
                    "scope this client is granted")
            raise _not_found(args["page_id"])
        data = self.backend.related_pages(
            grant, page_id=args["page_id"], relation_types=args["relation_types"] or (),
            depth=args["depth"], suppressed=self.suppressed, as_of=args["as_of"])
        pages = data.get("pages")
        if isinstance(pages, list):
            data["pages"] = [p for p in pages if isinstance(p, dict)
                             and p.get("page_id") not in self._suppressed]
            data["count"] = len(data["pages"])
        return self._report_scopes(data, grant, source, notices)

    def _search(self, args: dict[str, Any]) -> dict[str, Any]:
        # A call naming no scopes searches the grant's default scopes only (every search falls
        # within a stated scope; cross-scope recall is asked for by naming them).
        scopes, dropped, source = call_scopes(self.grant, args["scopes"])
        include_sensitive = args["include_sensitive"] and self.grant.allow_sensitive
        # One request, checked once; the session decides the scopes, sensitivity and
        # suppressed pages (an AI client sees an unclassified page only as a `high` one).
        request = SearchRequest.from_options(
            args, scopes=scopes, include_sensitive=include_sensitive,
            include_unclassified=include_sensitive, suppressed=self.suppressed)
        data = self.backend.search(self.grant, request)
        if isinstance(data.get("filters_applied"), dict):
            data["filters_applied"]["scope_source"] = source
        results = data.get("results")
        if isinstance(results, list):
            # Defence in depth: the cap and the suppression hold whatever the backend does.
            data["results"] = [
                r for r in results
                if not (isinstance(r, dict) and r.get("id") in self._suppressed)
            ][: args["limit"]]
        notices = []
        if dropped and args["scopes"] is not None:
            notices.append(f"ignored scopes outside this client's grant: {', '.join(dropped)}")
        from pcp_cli.render.versions import search_as

        return self._sensitive_notice(args, search_as(data, self.grant.pcp_version), notices)

    def _sensitive_notice(self, args: dict[str, Any], data: dict[str, Any],
                          notices: list[str] | None = None) -> dict[str, Any]:
        """Say so when include_sensitive was asked for and the grant does not allow it."""
        notices = list(notices or ())
        if args["include_sensitive"] and not self.grant.allow_sensitive:
            notices.append("include_sensitive ignored: this client's grant does not allow "
                           "high-sensitivity material")
        if notices:  # after any the answer holds already (a scope ignored)
            data["notices"] = [*(data.get("notices") or []), *notices]
        return data

    def _get_timeline(self, args: dict[str, Any]) -> dict[str, Any]:
        if args["from"] and args["to"] and args["from"] > args["to"]:
            raise InvalidInput(f"from {args['from']} is after to {args['to']}",
                               hint="swap them, or leave one out")
        grant, source, notices = self._scoped(args)
        return self._sensitive_notice(args, self._report_scopes(self.backend.get_timeline(
            grant, from_=args["from"], to=args["to"], query=args["query"],
            limit=args["limit"], suppressed=self.suppressed, cursor=args["cursor"],
            as_of=args["as_of"], include_sensitive=args["include_sensitive"],
        ), grant, source, notices))

    def _stats(self, args: dict[str, Any]) -> dict[str, Any]:
        grant, source, notices = self._scoped(args)
        data = self._report_scopes(self.backend.stats(
            grant, suppressed=self.suppressed, as_of=args["as_of"],
            include_sensitive=args["include_sensitive"]), grant, source, notices)
        data["protocols"] = self._protocols()
        return self._sensitive_notice(args, data)

    def _protocols(self) -> dict[str, Any]:
        """Which protocol versions this server speaks, and which this client is served."""
        from pcp_cli.render.versions import protocols

        return protocols(self.grant.pcp_version)

    def _describe_capabilities(self, args: dict[str, Any]) -> dict[str, Any]:
        from pcp_cli.api import offered_operations

        # The operations this session really offers: derived from its own tool table.
        operations = offered_operations(list(self.specs), front_end="mcp")
        return {
            "operations": operations,
            "server": {"name": "pcp", "version": __version__},
            "protocols": self._protocols(),
            "grant": self.grant.to_dict(),
            "tools": sorted(self.specs),
            "writes_enabled": self.grant.allow_write,
            "read_views": list(READ_VIEWS),
            "profile_formats": list(PROFILE_FORMATS),
            "limits": {
                "search_max_limit": SEARCH_MAX_LIMIT,
                "timeline_max_limit": TIMELINE_MAX_LIMIT,
                "read_pages_payload_chars": self.max_payload_chars,
            },
            "suppressed_pages": len(self._suppressed),
            "store": self.backend.describe_capabilities(self.grant, operations=operations),
        }

    def _list_scopes(self, args: dict[str, Any]) -> dict[str, Any]:
        data = self.backend.list_scopes(self.grant, suppressed=self.suppressed,
                                        limit=args["limit"], cursor=args["cursor"])
        data.setdefault("granted", list(self.grant.scopes))
        # what a call naming no scopes reads; the rest is read by naming it
        data["default_scopes"] = list(self.grant.default_scopes)
        return data

    def _read_pages(self, args: dict[str, Any]) -> dict[str, Any]:
        ids: tuple[str, ...] = args["ids"]
        views: tuple[str, ...] = args["views"]
        passage = args.get("passage")
        if passage is not None:
            return self._read_passage(ids, views, passage, args["as_of"])
        key = hashlib.sha256(json.dumps([ids, views, args["as_of"]]).encode()).hexdigest()[:16]
        start, offset, revision = 0, 0, None
        if args["cursor"] is not None:
            start, offset, revision = _decode_cursor(args["cursor"], key)
        data = self.backend.read_pages(self.grant, ids=ids, views=views,
                                       suppressed=self.suppressed, as_of=args["as_of"])
        pages = [  # asked for by page id, or by one of its revision ids
            p for p in data.get("pages", [])
            if isinstance(p, dict) and (p.get("page_id") in ids or p.get("revision_id") in ids)
            and p.get("page_id") not in self._suppressed
        ]
        returned = {p["page_id"] for p in pages} | {p.get("revision_id") for p in pages}
        not_found = [i for i in ids if i not in returned]
        if args["cursor"] is not None and (
            start >= len(pages) or pages[start].get("revision_id") != revision
        ):
            raise InvalidInput("the pages changed since this cursor was issued",
                               hint="read them again without cursor")
        budget = self.max_payload_chars
        out: list[dict[str, Any]] = []
        next_cursor = None
        index = start
        while index < len(pages):
            page = pages[index]
            text = page.get("payload")
            if "payload" not in views or not isinstance(text, str):
                out.append(page)
                index, offset = index + 1, 0
                continue
            if budget <= 0:
                next_cursor = _encode_cursor(key, index, offset, page.get("revision_id"))
                break
            chunk = text[offset: offset + budget]
            end = offset + len(chunk)
            budget -= len(chunk)
            entry = dict(page) if offset == 0 else {
                "page_id": page["page_id"], "revision_id": page.get("revision_id")}
            entry["payload"] = chunk
            entry["payload_range"] = {"start": offset, "end": end, "total": len(text)}
            out.append(entry)
            if end < len(text):
                next_cursor = _encode_cursor(key, index, end, page.get("revision_id"))
                break
            index, offset = index + 1, 0
        return {"pages": out, "not_found": not_found, "next_cursor": next_cursor}

    def _read_passage(self, ids: tuple[str, ...], views: tuple[str, ...],
                      passage: dict[str, Any], as_of: str | None) -> dict[str, Any]:
        """pcp_read_pages with `passage`: the one page's passage at start..end and its
        neighbours, in place of its payload (the other views as asked)."""
        from pcp_cli import api

        if len(ids) != 1:
            raise InvalidInput("pcp_read_pages: passage reads one page: give exactly one id",
                               hint="read each page's passage in a call of its own")
        asked = tuple(dict.fromkeys((*views, "manifest", "payload")))
        data = self.backend.read_pages(self.grant, ids=ids, views=asked,
                                       suppressed=self.suppressed, as_of=as_of)
        pages = [p for p in data.get("pages", []) if isinstance(p, dict)
                 and ids[0] in (p.get("page_id"), p.get("revision_id"))
                 and p.get("page_id") not in self._suppressed]
        if not pages or not isinstance(pages[0].get("payload"), str):
            return {"pages": [], "not_found": list(ids), "next_cursor": None}
        page = dict(pages[0])
        manifest = page.get("manifest") if isinstance(page.get("manifest"), dict) else {}
        page["passage"] = api.passage_around(
            page.pop("payload"), manifest.get("type"), passage["start"], passage["end"],
            passage["neighbours"] if passage.get("neighbours") is not None else 1)
        text = page["passage"]["text"]
        if len(text) > self.max_payload_chars:  # whole turns can be long: the call's budget
            page["passage"]["text"] = text[:self.max_payload_chars]
            page["passage"]["truncated"] = True
        page.pop("media_type", None)
        if "manifest" not in views:
            page.pop("manifest", None)
        return {"pages": [page], "not_found": [], "next_cursor": None}

    def _suppress_pages(self, args: dict[str, Any]) -> dict[str, Any]:
        ids: tuple[str, ...] = args["ids"]
        visible = self.backend.visible_page_ids(self.grant, ids, suppressed=self.suppressed)
        done = [i for i in ids if i in visible or i in self._suppressed]
        self._suppressed.update(done)
        return {
            "suppressed": done,
            "not_found": [i for i in ids if i not in done],
            "suppressed_in_session": len(self._suppressed),
            "note": f"hidden from every tool {self.suppression_scope}; nothing on disk changed",
        }

    # -- writes -------------------------------------------------------------------------------
    def _check_write(self) -> None:
        if not self.grant.allow_write:  # unreachable while write tools are not offered
            raise NotPermitted("writing is not enabled for this client",
                               hint="the person enables it in pcp.yaml and with --allow-write")

    def _write_page(self, args: dict[str, Any]) -> dict[str, Any]:
        self._check_write()
        namespace = args["namespace"]
        if namespace is not None and not scope_allows(self.grant, namespace):
            raise NotPermitted(
                f"namespace {namespace} is outside this client's grant",
                hint=f"write to a namespace inside: {', '.join(self.grant.scopes) or 'nothing'}",
            )
        return self.backend.write_page(
            self.grant, content=args["content"], title=args["title"], type=args["type"],
            namespace=namespace, tags=args["tags"] or (),
            idempotency_key=args["idempotency_key"],
            **({"derived_from": args["derived_from"]} if args.get("derived_from") else {}),
        )

    def _revise_page(self, args: dict[str, Any]) -> dict[str, Any]:
        self._check_write()
        self._require_visible(args["page_id"])
        return self.backend.revise_page(
            self.grant, page_id=args["page_id"],
            expected_revision_id=args["expected_revision_id"],
            content=args["content"], title=args["title"],
        )

    def _link_pages(self, args: dict[str, Any]) -> dict[str, Any]:
        self._check_write()
        pages = [i for i in (args["from_id"], args["to_id"]) if not i.startswith("rev_")]
        revisions = [i for i in (args["from_id"], args["to_id"]) if i.startswith("rev_")]
        self._require_visible(*pages)
        if revisions:
            # a revision id pins the relation to that revision: it must be readable as
            # pcp_read_pages would read it (its page inside the grant, not suppressed, and the
            # revision itself served: scope, sensitivity, affirmed, not withdrawn)
            read = self.backend.read_pages(self.grant, ids=tuple(revisions),
                                           views=("manifest",), suppressed=self.suppressed)
            found = {p.get("revision_id") for p in read.get("pages", []) if isinstance(p, dict)
                     and p.get("page_id") not in self._suppressed}
            for revision_id in revisions:
                if revision_id not in found:
                    raise NotFound(f"revision {revision_id} not found",
                                   hint="relations and the history view of pcp_read_pages "
                                   "name the revisions you can read")
        return self.backend.link_pages(self.grant, from_id=args["from_id"],
                                       relation_type=args["relation_type"], to_id=args["to_id"])

    def _tombstone_page(self, args: dict[str, Any]) -> dict[str, Any]:
        self._check_write()
        self._require_visible(args["page_id"])
        return self.backend.tombstone_page(self.grant, page_id=args["page_id"],
                                           reason=args["reason"])

    def _ingest_event(self, args: dict[str, Any]) -> dict[str, Any]:
        self._check_write()
        namespace = args["event"].get("namespace")
        if isinstance(namespace, str) and not scope_allows(self.grant, namespace):
            raise NotPermitted(
                f"namespace {namespace} is outside this client's grant",
                hint=f"ingest into a namespace inside: {', '.join(self.grant.scopes) or 'nothing'}",
            )
        return self.backend.ingest_event(self.grant, event=args["event"])

    def _propose_keystone(self, args: dict[str, Any]) -> dict[str, Any]:
        self._check_write()
        dated = {"stale_after": args["stale_after"]} if args.get("stale_after") else {}
        return self.backend.propose_keystone(self.grant, content=args["content"],
                                             category=args["category"],
                                             confidence=args["confidence"], **dated)
