"""The search index: always rebuildable, behind one interface with two engines.

Callers hand in plain `IndexDoc`s and get back `IndexHit`s. The engine is tantivy (the default,
`index/_tantivy.py`) or whoosh (pure Python, `index/_whoosh.py`); both take
the same documents, parse the same queries and apply the same `IndexFilter`, and a query finds
the same set of pages on either (their rankings may differ).

The engine is chosen per device, because the index is a cache: `PCP_INDEX_ENGINE` if set, else
the `.engine` file in the index folder (written by `pcp index --engine NAME`), else the engine
of the index already there (an index whoosh built before tantivy was the default stays
whoosh's until `pcp index --engine tantivy`), else tantivy when its package is installed (the
`fast` extra, which the README's install commands name: at 100,000 pages its search costs a
third of whoosh's and its build a sixth; bench/RESULTS.md), else whoosh.
Importing this package imports neither engine (nor the text analysis); `SearchIndex.open_or_create`
loads the chosen one on first use.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import IndexNeedsRebuild, IndexUnavailable, UsageError
from pcp_cli.index.types import (
    FORMAT_VERSION,
    IndexDoc,
    IndexFilter,
    IndexHit,
    IndexStamp,
)

if TYPE_CHECKING:
    from pcp_cli.index._whoosh import SearchIndex as _Engine
    from pcp_cli.index.text import make_snippet, query_words


def __getattr__(name: str) -> Any:
    """`make_snippet` and `query_words`, from `text` on first use: what only reads the index
    folder (`pcp status`'s `index_state`) skips compiling the analysis patterns (~4 ms)."""
    if name in ("make_snippet", "query_words"):
        from pcp_cli.index import text

        return getattr(text, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "FALLBACK_ENGINE",
    "ENGINE_ENV",
    "ENGINE_FILE",
    "FORMAT_VERSION",
    "EngineUnavailable",
    "IndexDoc",
    "IndexFilter",
    "IndexHit",
    "IndexNeedsRebuild",
    "IndexStamp",
    "SearchIndex",
    "chosen_engine",
    "choose_engine",
    "engine_of",
    "index_state",
    "make_snippet",
    "query_words",
]

ENGINES = ("whoosh", "tantivy")
FALLBACK_ENGINE = "whoosh"  # pure Python: the engine where tantivy's package is missing


def _default_engine() -> str:
    import importlib.util

    return "tantivy" if importlib.util.find_spec("tantivy") is not None else FALLBACK_ENGINE


DEFAULT_ENGINE = _default_engine()
ENGINE_ENV = "PCP_INDEX_ENGINE"
# In the index folder; a dot file, so that neither engine's rebuild clears it.
ENGINE_FILE = ".engine"
FAST_INSTALL = "pip install 'pcp-cli[fast]'"


class EngineUnavailable(IndexUnavailable):
    """The chosen engine's package is not installed (exit status 7, like any index problem)."""

    code = "index_engine_unavailable"


def _check_name(name: str, where: str) -> str:
    value = name.strip().lower()
    if value not in ENGINES:
        raise UsageError(f"Unknown search engine {name!r} ({where}).",
                         hint=f"Use one of: {', '.join(ENGINES)}.")
    return value


def chosen_engine(directory: str | os.PathLike[str]) -> tuple[str, str]:
    """(engine, where the choice came from) for the index in `directory`."""
    env = os.environ.get(ENGINE_ENV)
    if env:
        return _check_name(env, f"from {ENGINE_ENV}"), ENGINE_ENV
    path = Path(directory) / ENGINE_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        existing = _existing(directory)
        return (existing, "the index it built") if existing else (DEFAULT_ENGINE, "default")
    if text in ENGINES:
        return text, str(path)
    return DEFAULT_ENGINE, "default"  # an unreadable choice file: the cache's default


def _existing(directory: str | os.PathLike[str]) -> str | None:
    """The engine that built the index in `directory` when it is not the default one (an
    index whoosh built while it was the default is kept, not rebuilt behind the person's
    back); None when there is none, or it is the default's."""
    import json

    from pcp_cli.index.generations import META, built_by

    try:
        meta = json.loads((Path(directory) / META).read_text(encoding="utf-8"))
        engine = built_by(meta) if isinstance(meta, dict) else None
    except (OSError, ValueError):
        return None
    return engine if engine in ENGINES and engine != DEFAULT_ENGINE else None


def choose_engine(directory: str | os.PathLike[str], engine: str) -> str:
    """Record `engine` as this device's engine for the index in `directory` (the caller then
    rebuilds). Raises UsageError for an unknown name or when PCP_INDEX_ENGINE says otherwise,
    EngineUnavailable when its package is missing. Nothing is written on error."""
    name = _check_name(engine, "--engine")
    env = os.environ.get(ENGINE_ENV)
    if env and _check_name(env, f"from {ENGINE_ENV}") != name:
        raise UsageError(f"{ENGINE_ENV}={env} overrides the engine asked for ({name}).",
                         hint=f"Unset {ENGINE_ENV} to use the engine recorded in the store.")
    engine_class(name)  # fails before anything is written when the package is missing
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ENGINE_FILE
    if name == DEFAULT_ENGINE and not _existing(folder):
        path.unlink(missing_ok=True)
    else:
        tmp = folder / f"{ENGINE_FILE}.{os.getpid()}.tmp"
        tmp.write_text(name + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return name


def engine_class(name: str) -> Any:
    """The SearchIndex class of engine `name`, imported on first use."""
    if name == "tantivy":
        try:
            import tantivy  # noqa: F401
        except ImportError as exc:
            raise EngineUnavailable(
                "The tantivy search engine is chosen, but the tantivy package is not installed.",
                hint=f"Install it with: {FAST_INSTALL}  (or go back: pcp index --engine whoosh)",
            ) from exc
        from pcp_cli.index._tantivy import SearchIndex as Tantivy

        return Tantivy
    from pcp_cli.index._whoosh import SearchIndex as Whoosh

    return Whoosh


def index_state(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """What the index folder holds, from its meta.json alone (no engine is imported, nothing
    is opened): `{exists, built_by, format, documents, usable, reason}`. `built_by` is the
    engine that wrote it; `usable` says whether the chosen engine can read it as it is, and
    when not, `reason` says why (the next search or `pcp index` rebuilds it). The files
    themselves are checked when the index is opened."""
    import json

    from pcp_cli.index.generations import META, built_by, mismatch
    from pcp_cli.index.types import ENGINE_FORMATS

    engine = chosen_engine(directory)[0]
    try:
        meta = json.loads((Path(directory) / META).read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except FileNotFoundError:
        return {"exists": False, "built_by": None, "format": None, "documents": None,
                "usable": False, "reason": "the index has not been built yet"}
    except (OSError, ValueError) as exc:
        return {"exists": True, "built_by": None, "format": None, "documents": None,
                "usable": False, "reason": f"its meta file is unreadable ({exc})"}
    reason = mismatch(meta, engine, ENGINE_FORMATS[engine])
    return {"exists": True, "built_by": built_by(meta), "format": meta.get("format_version"),
            "documents": meta.get("doc_count"), "usable": reason is None, "reason": reason}


def engine_of(ix: Any) -> str:
    """The engine name of an open index."""
    return getattr(ix, "ENGINE", DEFAULT_ENGINE)


class _Factory:
    """`SearchIndex.open_or_create(directory)` opens the index with the chosen engine."""

    @staticmethod
    def open_or_create(directory: str | os.PathLike[str], *, engine: str | None = None) -> Any:
        name = _check_name(engine, "engine") if engine else chosen_engine(directory)[0]
        return engine_class(name).open_or_create(directory)


if TYPE_CHECKING:
    SearchIndex = _Engine
else:
    SearchIndex = _Factory
