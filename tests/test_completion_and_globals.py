"""Shell completion (typer's, via the completion env vars) and the options before the command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import cli, run_pcp


def complete(words: str, cwd: Path | None = None, shell: str = "bash") -> list[str]:
    """What the shell would offer for the last word of `words` (a real process)."""
    if shell == "bash":
        parts = words.split(" ")
        env = {"_PCP_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(len(parts) - 1)}
    else:
        env = {"_PCP_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": words}
    result = run_pcp(env=env, cwd=cwd)
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return [line for line in result.stdout.splitlines() if line]


def add(store: Path, text: str, *extra: str) -> str:
    return cli("add", text, *extra, "--store", str(store), "--json").json["page_id"]


@pytest.mark.slow
def test_completion_offers_commands_options_types_namespaces_and_page_ids(store: Path) -> None:
    page = add(store, "Tidewatch architecture")
    work = add(store, "Work note", "--namespace", "project:tidewatch")
    assert "show" in complete("pcp sh")
    assert {"keystone", "timeline"} <= set(complete("pcp "))
    assert "--limit" in complete("pcp ls --li")
    assert complete("pcp ls --type key") == ["keystone"]
    assert set(complete("pcp ls --namespace pro", cwd=store)) == {"project:*",
                                                                 "project:tidewatch"}
    # page ids: from the store found from the folder, from --store, from the global -C / --store
    both = sorted([page, work])
    assert complete("pcp show pg_", cwd=store) == both
    assert complete(f"pcp show {page[3:8]}", cwd=store) == [p[3:] for p in both]
    assert complete(f"pcp show --store {store} {page[:6]}") == both
    assert complete(f"pcp -C {store} history {page[:6]}") == both
    assert complete(f"pcp --store {store} edit {page[:6]}") == both
    zsh = "\n".join(complete(f"pcp --store {store} show {page[:6]}", shell="zsh"))
    assert page in zsh and "Tidewatch architecture" in zsh  # the title as the description
    # outside any store: no completions, no traceback
    assert complete("pcp show pg_", cwd=store.parent) == []


def test_show_and_install_completion_exist(tmp_path: Path) -> None:
    script = run_pcp("--show-completion", "bash",
                     env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert script.code == 0, script.stderr
    assert "_PCP_COMPLETE" in script.stdout and "complete" in script.stdout
    help_text = run_pcp("--help").stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text


def test_global_store_and_C_before_the_command(store: Path, tmp_path: Path) -> None:
    page = add(store, "Tidewatch architecture")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (["--store", str(store)], [f"--store={store}"], ["-C", str(store)],
                 [f"-C{store}"]):
        listed = cli(*args, "ls", "--json", cwd=elsewhere)
        assert listed.code == 0, (args, listed.stderr)
        assert [p["page_id"] for p in listed.json] == [page]
        # the typer-free fast paths too: search --json and export --format micro_prompt
        found = cli(*args, "search", "tidewatch", "--json", cwd=elsewhere)
        assert found.code == 0 and found.json["results"][0]["id"] == page
        assert cli(*args, "export", "--format", "micro_prompt", cwd=elsewhere).code == 0
    # relative to the folder pcp was started in, and -C first, as in git
    assert cli("--store", store.name, "ls", "--json", cwd=store.parent).code == 0
    assert cli("-C", str(store.parent), "--store", store.name, "ls", "--json").code == 0
    # -C ignores PCP_STORE ("as if started there"); --store after the command still wins
    os.environ["PCP_STORE"] = str(elsewhere)
    try:
        assert cli("-C", str(store), "ls", "--json").code == 0
    finally:
        del os.environ["PCP_STORE"]
    other = tmp_path / "other"
    assert cli("init", str(other), "--owner", "o").code == 0
    mine = cli("--store", str(other), "ls", "--json", "--store", str(store))
    assert [p["page_id"] for p in mine.json] == [page]
    # a folder that is not there: a usage error naming it; the process state is put back
    cwd = Path.cwd()
    missing = cli("-C", str(tmp_path / "nope"), "ls")
    assert missing.code == 2 and "nope: no such folder" in missing.stderr
    assert cli("--store").code == 2
    assert Path.cwd() == cwd and "PCP_STORE" not in os.environ


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["show", "--help"]])
def test_help_stays_light_with_completion_on(args: list[str]) -> None:
    probe = (
        "import json, sys, io, contextlib\n"
        "from pcp_cli.cli.main import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    run({args!r})\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('whoosh', 'jsonschema', 'mcp') or m.startswith('pcp_cli.api.') or m in ("
        "'pcp_cli.store.store', 'sqlite3', 'yaml'))\n"
        "print(json.dumps(heavy))\n")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
