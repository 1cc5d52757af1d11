"""Where a Markdown import's CPU goes, step by step, and one import's user/system CPU split.

    python bench/import_profile.py FOLDER            # steps, then one import into a new store
    python bench/import_profile.py FOLDER --profile  # the import under cProfile (top 40)
    PYTHONPATH=OTHER_CHECKOUT python bench/import_profile.py FOLDER   # the same for another

`steps`: each step of importing the Markdown files under FOLDER run alone over all of them, in
process (`time.process_time` per page): parsing the note, its frontmatter, building the item and
the page state, the revision and its hash, the revision JSON, the head file, parsing a head file
back. `import`: one `api.import_path` of FOLDER into a new store in a temporary folder, with
fsync as pcp runs it: wall time, pages/s, user and system CPU per page (`--no-fsync` turns fsync
into a no-op, diagnosis only). Run it with two checkouts in turn for before/after numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def steps(folder: Path, scratch: Path) -> None:
    from pcp_cli.adapters import markdown
    from pcp_cli.adapters.writer import _Writer
    from pcp_cli.model.page import Actor, file_json
    from pcp_cli.store import frontmatter
    from pcp_cli.store.headfile import frontmatter_for, render_head
    from pcp_cli.store.store import Store, page_id_for_key
    from pcp_cli.store.writes import new_revision

    store = Store.init(scratch / "steps", owner_id="bench")
    files = sorted(folder.rglob("*.md"))
    texts = [f.read_bytes().decode("utf-8") for f in files]

    def step(label: str, function: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        began = time.process_time()
        out = [function(item) for item in items]
        print(f"  {label:34s} {(time.process_time() - began) / len(items) * 1e6:7.1f} µs/page")
        return out

    print(f"steps ({len(files)} notes, CPU per page):")
    blocks = [t.split("\n---\n", 1)[0][4:] + "\n" for t in texts if t.startswith("---\n")]
    if blocks:
        step("frontmatter (load_mapping)",
             lambda b: frontmatter.load_mapping(b, "frontmatter", first_line=2), blocks)
    parsed = step("parse_note (incl. frontmatter)", markdown.parse_note, texts)
    resolver = markdown._Resolver([f.relative_to(folder).as_posix() for f in files])
    items = step("_item", lambda fp: markdown._item(
        fp[0], fp[0].relative_to(folder).as_posix(), fp[1], resolver),
        list(zip(files, parsed, strict=True)))
    writer = _Writer(store, fmt="markdown", namespace=None, dry_run=True, source=str(folder),
                     actor=None)
    states = step("page state (new_state, checks)", writer._state, items)
    states = [s.evolve(page_id=page_id_for_key(i.key)) for s, i in zip(states, items, strict=True)]
    step("check_state", store.check_state, states)
    revisions = step("revision (incl. content hash)", lambda s: new_revision(
        s, actor=Actor("tool", "bench"), operation="import", idempotency_key="k", note="n"),
        states)
    dicts = [r.to_dict() for r in revisions]
    step("revision JSON (file_json)", file_json, dicts)
    fields = [frontmatter_for(r) for r in revisions]
    step("head frontmatter (dump_mapping)", frontmatter.dump_mapping, fields)
    heads = step("head file (render_head)", render_head, revisions)
    step("parse a head file (split)", lambda h: frontmatter.split(h, "head.md"), heads)
    store.close()


def one_import(folder: Path, scratch: Path, profile: bool) -> None:
    from pcp_cli import api
    from pcp_cli.store.store import Store

    root = scratch / "store"
    Store.init(root, owner_id="bench").close()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    before = resource.getrusage(resource.RUSAGE_SELF)
    began = time.perf_counter()
    if profiler:
        profiler.enable()
    with api.open_store(root) as store:
        summary = api.import_path(store, folder)
    if profiler:
        profiler.disable()
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_SELF)
    pages = summary["created"] + summary["revised"] + summary["unchanged"]
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    from pcp_cli.store import atomic

    syncs = dict(getattr(atomic, "SYNCS", {}))  # which sync path ran (a baseline has none)
    print(f"import: {pages} pages, {summary['failed']} failed, {wall:.2f} s wall, "
          f"{pages / wall:.0f} pages/s; CPU per page {user / pages * 1e3:.2f} ms user + "
          f"{system / pages * 1e3:.2f} ms system; load {os.getloadavg()[0]:.1f}; "
          f"group commit syncs {syncs or 'none'}")
    if profiler:
        import pstats

        pstats.Stats(profiler).sort_stats("tottime").print_stats(40)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of Markdown notes")
    parser.add_argument("--profile", action="store_true", help="the import under cProfile")
    parser.add_argument("--no-fsync", action="store_true", help="diagnosis: fsync as a no-op")
    parser.add_argument("--skip-steps", action="store_true", help="only the import")
    args = parser.parse_args()
    if "pcp_cli" not in sys.modules and not os.environ.get("PYTHONPATH"):
        sys.path.insert(0, str(ROOT))
    if args.no_fsync:
        os.fsync = lambda fd: None
    with tempfile.TemporaryDirectory() as scratch:
        if not args.skip_steps:
            steps(args.folder, Path(scratch))
        one_import(args.folder, Path(scratch), args.profile)


if __name__ == "__main__":
    main()
