"""What each console page shows, and the writes it makes: plain data for the templates.

Reads and writes go through `pcp_cli.api`, the library the CLI calls (grants, tokens, OAuth
clients and the audit log through the MCP front end's door, `pcp_cli.mcp.commands`, as the
CLI's `pcp grant` and `pcp audit` do). Every write is one library call, recorded in the audit
log as the owner's (`commands.owner_action`) with the ids of the pages it changed.

No web framework here: `app.py` turns requests into these calls and their data into HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pcp_cli import api
from pcp_cli.errors import InvalidInput, NotFound, UsageError

# How much of a conversation surrounds an evidence sentence on the review page.
CONTEXT_CHARS = 360
NEIGHBOUR_CHARS = 240
EVIDENCE_SHOWN = 3
DECISIONS_SHOWN = 10
TIMELINE_SHOWN = 100
CALLS_SHOWN = 200
LAST_USED_BYTES = 8 * 1024 * 1024  # of the audit log's end, on the Assistants page
SEARCH_LIMIT = 25
LISTING_LIMIT = 50
REVIEW_SHOWN = 50
LEFT_OUT_SHOWN = 25  # per reason, on the profile page
# A transcript's turns: `### User · 2024-05-01 10:02` (adapters and store/events.py write them).
_TURN = re.compile(r"^### (User|Assistant|System|Note|Tool)\b(?: · ([^\n]*))?[ \t]*$", re.M)


def _mcp() -> Any:
    from pcp_cli.mcp import commands

    return commands


@contextmanager
def _store(root: Path) -> Iterator[api.Store]:
    with api.open_store(root) as store:
        yield store


@contextmanager
def _owner(root: Path, action: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    with _mcp().owner_action(root, action, params) as done:
        yield done


# -- review -----------------------------------------------------------------------------------
def _clip_left(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[len(text) - limit:].lstrip()


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def _turns(body: str) -> list[tuple[int, int, str, str]]:
    """(start, end, who, when) of each turn of a transcript; one turn for any other text."""
    found = list(_TURN.finditer(body))
    if not found:
        return [(0, len(body), "", "")]
    turns = []
    if found[0].start() > 0:
        turns.append((0, found[0].start(), "", ""))
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(body)
        turns.append((match.end(), end, match.group(1), (match.group(2) or "").strip()))
    return turns


def evidence_context(body: str, start: int, end: int) -> dict[str, Any] | None:
    """The evidence sentence body[start:end] inside its turn, with the turns around it:
    `{before: {who, when, text}?, turn: {who, when, before, match, after}, after: {...}?}`."""
    if not (0 <= start < end <= len(body)):
        return None
    turns = _turns(body)
    index = next((i for i, (s, e, _w, _d) in enumerate(turns) if s <= start < e), None)
    if index is None:
        return None
    s, e, who, when = turns[index]
    out: dict[str, Any] = {"turn": {
        "who": who, "when": when,
        "before": _clip_left(body[s:start].lstrip(), CONTEXT_CHARS),
        "match": body[start:end],
        "after": clip(body[end:e].rstrip(), CONTEXT_CHARS)}}
    if index > 0 and turns[index - 1][2]:
        ps, pe, pwho, pwhen = turns[index - 1]
        out["previous"] = {"who": pwho, "when": pwhen,
                           "text": _clip_left(body[ps:pe].strip(), NEIGHBOUR_CHARS)}
    if index + 1 < len(turns):
        ns, ne, nwho, nwhen = turns[index + 1]
        out["next"] = {"who": nwho, "when": nwhen,
                       "text": clip(body[ns:ne].strip(), NEIGHBOUR_CHARS)}
    return out


def _evidence(store: api.Store, spans: Sequence[dict[str, Any]],
              cache: dict[tuple[str, str], Any]) -> list[dict[str, Any]]:
    shown = []
    for span in spans[:EVIDENCE_SHOWN]:
        page_id, revision_id = str(span.get("page_id") or ""), str(span.get("revision_id") or "")
        item: dict[str, Any] = {"page_id": page_id, "revision_id": revision_id,
                                "text": str(span.get("text") or ""), "title": page_id,
                                "date": "", "context": None}
        key = (page_id, revision_id)
        if key not in cache:
            try:
                cache[key] = store.get(page_id, revision_id or None)
            except Exception:  # a page deleted since, or a revision not on this device
                cache[key] = None
        revision = cache[key]
        if revision is not None:
            item["title"] = revision.state.title or page_id
            item["date"] = (revision.observed_at or revision.created_at or "")[:10]
            start, end = span.get("start"), span.get("end")
            if isinstance(start, int) and isinstance(end, int):
                item["context"] = evidence_context(revision.state.content, start, end)
        shown.append(item)
    return shown


def _superseded(store: api.Store, page_id: Any) -> dict[str, Any] | None:
    if not isinstance(page_id, str) or not page_id:
        return None
    entry = api.page_entry(store, page_id)
    if entry is None:
        return {"page_id": page_id, "title": "(not in this store)", "content": ""}
    try:
        content = store.current(page_id).state.content.strip()
    except Exception:
        content = ""
    return {"page_id": page_id, "title": entry.title, "content": content}


def review(root: Path, *, start: int = 0) -> dict[str, Any]:
    """The queue grouped by category (groups in name order, oldest first within one), numbered
    as `pcp review` numbers it; `REVIEW_SHOWN` of them from `start` on, each with its evidence
    in context and what it would supersede; the last decisions. Only the window's evidence is
    read: a queue of hundreds (a first `pcp propose` over years of conversations) is not
    rebuilt whole after every key."""
    with _store(root) as store:
        flat = [(label, item) for label, group in api.queue_groups(api.review_queue(store))
                for item in group]
        start = max(0, min(start, max(0, len(flat) - 1)))
        window = flat[start:start + REVIEW_SHOWN]
        cache: dict[tuple[str, str], Any] = {}
        groups: list[tuple[str, list[dict[str, Any]]]] = []
        for number, (label, item) in enumerate(window, start + 1):
            if not groups or groups[-1][0] != label:
                groups.append((label, []))
            groups[-1][1].append({**_shown(store, item, cache), "number": number})
        sizes: dict[str, int] = {}
        for label, _item in flat:
            sizes[label] = sizes.get(label, 0) + 1
        decisions = api.review_decisions(store, limit=DECISIONS_SHOWN)
    order = [item["page_id"] for _label, item in flat]
    return {"groups": groups, "count": len(flat), "decisions": decisions, "sizes": sizes,
            "start": start, "end": start + len(window),
            "previous": max(0, start - REVIEW_SHOWN) if start else None,
            "next": start + REVIEW_SHOWN if start + REVIEW_SHOWN < len(flat) else None,
            # the proposal after each one, so a decision's page shows the next at once
            "following": dict(zip(order, [*order[1:], ""], strict=True))}


def _shown(store: api.Store, item: dict[str, Any],
           cache: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """A proposal with its evidence in context and what it would supersede."""
    spans = item.get("source_spans") or []
    return {**item, "evidence": _evidence(store, spans, cache),
            "more_evidence": max(0, len(spans) - EVIDENCE_SHOWN),
            "superseded": _superseded(store, item.get("supersedes"))}


def waiting(root: Path) -> int:
    """How many proposals await review."""
    with _store(root) as store:
        return len(api.review_queue(store))


def proposal(root: Path, page_id: str) -> dict[str, Any]:
    """One proposal, for the edit form."""
    with _store(root) as store:
        for item in api.review_queue(store):
            if item["page_id"] == page_id:
                return _shown(store, item, {})
    raise NotFound(f"proposal {page_id} is not awaiting review",
                   hint="it was decided meanwhile, or never was one")


def decide(root: Path, decision: str, page_ids: Sequence[str], *,
           reason: str | None = None) -> list[str]:
    """Accept or reject proposals (every id checked to be waiting before any is changed);
    the claims decided, in order."""
    if decision not in ("accept", "reject"):
        raise UsageError(f"unknown decision {decision!r}")
    if not page_ids:
        raise UsageError("no proposal was selected", hint="tick the proposals first")
    with _owner(root, f"review_{decision}", {"ids": list(page_ids)}) as done, \
            _store(root) as store:
        waiting = {item["page_id"]: str(item.get("content") or "").strip()
                   for item in api.review_queue(store)}
        missing = [p for p in page_ids if p not in waiting]
        if missing:
            raise UsageError(f"{missing[0]} is not awaiting review (decided meanwhile?)",
                             hint="nothing was changed; reload the page")
        for page_id in dict.fromkeys(page_ids):
            if decision == "accept":
                api.accept_proposal(store, page_id)
            else:
                api.reject_proposal(store, page_id, reason=reason)
            done["page_ids"].append(page_id)
    return [waiting[p] for p in done["page_ids"]]


def accept_edited(root: Path, page_id: str, *, content: str | None, category: str | None,
                  sensitivity: str | None, date: str | None,
                  stale_after: str | None = None) -> str:
    """Accept `page_id` as the person edited it; an empty field keeps what was proposed
    (`stale_after`: a day, or "never")."""
    with _owner(root, "review_accept", {"ids": [page_id], "edited": True}) as done, \
            _store(root) as store:
        current = store.current(page_id).state.content.strip()
        text = content if content is not None and content.strip() != current else None
        api.accept_proposal(store, page_id, content=text, category=category or None,
                            sensitivity=sensitivity or None, date=date or None,
                            stale_after=stale_after or None)
        done["page_ids"].append(page_id)
    return page_id


def withdraw(root: Path, page_id: str | None) -> dict[str, Any]:
    """Take back the decision on `page_id`, or the newest decision."""
    with _owner(root, "review_undo", {"id": page_id}) as done, _store(root) as store:
        result = (api.withdraw_decision(store, page_id) if page_id
                  else api.undo_decision(store))
        done["page_ids"] += [result["page_id"], *result["restored"]]
    return result


# -- pages ------------------------------------------------------------------------------------
def namespaces(root: Path) -> list[str]:
    with _store(root) as store:
        return [s["namespace"] for s in api.list_scopes(store).get("scopes", [])
                if isinstance(s, dict) and s.get("namespace")]


def search(root: Path, query: str, *, sensitive: bool, superseded: bool,
           namespace: str | None, cursor: str | None) -> dict[str, Any]:
    """A search with the safeguards a client gets, and their toggles; with no query, the
    newest pages."""
    with _store(root) as store:
        if query.strip():
            data = api.search(store, query, limit=SEARCH_LIMIT, include_sensitive=sensitive,
                              include_superseded=superseded,
                              scopes=[namespace] if namespace else None, cursor=cursor)
            hits = []
            for hit in data["results"]:
                own = (hit.get("extensions") or {}).get("org.pcp-cli") or {}
                page_id = own.get("page_id") or hit["id"]
                entry = api.page_entry(store, page_id)
                hits.append({**hit, "page_id": page_id,
                             "title": entry.title if entry else page_id,
                             "namespace": (own.get("scope") or {}).get("namespace"),
                             "lifecycle_status": own.get("lifecycle_status")})
            return {"query": query, "hits": hits, "next_cursor": data.get("next_cursor"),
                    "filters_applied": data.get("filters_applied") or {}, "listing": False}
        statuses = ("active", "superseded", "archived") if superseded else ("active",)
        entries, next_cursor = api.list_page_window(
            store, namespaces=[namespace] if namespace else (), statuses=statuses,
            limit=LISTING_LIMIT, cursor=cursor,
            sensitivities=None if sensitive else (*api.SERVED_SENSITIVITIES, None))
        hits = [{**api.entry_summary(e), "title": e.title, "snippet": ""} for e in entries]
        return {"query": "", "hits": hits, "next_cursor": next_cursor, "filters_applied": {},
                "listing": True}


def page(root: Path, page_id: str, *, rev_a: str | None, rev_b: str | None) -> dict[str, Any]:
    """A page: its current text and fields, its history (and a diff between two revisions),
    its relations with the titles at their other end, its provenance."""
    with _store(root) as store:
        found = api.find_page(store, page_id)
        data = api.read_page(store, found)["page"]
        history = api.read_page(store, found, view="history")["history"]
        relations = []
        for rel in api.read_page(store, found, view="relations")["relations"]:
            other = rel["to_page_id"] if rel["from_page_id"] == found else rel["from_page_id"]
            entry = api.page_entry(store, other)
            relations.append({**rel, "other": other, "outgoing": rel["from_page_id"] == found,
                              "other_title": entry.title if entry else "(not in this store)"})
        diff = None
        if len(history) > 1 or rev_a:
            try:
                diff = api.diff_revisions(store, found, rev_a or None, rev_b or None)
            except (UsageError, InvalidInput, NotFound) as exc:  # the page is still shown
                diff = {"error": exc.message}
    return {"page": data, "history": list(reversed(history)), "relations": relations,
            "diff": diff, "page_id": found}


def timeline(root: Path, *, sensitive: bool, cursor: str | None) -> dict[str, Any]:
    with _store(root) as store:
        data = api.timeline(store, limit=TIMELINE_SHOWN, include_sensitive=sensitive,
                            cursor=cursor)
    return data


def profile(root: Path) -> dict[str, Any]:
    """The profile object and the micro_prompt exactly as a client receives them (a grant over
    the whole store), with what the micro_prompt left out and why."""
    with _store(root) as store:
        profile_object = api.profile_text(store, "json")
        micro = api.profile_text(store, "micro_prompt")
        report = api.micro_prompt_report(store, per_reason=LEFT_OUT_SHOWN)
    fields = [(k, v) for k, v in profile_object.items()
              if k not in ("schema_version", "generated_at", "extensions")]
    reasons: dict[str, list[dict[str, Any]]] = {}
    for item in report["left_out"]:
        reasons.setdefault(str(item["reason"]), []).append(item)
    return {"fields": fields, "generated_at": profile_object.get("generated_at"),
            "micro_prompt": micro, "length": len(str(micro)), "report": report,
            "reasons": [(reason, items, report["left_out_counts"][reason])
                        for reason, items in reasons.items()]}


# -- assistants -------------------------------------------------------------------------------
def assistants(root: Path) -> dict[str, Any]:
    """Every grant with its tokens and OAuth client, what it may read, when it was last used;
    the OAuth clients registered. "Last used" and the clients seen without a grant come from
    the newest `LAST_USED_BYTES` of the audit log (it is never pruned: reading all of it cost
    ~4 s of CPU at 110 MB); `since` is the oldest time read when that was not all of it."""
    commands = _mcp()
    grants = commands.grant_list(root)
    records, whole = commands.audit_newest(root, max_bytes=LAST_USED_BYTES)
    last: dict[str, dict[str, Any]] = {}
    for record in records:
        client = record.get("client_id")
        if isinstance(client, str) and client not in last:
            last[client] = record
    for grant in grants:
        record = last.get(grant["client_id"])
        grant["last_used"] = record.get("time") if record else None
        grant["last_tool"] = record.get("tool") if record else None
    return {"grants": grants, "oauth_clients": commands.oauth_clients(root),
            "since": None if whole or not records else records[-1].get("time"),
            "others": sorted(c for c in last if c not in {g["client_id"] for g in grants}
                             and c != commands.CONSOLE_CLIENT)}


def assistant(root: Path, client_id: str) -> dict[str, Any]:
    """One client: its grant (if it still has one) and its newest `CALLS_SHOWN` calls, newest
    first, each with the ids and titles of the pages it returned; `more` when it made others
    (read from the audit log's end: only as far back as those calls)."""
    commands = _mcp()
    grant = next((g for g in commands.grant_list(root) if g["client_id"] == client_id), None)
    calls, whole = commands.audit_newest(root, client=client_id, limit=CALLS_SHOWN)
    if grant is None and not calls:
        raise NotFound(f"no assistant {client_id}: no grant and no call in the audit log")
    with _store(root) as store:
        titles: dict[str, str | None] = {}
        for call in calls:
            pages = []
            for page_id in call.get("page_ids") or []:
                if page_id not in titles:
                    entry = api.page_entry(store, page_id)
                    titles[page_id] = entry.title if entry else None
                pages.append({"page_id": page_id, "title": titles[page_id]})
            call["pages"] = pages
    return {"client_id": client_id, "grant": grant, "calls": calls, "more": not whole}


def revoke_tokens(root: Path, client_id: str) -> dict[str, Any]:
    with _owner(root, "grant_revoke_tokens", {"client_id": client_id}):
        return dict(_mcp().grant_revoke_tokens(root, client_id))


def remove_grant(root: Path, client_id: str) -> dict[str, Any]:
    with _owner(root, "grant_remove", {"client_id": client_id}):
        return dict(_mcp().grant_remove(root, client_id))


# -- health -----------------------------------------------------------------------------------
def health(root: Path, *, doctor: bool) -> dict[str, Any]:
    """`pcp status`, `pcp doctor`'s findings (when asked: it reads every file), the index and
    monitor, the capture queue, the last imports."""
    from pcp_cli.capture import queue

    with _store(root) as store:
        status = api.sync_status(store)
        findings = [f.to_dict() if hasattr(f, "to_dict") else dict(vars(f))
                    for f in api.check_store(store)] if doctor else None
        imports = api.import_sources(store)
        stats = api.stats(store, include_sensitive=True)
    return {"status": status, "findings": findings, "monitor": api.monitor_status(root),
            "queue": queue.status(root), "imports": sorted(
                ({"path": path, **info} for path, info in imports.items()),
                key=lambda i: str(i.get("last_import") or ""), reverse=True),
            "stats": stats}


def queue_action(root: Path, action: str, name: str) -> dict[str, Any]:
    """Retry or drop one session waiting in the capture queue (`agent:session`): a drop is
    `pcp hooks drop`'s call (a retry has no command: the worker retries on its own)."""
    from pcp_cli.capture import queue

    if action not in ("retry", "drop"):
        raise UsageError(f"unknown queue action {action!r}")
    with _owner(root, f"capture_{action}", {"session": name}):
        if action == "retry":
            return queue.retry(root, name)
        done = queue.drop_sessions(root, [name])
        if done["unknown"]:
            raise NotFound(f"nothing of {name} waits in the capture queue",
                           hint="it was imported or dropped meanwhile")
        return done
