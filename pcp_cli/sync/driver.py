"""The git merge driver for page head files (`pcp merge-file %O %A %B %P`).

Git calls it when both sides changed the same head file. It never writes conflict markers:

- both sides are head files exactly as pcp renders them (the usual case): keep the one naming
  the newer revision, by (updated_at, revision_id) — the same order `Store.graph_heads` sorts
  heads by — so every device that performs this merge gets the same bytes. Both revisions stay
  in `revisions/` (separate immutable files, merged by git without conflict), so the page's
  revision graph now has two heads: that *is* the record of the divergence, shared by every
  clone, and `pcp status` reports it until `pcp resolve` joins the heads.
- one side holds a hand edit not yet recorded (its body no longer matches its content_hash):
  keep that side, so the next pcp command records the edit as a revision; the other side's
  revision is already in the graph.
- anything else (both sides edited by hand, an unreadable file): leave our side untouched and
  exit 1, so git reports a conflict without markers; `pcp sync` then records both sides from
  git's index stages and rebuilds the file from the graph.

Git runs merges in memory, so the driver sees only the three head files, not the revision
files; it reads nothing else and writes only `%A`. Git runs it with the repository's top folder
as the working directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pcp_cli.errors import ExitStatus, InvalidInput, PcpError
from pcp_cli.model.ids import is_safe_id
from pcp_cli.store.atomic import write_atomic
from pcp_cli.store.headfile import parse_head


@dataclass(frozen=True)
class Side:
    raw: bytes
    kind: str  # clean | edited | bad
    revision_id: str = ""
    updated_at: str = ""

    @property
    def order(self) -> tuple[str, str]:
        return (self.updated_at, self.revision_id)


def classify(raw: bytes, path: str) -> Side:
    """Is this head file exactly what pcp rendered (clean), a hand edit (edited), or bad?"""
    name = Path(path).name
    page_id = name[:-3] if name.endswith(".md") and is_safe_id(name[:-3]) else None
    parts = Path(path).parts
    folder_ns = ":".join(parts[parts.index("pages") + 1:-1]) if "pages" in parts[:-1] else ""
    try:
        parsed = parse_head(raw, path=path, file_page_id=page_id,
                            folder_namespace=folder_ns or "x", owner_id="")
    except InvalidInput:
        return Side(raw, "bad")
    if parsed.state is None or not parsed.revision_id:
        return Side(raw, "bad")
    data = parsed.frontmatter
    updated = str(data.get("updated_at") or "")
    if data.get("content_hash") == parsed.state.content_hash and data.get("owner_id"):
        return Side(raw, "clean", str(parsed.revision_id), updated)
    return Side(raw, "edited", str(parsed.revision_id), updated)


def merge(base: bytes, ours: bytes, theirs: bytes, path: str) -> tuple[bytes, bool]:
    """The merged head file and whether the merge is clean (False: git records a conflict)."""
    if ours == theirs or base == theirs:
        return ours, True
    if base == ours:
        return theirs, True
    mine, other = classify(ours, path), classify(theirs, path)
    if mine.kind == other.kind == "clean":
        return (theirs if other.order > mine.order else ours), True
    kinds = {mine.kind, other.kind}
    if kinds == {"clean", "edited"}:
        return (ours if mine.kind == "edited" else theirs), True
    return ours, False


class NotMerged(PcpError):
    """The driver kept our side and tells git the file is not merged (git expects status 1)."""

    exit_status = ExitStatus.UNEXPECTED
    code = "head_file_not_merged"


def merge_files(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """Run the driver on git's temporary files; the result goes to `ours`.

    Raises NotMerged (exit status 1) when it could not merge without choosing."""
    result, clean = merge(base.read_bytes() if base.exists() else b"", ours.read_bytes(),
                          theirs.read_bytes(), path)
    if result != ours.read_bytes():
        write_atomic(ours, result)
    if not clean:
        raise NotMerged(
            f"{path}: both sides were changed by hand (or one is unreadable); kept ours, "
            "without conflict markers",
            hint="`pcp resolve PAGE_ID` records both sides and rebuilds the file")
