"""`pcp hooks …` (each coding-agent session reaches the store when it ends) and `pcp watch`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, table, text

AgentArg = Annotated[str, typer.Argument(metavar="AGENT", help="claude-code or codex.")]

hooks_app = typer.Typer(
    help="Import each Claude Code or Codex session into the store when it ends, through the "
    "agent's own hooks (see docs/hooks.md).",
    no_args_is_help=True,
)


def _store_root(store_path: str | None) -> Path:
    from pcp_cli.config import resolve_store_root

    return resolve_store_root(store_path)


@hooks_app.command("install", epilog=examples(
    "pcp hooks install claude-code", "pcp hooks install codex --store ~/context"))
def hooks_install(agent: AgentArg, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Add pcp's hook to the agent's configuration (~/.claude/settings.json: SessionEnd and
    PreCompact; ~/.codex/config.toml: notify), for this store. Everything else in the file is
    kept, a backup is written beside it, and installing again changes nothing."""
    from pcp_cli.capture import agents

    agents.check_agent(agent)
    out = agents.install(agent, _store_root(store_path))

    def human() -> None:
        if out["changed"]:
            text(f"installed the {agent} hook in {out['config']}")
            if out["backup"]:
                note(f"the previous file is kept as {out['backup']}")
        else:
            text(f"the {agent} hook is already installed in {out['config']}")

    emit(out, as_json, human)


@hooks_app.command("uninstall", epilog=examples(
    "pcp hooks uninstall", "pcp hooks uninstall codex", "pcp hooks uninstall --store ~/context"))
def hooks_uninstall(
    agent: Annotated[str | None, typer.Argument(
        metavar="[AGENT]", help="claude-code or codex (default: both).")] = None,
    store_path: Annotated[str | None, typer.Option(
        "--store", metavar="PATH", help="Only where the hook is installed for this store "
        "(PCP_STORE is not read here: without --store, the hook goes whatever its store).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Take pcp's hook out of the agent's configuration, and nothing else."""
    from pcp_cli.capture import agents

    names = [agents.check_agent(agent)] if agent else list(agents.AGENTS)
    root = Path(store_path).expanduser().resolve() if store_path else None
    out = [agents.uninstall(name, root) for name in names]

    def human() -> None:
        for item in out:
            if item["changed"]:
                text(f"removed the {item['agent']} hook from {item['config']}")
            elif item["other_store"]:
                text(f"left the {item['agent']} hook in {item['config']}: it imports into "
                     f"{item['other_store']}, not {root}")
            else:
                text(f"no {item['agent']} hook in {item['config']}")

    emit(out, as_json, human)


@hooks_app.command("status", epilog=examples("pcp hooks status", "pcp hooks status --json"))
def hooks_status(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Which agents run pcp's hook, what is waiting to be imported, and what keeps failing
    (retried by every later hook run until it succeeds)."""
    from pcp_cli.capture import agents, queue

    root = _store_root(store_path)
    out = {"store": str(root), "agents": [agents.installed(a) for a in agents.AGENTS],
           **queue.status(root)}

    def human() -> None:
        table(("agent", "installed", "store", "config"),
              ((a["agent"], "error: " + a["error"] if a["error"] else
                "yes" if a["installed"] else "no", a["store"] or "", a["config"])
               for a in out["agents"]))
        text(f"{out['queued']} queued for import" + (
            f" ({', '.join(out['sessions_waiting'])})" if out["sessions_waiting"] else ""))
        for fail in out["failing"]:
            text(f"failing: {fail['agent']}:{fail['session']} ({fail['attempts']} attempts): "
                 f"{fail['error']}")
            if not fail.get("file_exists"):
                text(f"  its session file is gone: `pcp hooks drop {fail['agent']}:"
                     f"{fail['session']}` stops retrying it (`--gone` drops every such one)")
        text(f"log: {out['log']}")

    emit(out, as_json, human)


@hooks_app.command("drop", context_settings={"allow_extra_args": True},
                   options_metavar="[OPTIONS] [SESSION]...", epilog=examples(
    "pcp hooks drop claude-code:4f35e220", "pcp hooks drop --gone"))
def hooks_drop(
    ctx: typer.Context,
    gone: Annotated[bool, typer.Option(
        "--gone", help="Every queued session whose session file no longer exists.")] = False,
    store_path: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Stop retrying queued sessions (AGENT:SESSION as `pcp hooks status` shows them, or the
    session id alone): their queue entries are removed. What they imported stays."""
    from pcp_cli.capture import queue
    from pcp_cli.errors import NotFound, UsageError

    names = list(ctx.args)
    for name in names:
        if name.startswith("-"):
            raise UsageError(f"no such option: {name}")
    if not names and not gone:
        raise UsageError("name the sessions to drop, or pass --gone",
                         hint="`pcp hooks status` lists what is queued and failing")
    out = queue.drop_sessions(_store_root(store_path), names, gone=gone)

    def human() -> None:
        for name in out["dropped"]:
            text(f"dropped {name}")
        if not out["dropped"]:
            text("nothing to drop")

    emit(out, as_json, human)
    if out["unknown"]:
        raise NotFound(f"no queued session {', '.join(out['unknown'])}",
                       hint="`pcp hooks status` lists what is queued and failing")


@hooks_app.command("run", context_settings={"allow_extra_args": True,
                                            "ignore_unknown_options": True},
                   epilog=examples("pcp-cli hooks run claude-code --store ~/context < event.json"))
def hooks_run(ctx: typer.Context, agent: Annotated[str | None, typer.Argument(
        metavar="AGENT", help="claude-code or codex.")] = None,
        store_path: Annotated[str | None, typer.Option(
            "--store", metavar="PATH", help="The store (recorded at install).")] = None,
) -> None:
    """What the agent runs when a session ends (you do not): notes the session and returns at
    once; the import runs in the background. Always exits 0."""
    from pcp_cli.capture import queue

    queue.hook_main([a for a in (agent, "--store" if store_path else None, store_path) if a]
                    + list(ctx.args))


@hooks_app.command("work", epilog=examples("pcp-cli hooks work --store ~/context"))
def hooks_work(store_path: StoreOpt = None) -> None:
    """The background import the hook starts (one at a time per store)."""
    from pcp_cli.capture import queue

    root = _store_root(store_path)
    try:
        queue.work(root)
    except Exception as exc:  # detached: nobody reads its stderr; the log says it
        queue.log(root, f"worker failed: {type(exc).__name__}: {exc}")


def watch(
    ctx: typer.Context,
    poll: Annotated[bool, typer.Option(
        "--poll", help="Poll the folders instead of using file-system events.")] = False,
    settle: Annotated[float, typer.Option(
        "--settle", metavar="SECONDS", help="How long a file must stay unchanged before it is "
        "imported.")] = 2.0,
    store_path: StoreOpt = None,
) -> None:
    """Keep importing what changes in the named folders (a Markdown vault, ~/.claude/projects,
    ~/.codex/sessions; default: the folders earlier imports read), until Ctrl-C or SIGTERM."""
    # PATH... are extra arguments: typer would show a list argument's Python type in --help
    from pcp_cli.capture.watch import watch_folders

    watch_folders(_store_root(store_path), list(ctx.args), poll=poll, settle=settle,
                  say=note)


def register(app: typer.Typer) -> None:
    app.add_typer(hooks_app, name="hooks")
    app.command("watch", context_settings={"allow_extra_args": True},
                options_metavar="[OPTIONS] [PATH]...", epilog=examples(
        "pcp watch ~/notes ~/.claude/projects", "pcp watch --poll /mnt/share/vault"))(watch)
