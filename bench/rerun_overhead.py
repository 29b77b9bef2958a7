"""What planning costs, before and after a change of the workflow's code: dry run and no-op rerun.

    .venv/bin/python bench/rerun_overhead.py --base 12e6dc9      # that commit against this tree

Exports ``--base`` (``git archive``: no worktree, no change to the repository) and copies the
current tree, then for each runs, on the real upstream mirror and with only the upstream systems
listed (Tables 4 and 5 in a few jobs, no training):
  - a dry run of results/table4.csv and results/table5.csv with nothing built (DAG planning);
  - the build of those targets;
  - a dry run and a no-op rerun right after (nothing to do): what a user pays on every invocation.
Each checkout's jobs import its own cookproc (PYTHONPATH). Timings are medians of --repeats runs,
measured back to back in one process; the ratio column is current / base. The machine's load is
printed with them: wall times depend on it.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
TARGETS = ["results/table4.csv", "results/table5.csv"]
# Tracked and untracked-but-not-ignored files of the current tree (what a commit would hold).
CURRENT_FILES = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"]


def export_base(rev: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=REPO, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def export_current(dest: Path) -> Path:
    names = subprocess.run(CURRENT_FILES, cwd=REPO, check=True, capture_output=True).stdout.split(b"\0")
    for name in filter(None, names):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / os.fsdecode(name))
    return dest


def make_workdir(checkout: Path, work: Path) -> Path:
    """The checkout's config.yaml with only the upstream systems, pointed at the mirror."""
    config = yaml.safe_load((checkout / "config.yaml").read_text())
    upstream = Path(config["upstream"]["dir"])
    config["upstream"]["dir"] = str(upstream if upstream.is_absolute() else (REPO / upstream).resolve())
    ewt = Path(config["srl"]["propbank_ewt_dir"])
    config["srl"]["propbank_ewt_dir"] = str(ewt if ewt.is_absolute() else (REPO / ewt).resolve())
    config["tables"].update(keyclip_systems=["upstream-neural", "upstream-srl-heur"],
                            tuple_systems=["upstream-srl-heur"], predicted_keyclips=["upstream-neural"])
    work.mkdir(parents=True)
    (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return work


def timed(checkout: Path, work: Path, *args: str) -> float:
    cmd = [str(SNAKEMAKE), "-s", str(checkout / "Snakefile"), "-c2", *args, *TARGETS]
    env = dict(os.environ, PYTHONPATH=str(checkout / "workflow"))
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {work}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    if args == ("--dry-run",) and "Nothing to be done" not in proc.stdout + proc.stderr and \
            (work / "results" / "table5.csv").exists():
        sys.exit(f"expected nothing to do in {work}:\n{proc.stdout[-3000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare the current tree with")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="rerun-overhead-") as tmp:
        tmp = Path(tmp)
        checkouts = {"base": export_base(args.base, tmp / "base" / "src"),
                     "current": export_current(tmp / "current" / "src")}
        for src in checkouts.values():  # the compiled scorer (built by `pip install -e .`, not tracked)
            for built in (REPO / "workflow" / "cookproc").rglob("_fuzz*.so"):
                shutil.copy2(built, src / built.relative_to(REPO))
        works = {name: make_workdir(src, src.parent / "work") for name, src in checkouts.items()}
        for name in checkouts:
            src, work = checkouts[name], works[name]
            rows.setdefault("dry run, nothing built", {})[name] = statistics.median(
                timed(src, work, "--dry-run") for _ in range(args.repeats))
            rows.setdefault("build of Tables 4 and 5", {})[name] = timed(src, work)
            rows.setdefault("dry run, all built", {})[name] = statistics.median(
                timed(src, work, "--dry-run") for _ in range(args.repeats))
            rows.setdefault("no-op rerun", {})[name] = statistics.median(timed(src, work) for _ in range(args.repeats))
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=REPO, capture_output=True,
                          text=True).stdout.strip()
    print(f"| measurement | base {base} (s) | current tree (s) | current / base |")
    print("|---|---:|---:|---:|")
    for what, values in rows.items():
        print(f"| {what} | {values['base']:.2f} | {values['current']:.2f} | {values['current'] / values['base']:.2f} |")
    print(f"\nmedians of {args.repeats} (the build: one run); load average after: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
