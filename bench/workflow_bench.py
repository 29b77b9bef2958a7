"""Workflow benchmarks on the real data: DAG planning, a full run of Table 5, a no-op rerun.

    .venv/bin/python bench/workflow_bench.py                           # print the table
    .venv/bin/python bench/workflow_bench.py --write docs/benchmarks.md  # and rewrite its first section

Runs the repository's Snakefile through profiles/default in a fresh working directory (the repo's
own results/ are never touched), against the upstream mirror of config.yaml, and measures:
  - the dry run of the full DAG (target `all`, nothing built yet): Snakemake's planning cost;
  - the full run of results/table5.csv: wall time and peak memory (the largest single process,
    exact, from the kernel's rusage of all descendants; and the sum over the whole process tree,
    sampled every 50 ms, which counts Snakemake plus the jobs running side by side);
  - a no-op rerun of results/table5.csv right after it (nothing to do): the cost a user pays on
    every invocation.
Targets (issue 6): no-op rerun under 5 s, peak RSS under 4 GB. Timings are medians of --repeats
runs; they vary with the load of the machine, which is printed with them.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
NOOP_TARGET_S = 5.0
PEAK_RSS_TARGET_GB = 4.0
LONGEST_JOBS = 5
GB = 1024**3

# Runs a command and writes the peak RSS of its largest descendant (kernel rusage, KiB on Linux).
RUSAGE_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


def make_workdir(workdir: Path, upstream_dir: Path, overrides: dict[str, object] | None = None) -> Path:
    """A working directory whose config.yaml is the repo's, pointed at ``upstream_dir``, with the
    repo-relative EWT folder made absolute and ``overrides`` ("section.key" -> value) applied."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.setdefault("upstream", {})["dir"] = str(upstream_dir)
    ewt = Path(config["srl"]["propbank_ewt_dir"])
    config["srl"]["propbank_ewt_dir"] = str(ewt if ewt.is_absolute() else (REPO / ewt).resolve())
    for key, value in (overrides or {}).items():
        section, name = key.split(".", 1)
        config.setdefault(section, {})[name] = value
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return workdir


def snakemake_cmd(workdir: Path, *args: str) -> list[str]:
    return [str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--profile", str(REPO / "profiles" / "default"), *args]


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str], log: Path) -> tuple[float, float]:
    """Run ``cmd`` (output to ``log``); return its (wall, CPU) seconds. CPU time hardly depends
    on the machine's load; wall time does."""
    cpu0, start = children_cpu_s(), time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    wall, cpu = time.perf_counter() - start, children_cpu_s() - cpu0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{log.read_text()[-4000:]}")
    return wall, cpu


def planned_jobs(log_text: str) -> int:
    """The total of Snakemake's 'Job stats' table (0 when there is nothing to do)."""
    m = re.search(r"^total\s+(\d+)\s*$", log_text, re.MULTILINE)
    return int(m.group(1)) if m else 0


class TreeMemorySampler(threading.Thread):
    """Samples the RSS of a process and all its descendants; keeps the peak of their sum."""

    def __init__(self, pid: int, interval_s: float = 0.05):
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.interval_s = interval_s
        self.peak_sum = 0
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            total = 0
            try:
                procs = [self.root] + self.root.children(recursive=True)
            except psutil.NoSuchProcess:
                break
            for proc in procs:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:  # exited between listing and reading
                    pass
            self.peak_sum = max(self.peak_sum, total)
            time.sleep(self.interval_s)


def measure_full_run(cmd: list[str], log: Path) -> tuple[float, int, int]:
    """(wall s, peak RSS of the largest process, peak RSS summed over the tree), bytes."""
    rusage_file = log.with_suffix(".maxrss")
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-c", RUSAGE_WRAPPER, str(rusage_file), *cmd],
                                stdout=out, stderr=subprocess.STDOUT)
        sampler = TreeMemorySampler(proc.pid)
        sampler.start()
        code = proc.wait()
        sampler.stopped.set()
        sampler.join()
    wall = time.perf_counter() - start
    if code != 0:
        sys.exit(f"full run failed ({code}): {' '.join(cmd)}\n{log.read_text()[-4000:]}")
    largest = int(rusage_file.read_text()) * 1024
    return wall, largest, max(sampler.peak_sum, largest)


def rule_benchmarks(workdir: Path) -> list[tuple[str, float, float]]:
    """(benchmark file, seconds, max RSS MB) of every rule with a `benchmark:` file."""
    rows = []
    for path in sorted((workdir / "benchmarks").rglob("*.tsv")):
        lines = path.read_text().splitlines()
        header, values = lines[0].split("\t"), lines[1].split("\t")
        record = dict(zip(header, values))
        max_rss = record.get("max_rss", "NA")
        rows.append((str(path.relative_to(workdir / "benchmarks")), float(record["s"]),
                     float(max_rss) if max_rss != "NA" else float("nan")))
    return rows


SNAKEMAKE_TIMESTAMP = re.compile(r"^\[(\w{3} \w{3} +\d{1,2} \d\d:\d\d:\d\d \d{4})\]$")
JOB_HEADER = re.compile(r"^(?:local)?rule (\S+):$")
JOB_FIELD = re.compile(r"^\s+(jobid|wildcards): (.*)$")
JOB_FINISHED = re.compile(r"^Finished jobid: (\d+) ")


def job_wall_times(log_text: str) -> list[tuple[str, float]]:
    """(job, seconds) of every job that a Snakemake log shows starting and finishing, longest
    first; a job is named by its rule and wildcards. Covers every rule, also those without a
    `benchmark:` file; Snakemake stamps the log to the second."""
    def parse(stamp: str) -> datetime.datetime:
        return datetime.datetime.strptime(" ".join(stamp.split()), "%a %b %d %H:%M:%S %Y")

    stamp, job, started, times = None, None, {}, []
    for line in log_text.splitlines():
        if m := SNAKEMAKE_TIMESTAMP.match(line):
            stamp, job = parse(m.group(1)), None
        elif (m := JOB_HEADER.match(line)) and stamp is not None:
            job = {"rule": m.group(1), "start": stamp}
        elif (m := JOB_FIELD.match(line)) and job is not None:
            job[m.group(1)] = m.group(2)
            if m.group(1) == "jobid":
                started[m.group(2)] = job
        elif (m := JOB_FINISHED.match(line)) and m.group(1) in started:
            done = started.pop(m.group(1))
            name = done["rule"] + (f" ({done['wildcards']})" if "wildcards" in done else "")
            times.append((name, (stamp - done["start"]).total_seconds()))
    return sorted(times, key=lambda item: (-item[1], item[0]))


def replace_first_section(page: str, section: str) -> str:
    """``page`` with everything before its first level-2 heading replaced by ``section``: the
    page's other sections (hand-written measurements of other issues) are kept."""
    rest = re.search(r"^## ", page, re.MULTILINE)
    return section if rest is None else section.rstrip("\n") + "\n\n" + page[rest.start():]


def code_version() -> str:
    """The workflow's commit, marked when the working tree has changes (or 'not a git checkout')."""
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"commit {commit}" + (" with local changes" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", type=Path, help="upstream mirror (default: config.yaml's upstream.dir)")
    parser.add_argument("--target", default="results/table5.csv")
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--write", type=Path, help="also write the markdown report here (docs/benchmarks.md)")
    parser.add_argument("--keep", type=Path, help="working directory to use and keep (default: a temp dir)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--note", default="", help="a line on what was measured (e.g. which stages exist)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a config value (YAML), e.g. srl.tagger.epochs=2; stated in the report")
    args = parser.parse_args()
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            sys.exit(f"--set {item!r}: expected SECTION.KEY=VALUE")
        overrides[key] = yaml.safe_load(value)

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    upstream = (args.upstream or (REPO / config["upstream"]["dir"])).resolve()
    if not upstream.exists():
        sys.exit(f"upstream mirror not found: {upstream} (pass --upstream)")

    tmp = Path(tempfile.mkdtemp(prefix="cookproc-bench-")) if args.keep is None else args.keep
    if args.keep is not None and tmp.exists():
        shutil.rmtree(tmp)
    workdir = make_workdir(tmp / "work", upstream, overrides)
    logs = tmp / "bench-logs"
    logs.mkdir()
    load_before = os.getloadavg()[0]

    # 1. Planning the full DAG from scratch (nothing built: every job is planned).
    dry, dry_cpu = zip(*[run(snakemake_cmd(workdir, "--dry-run"), logs / f"dryrun{i}.log")
                         for i in range(args.repeats)])
    dag_jobs = planned_jobs((logs / "dryrun0.log").read_text())

    # 2. The full run of the target.
    wall, largest, tree = measure_full_run(snakemake_cmd(workdir, args.target), logs / "full.log")
    run_jobs = planned_jobs((logs / "full.log").read_text())

    # 3. No-op reruns: everything is up to date.
    noop, noop_cpu = zip(*[run(snakemake_cmd(workdir, args.target), logs / f"noop{i}.log")
                           for i in range(args.repeats)])
    noop_log = (logs / "noop0.log").read_text()
    if "Nothing to be done" not in noop_log:
        sys.exit(f"the rerun was not a no-op:\n{noop_log[-3000:]}")

    ok_noop = statistics.median(noop) < NOOP_TARGET_S
    ok_rss = tree < PEAK_RSS_TARGET_GB * GB
    mark = {True: "yes", False: "**NO**"}
    rows = [
        ("dry run, full DAG", f"{statistics.median(dry):.2f} s",
         f"{dag_jobs} jobs planned; CPU {statistics.median(dry_cpu):.2f} s", "", ""),
        (f"full run, {args.target}", f"{wall:.1f} s", f"{run_jobs} jobs", "", ""),
        ("peak RSS, largest process", f"{largest / GB:.2f} GB", "kernel rusage", "", ""),
        ("peak RSS, whole process tree", f"{tree / GB:.2f} GB", "sampled every 50 ms",
         f"< {PEAK_RSS_TARGET_GB:g} GB", mark[ok_rss]),
        (f"no-op rerun, {args.target}", f"{statistics.median(noop):.2f} s",
         f"nothing to be done; CPU {statistics.median(noop_cpu):.2f} s",
         f"< {NOOP_TARGET_S:g} s", mark[ok_noop]),
    ]
    table = ["| measurement | value | note | target | met |", "|---|---:|---|---|---|"]
    table += [f"| {' | '.join(row)} |" for row in rows]
    per_rule = rule_benchmarks(workdir)
    if per_rule:
        table += ["", "Rules with a `benchmark:` file (Snakemake's own measurement of the job):", "",
                  "| benchmark | seconds | max RSS (MB) |", "|---|---:|---:|"]
        table += [f"| {name} | {s:.2f} | {rss:.0f} |" for name, s, rss in per_rule]
    longest = job_wall_times((logs / "full.log").read_text())[:LONGEST_JOBS]
    table += ["", f"The {len(longest)} longest jobs of the full run (Snakemake's log, to the second):", "",
              "| job | seconds |", "|---|---:|"]
    table += [f"| {name} | {seconds:.0f} |" for name, seconds in longest]
    machine = (f"{platform.node()}: {os.cpu_count()} CPUs, {psutil.virtual_memory().total / GB:.0f} GB RAM, "
               f"Python {platform.python_version()}, load average {load_before:.1f} before the run; "
               f"medians of {args.repeats} runs; {datetime.date.today().isoformat()}")
    report = "\n".join(table) + f"\n\n{machine}; code: {code_version()}\n"
    if overrides:
        report += "\nConfig changed from config.yaml for this run: " + ", ".join(
            f"`{key}: {value}`" for key, value in overrides.items()) + "\n"
    if args.note:
        report += f"\n{args.note}\n"
    print(report)

    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        old = args.write.read_text() if args.write.exists() else ""
        args.write.write_text(replace_first_section(old, DOC_HEADER + report))
        print(f"wrote {args.write}")
    if args.keep is None:
        shutil.rmtree(tmp)
    if args.check and not (ok_noop and ok_rss):
        sys.exit(1)


DOC_HEADER = """# Workflow benchmarks

How long Snakemake takes to plan the workflow, to compute Table 5 from the real data, and to
find that nothing needs redoing; and how much memory the run needs. Made by
`bench/workflow_bench.py` (run it to refresh this first section:
`.venv/bin/python bench/workflow_bench.py --write docs/benchmarks.md`), which runs the workflow
through `profiles/default` in a fresh temporary working directory against the upstream mirror.

- *dry run, full DAG*: `snakemake --dry-run` for every target, nothing built yet.
- *full run*: `snakemake results/table5.csv` from scratch (only the jobs Table 5 needs).
- *peak RSS*: the largest single process (exact, kernel rusage over all descendants) and the
  sum over Snakemake and every job running at the same moment (sampled every 50 ms); the target
  applies to the sum.
- *no-op rerun*: `snakemake results/table5.csv` again right after, when everything is up to date.
- Wall times are medians and depend on the machine's load (printed below the table); the CPU
  time (user + system, Snakemake and its children) next to them depends far less on it.
- Every Snakemake start imports the SLURM executor plugin, which runs `scontrol show config`: on a
  machine whose `/etc/slurm/slurm.conf` names a controller that is down, that call waits about
  9 s (measured here), so a no-op rerun takes ~11 s instead of ~2 s. `.ci/slurm/stop.sh` removes
  the test cluster's configuration for that reason.

"""

if __name__ == "__main__":
    main()
