"""The bounded cases of capture (issue #31): a 100 MB note, imported and watched.

For each checkout (this one, and with `--code OTHER_CHECKOUT` a baseline such as main's, in the
same run, interleaved), N times:

- `pcp import VAULT`, VAULT holding 20 small notes and one SIZE MB note of plain words: wall
  time, CPU and peak RSS of the process (its rusage);
- `pcp watch VAULT` as a real process on the same vault without the big note: once it has
  caught up, the big note is renamed into the vault (one event, complete), and the time until
  the watcher says what it did with it (`skipped: …` or `imported …`) and the watcher's peak RSS
  (VmHWM) are taken.

    python bench/capture_limits.py [--code OTHER_CHECKOUT] [--size-mb 100] [--repeat 3]

Medians; the load average (`uptime`) is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("kelp tide gauge salt signal ocean data reef current shore heron estuary buoy "
         "sensor dashboard swell plankton").split()


def big_note(path: Path, size: int) -> None:
    rng = random.Random(31)
    with path.open("w", encoding="utf-8") as out:
        out.write("# A very long note\n\n")
        written = 0
        while written < size:
            line = " ".join(rng.choice(WORDS) for _ in range(15)) + "\n"
            out.write(line)
            written += len(line)


def small_vault(folder: Path) -> None:
    folder.mkdir()
    for n in range(20):
        (folder / f"note-{n:02d}.md").write_text(f"# Note {n}\n\nThe gauge {n} reads high.\n")


def pcp(code: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pcp_cli", *args]


def env_for(code: Path) -> dict[str, str]:
    """Run with `code`'s pcp_cli (and from `code`: `python -m` puts the folder first)."""
    return {**os.environ, "PYTHONPATH": str(code), "PYTHONDONTWRITEBYTECODE": "1"}


def init(code: Path, root: Path) -> None:
    subprocess.run(pcp(code, "init", str(root), "--owner", "bench"), env=env_for(code),
                   cwd=code, check=True, capture_output=True)


def measure_import(code: Path, tmp: Path, note: Path) -> dict[str, float]:
    root, vault = tmp / "store", tmp / "vault"
    init(code, root)
    small_vault(vault)
    os.link(note, vault / "huge.md")
    start = time.perf_counter()
    proc = subprocess.Popen(pcp(code, "import", str(vault), "--store", str(root)),
                            env=env_for(code), cwd=code, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024, "exit": os.waitstatus_to_exitcode(status)}


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure_watch(code: Path, tmp: Path, note: Path) -> dict[str, float]:
    root, vault = tmp / "store", tmp / "vault"
    init(code, root)
    small_vault(vault)
    proc = subprocess.Popen(pcp(code, "watch", str(vault), "--settle", "0.5", "--store",
                                str(root)), env=env_for(code), cwd=code,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    said = threading.Event()
    caught_up = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "imported" in line and "20 created" in line:
                caught_up.set()
            elif "huge.md" in line or ("imported" in line and caught_up.is_set()):
                said.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not caught_up.wait(600):
            raise SystemExit(f"the watcher did not catch up: {''.join(lines)}")
        before = peak_rss_mb(proc.pid)
        staged = tmp / "huge.md"
        os.link(note, staged)
        start = time.perf_counter()
        os.rename(staged, vault / "huge.md")
        if not said.wait(900):
            raise SystemExit(f"the watcher said nothing of the note: {''.join(lines)}")
        seconds = time.perf_counter() - start
        peak = peak_rss_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    return {"said_after_s": seconds, "peak_mb": peak, "idle_mb": before}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", type=Path, help="a baseline checkout, measured in the same run")
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    codes = {"this": ROOT}
    if opts.code:
        codes = {"baseline": opts.code.resolve(), "this": ROOT}
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        note = tmp / "note.md"
        big_note(note, opts.size_mb * 1024 * 1024)
        for run in range(opts.repeat):
            for label, code in codes.items():
                for kind, measure in (("import", measure_import), ("watch", measure_watch)):
                    work = tmp / f"{label}-{kind}-{run}"
                    work.mkdir()
                    results.setdefault((label, kind), []).append(measure(code, work, note))
                    shutil.rmtree(work)
                    print(f"run {run + 1}: {label} {kind} {results[(label, kind)][-1]} "
                          f"(load {os.getloadavg()[0]:.1f})", file=sys.stderr)
    for (label, kind), runs in results.items():
        medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        shown = ", ".join(f"{k} {v:.2f}" for k, v in medians.items())
        print(f"{label:8} {kind:6} median of {len(runs)}: {shown}")
    print(f"load average now: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
