"""Build store_layout/example/ from the Ada Lumen persona of the PCP v1 example archive.

    python tools/build_example.py PATH/TO/full-archive.example.json

Writes through the library like any user would, with timestamps pinned to the persona's story,
so the example is a real store. Rebuilding gives new revision ids; commit the result.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pcp_cli import api  # noqa: E402
from pcp_cli.store import lifecycle  # noqa: E402
from pcp_cli.store.store import Store  # noqa: E402

OUT = ROOT / "store_layout" / "example"


def at(timestamp: str) -> None:
    os.environ["PCP_NOW"] = timestamp


def main(archive_path: str) -> None:
    archive = json.loads(Path(archive_path).read_text("utf-8"))
    if OUT.exists():
        shutil.rmtree(OUT)
    at("2025-09-01T08:00:00.000Z")
    store = Store.init(OUT, owner_id="ada-lumen", namespace="user:ada-lumen")
    # The .gitignore of a real store keeps .pcp/ out of git; the example ships without one.
    for ks in archive["keystones"]:
        at(ks["created_at"].replace("Z", ".000Z"))
        api.add_keystone(
            store, ks["content"], category=ks["category"], confidence=ks["confidence"],
            importance=ks["importance"], source=ks["source"], page_id=ks["id"],
            created_at=ks["created_at"], last_confirmed_at=ks["last_confirmed_at"],
            extensions=ks["extensions"],
        )
    at("2026-01-14T10:00:00.000Z")
    api.add_keystone(
        store,
        "Prefers Svelte 5 + D3 with TypeScript and small dependency footprints; avoids heavy "
        "frameworks.",
        category="preference", confidence=1, importance=0.7, source="user_stated",
        page_id="ks-008", supersedes="ks-003",
        extensions={"com.example.mood": {"energy": "calm", "tags": ["focus"]}},
    )
    at("2026-01-14T10:05:00.000Z")
    api.add_keystone(
        store, "Ada seems to prefer dark-mode dashboards.", category="preference",
        confidence=0.4, source="inferred", page_id="ks-p01", proposed=True,
    )
    for event in archive["timeline_events"]:
        at("2026-01-02T12:00:00.000Z")
        api.add_timeline_event(
            store, event["date"], event["summary"], category=event["category"],
            source=event["source"], confidence=event["confidence"], page_id=event["id"],
            extensions=event["extensions"],
        )
    at("2026-01-15T09:00:00.000Z")
    profile = archive["profile"]
    for field in ("name", "profession", "primary_focus", "summary", "communication_style",
                  "working_style", "tools_and_workflows", "how_interacts_with_ai"):
        api.set_profile_field(store, field, profile[field])
    for field in ("domain_expertise", "values"):
        api.set_profile_field(store, field, "; ".join(profile[field]))

    notes = [
        ("2025-11-20T17:30:00.000Z", "tidewatch-architecture", "Tidewatch architecture notes",
         "project:tidewatch", "low", ["tidewatch", "architecture"],
         "Tidewatch ingests sensor readings every ten minutes from three community networks.\n\n"
         "- SvelteKit front end, D3 for the tide and temperature charts\n"
         "- A small Python/pandas job cleans the readings and flags sensor drift\n"
         "- Everything is static files on a CDN; no database until the beta needs one\n"),
        ("2025-12-03T09:15:00.000Z", "newsletter-ideas", "Salt & Signal: issue ideas",
         "user:ada-lumen", "low", ["newsletter", "writing"],
         "Ideas for the next issues of Salt & Signal:\n\n"
         "1. Why tide gauges disagree: datums explained with one chart\n"
         "2. Reading sea-surface temperature anomalies without panic\n"
         "3. A field guide to community sensor networks\n"),
        ("2025-12-10T21:00:00.000Z", "health-notes", "Private: energy and health",
         "user:ada-lumen", "high", ["private"],
         "Doctor's advice after the November check-up: keep the 25-hour week, walk every "
         "morning before deep work, and take the full two weeks off in January.\n"),
        ("2026-01-05T08:45:00.000Z", "client-checklist", "Client delivery checklist",
         "user:ada-lumen", "medium", ["freelance", "checklist"],
         "Before handing a dashboard to a nonprofit client:\n\n"
         "- Test it against their real data export, not the sample\n"
         "- Check colour contrast and keyboard navigation\n"
         "- Write a one-page README for their staff\n"),
        ("2026-01-08T19:20:00.000Z", "reading-notes-zh", "读书笔记：适者生存",
         "user:ada-lumen", "low", ["reading"],
         "达尔文的原话常被误解：所谓「即适者生存」，说的是最适应环境的个体更可能存活，"
         "而不是最强者。这和社区传感器网络的演化很像。\n"),
    ]
    for timestamp, page_id, title, namespace, sensitivity, tags, body in notes:
        at(timestamp)
        api.add_page(store, body, page_type="note", title=title, namespace=namespace,
                     sensitivity=sensitivity, tags=tags, page_id=page_id)

    at("2026-01-09T16:00:00.000Z")
    transcript = (
        "### User · 2026-01-09 15:52\n\n"
        "I want the Tidewatch tide chart to stay readable on a phone. Keep the build simple: "
        "one command, no flags.\n\n"
        "### Assistant · 2026-01-09 15:53\n\n"
        "Agreed. Before changing the chart, my assumptions about the data: readings every ten "
        "minutes, gaps marked as null, heights in metres above chart datum. I'd draw the last 48 "
        "hours with D3 and thin the points on small screens.\n\n"
        "### User · 2026-01-09 15:57\n\n"
        "Right assumptions. Ship the 48-hour view first, we can add the weekly one later.\n"
    )
    api.add_page(store, transcript, page_type="conversation",
                 title="Tidewatch: mobile tide chart", namespace="project:tidewatch",
                 origin="recorded", tags=["tidewatch"], page_id="conv-tidewatch-mobile",
                 record={"source_system": "claude", "started_at": "2026-01-09T15:52:00Z",
                         "message_count": 3})
    at("2026-01-09T16:05:00.000Z")
    lifecycle.link(store, "conv-tidewatch-mobile", "related_to", "tidewatch-architecture")
    lifecycle.link(store, "tidewatch-architecture", "depends_on", "ks-002")
    # A conversation in which Ada says things about herself that no keystone holds yet: what
    # the README's tour runs `pcp propose` on (the assistant's paraphrase and the
    # hypothetical are not taken).
    at("2026-01-12T09:30:00.000Z")
    rhythm = (
        "### User · 2026-01-12 09:10\n\n"
        "Quick planning help. For context, I moved to Lisbon in October 2025, and my partner "
        "Inês works nights, so my days start later now. No calls before 11:00 for me. "
        "Can you draft a weekly rhythm for client calls?\n\n"
        "### Assistant · 2026-01-12 09:11\n\n"
        "Here is a draft: calls Tuesday and Thursday 14:00-17:00 Lisbon time, focused work every "
        "day. You said you live in Porto, so I assumed Western European Time.\n\n"
        "### User · 2026-01-12 09:15\n\n"
        "Lisbon, not Porto. I use Observable notebooks for quick sketches. If I were an early "
        "bird I would take more calls.\n"
    )
    api.add_page(store, rhythm, page_type="conversation", title="Planning a weekly rhythm",
                 namespace="user:ada-lumen", origin="recorded", tags=["planning"],
                 page_id="conv-weekly-rhythm",
                 record={"source_system": "chatgpt", "started_at": "2026-01-12T09:10:00Z",
                         "message_count": 3})
    store.close()
    shutil.rmtree(OUT / ".pcp", ignore_errors=True)
    (OUT / ".gitignore").unlink(missing_ok=True)
    del os.environ["PCP_NOW"]


if __name__ == "__main__":
    main(sys.argv[1])
