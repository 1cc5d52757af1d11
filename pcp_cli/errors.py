"""The errors pcp reports on purpose, and the exit status each one maps to.

The library raises these and never prints or exits; the CLI's single error funnel and the MCP
server turn them into messages. This module imports nothing from the package.

Most live here. The others live in the module that raises them, each a subclass of one here
(whose exit status it keeps unless it says otherwise); tests/test_layers.py checks this list,
and that each module raises what it defines:

- model/jsonlimit.py: DepthError (InvalidInput)
- store/refs.py: AmbiguousPage (UsageError)
- index/__init__.py: EngineUnavailable (IndexUnavailable)
- query/cursor.py: StaleCursor, BadCursor (UsageError)
- sync/git.py: GitError, NoGitIdentity (UsageError)
- sync/sync.py: GitBusy (exit 4), RemoteFailed (exit 10)
- sync/driver.py: NotMerged
- mcp/session.py: NotPermitted, UnknownTool (InvalidInput), InternalError, TimedOut
- mcp/store_backend.py: GrantViolation
- mcp/audit.py: AuditUnavailable

Exceptions that never reach a person are caught where they are raised, beside the code that
raises them (model/check.py's FieldError, store/peek.py's CatalogNeeded, adapters/markdown.py's
FrontmatterError, mcp/fanout.py's SourceFailed, mcp/oauth.py's ConsentRefused, the parsers'
_Unusual).
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    UNEXPECTED = 1
    USAGE = 2
    NOT_FOUND = 3
    CONFLICT = 4
    INVALID_INPUT = 5
    LOCKED = 6
    INDEX_UNAVAILABLE = 7
    STORE_DAMAGED = 8
    IMPORT_FAILED = 9
    REMOTE_FAILED = 10
    STORAGE_FAILED = 11


class PcpWarning(UserWarning):
    """Something pcp repaired on its own and the person should know about (stderr, once)."""


class PcpNotice(UserWarning):
    """Something about how pcp runs here the person should know once (stderr, `Note: …`): a
    store that falls back to a slower way, and why."""


class PcpError(Exception):
    """Base class: a message for the person, an optional hint, and an exit status."""

    exit_status: ExitStatus = ExitStatus.UNEXPECTED
    code: str = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_json(self) -> dict[str, object]:
        return {
            "error": {
                "code": self.code,
                "message": self.message,
                "hint": self.hint,
                "exit_status": int(self.exit_status),
            }
        }


class UsageError(PcpError):
    exit_status = ExitStatus.USAGE
    code = "usage"


class NotFound(PcpError):
    exit_status = ExitStatus.NOT_FOUND
    code = "not_found"


class StoreNotFound(NotFound):
    code = "store_not_found"


class RevisionConflict(PcpError):
    exit_status = ExitStatus.CONFLICT
    code = "revision_conflict"

    def __init__(
        self, message: str, *, expected: str, current: str, hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.expected = expected
        self.current = current


class IdempotencyConflict(RevisionConflict):
    """The same idempotency key arrived again with different content: never a silent repeat
    (a page written with the key, or an ingested event). Exit status 4, like any conflict."""

    code = "idempotency_conflict"

    def __init__(self, message: str, *, page_id: str | None = None, current: str = "",
                 hint: str | None = None) -> None:
        super().__init__(message, expected="(the content first sent with this key)",
                         current=current, hint=hint)
        self.page_id = page_id


class InvalidInput(PcpError):
    """Bad data from outside: a file, an argument value, an import."""

    exit_status = ExitStatus.INVALID_INPUT
    code = "invalid_input"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        path: str | None = None,
        line: int | None = None,
        details: list[str] | None = None,
    ) -> None:
        where = path if path is None or line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message, hint=hint)
        self.path = path
        self.line = line
        self.details = details or []

    def to_json(self) -> dict[str, object]:
        data = super().to_json()
        error = data["error"]
        assert isinstance(error, dict)
        error.update({"path": self.path, "line": self.line, "details": self.details})
        return data


class StoreLocked(PcpError):
    exit_status = ExitStatus.LOCKED
    code = "store_locked"


class IndexUnavailable(PcpError):
    exit_status = ExitStatus.INDEX_UNAVAILABLE
    code = "index_unavailable"


class IndexNeedsRebuild(IndexUnavailable):
    """The search index on disk cannot be trusted (corrupt, incomplete, other format, out of step).

    The caller should call `SearchIndex.rebuild(...)` from the store and retry. If it does not,
    this still surfaces as exit status 7 with a hint, because it is an `IndexUnavailable`.
    """

    code = "index_needs_rebuild"

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"The search index needs to be rebuilt: {reason}",
            hint="Run `pcp index --rebuild`; the index is a cache rebuilt from the store's files.",
        )
        self.reason = reason


class SemanticUnavailable(UsageError):
    """`mode: semantic | hybrid` asked for, and the semantic extra is not installed (or its
    model would not load)."""

    code = "semantic_unavailable"


class StoreDamaged(PcpError):
    exit_status = ExitStatus.STORE_DAMAGED
    code = "store_damaged"


class ImportFailed(PcpError):
    """An import ran but some items failed; the summary says which."""

    exit_status = ExitStatus.IMPORT_FAILED
    code = "import_failed"


class StorageFailed(PcpError):
    """The disk refused a write (full, I/O error, read-only): the message names the file that
    failed and what state the store was left in."""

    exit_status = ExitStatus.STORAGE_FAILED
    code = "storage_failed"
