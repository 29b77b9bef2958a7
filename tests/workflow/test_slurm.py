"""The workflow on a real SLURM cluster, through profiles/slurm.

Needs a running cluster whose config is /etc/slurm/slurm.conf (the one-node test cluster of
.ci/slurm/start.sh: partitions `cpu` and `gpu`, a fake GPU, jobcomp/filetxt records), so these
tests run only when COOKPROC_SLURM_TEST=1; .ci/run sets it after starting that cluster.

What they assert comes from SLURM itself: the job ids Snakemake logged at submission are known to
squeue (MinJobAge keeps finished jobs there) and recorded in the jobcomp file as COMPLETED, in the
partition the profile's routing chose, and the GPU job carries its gres:gpu request.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures import REPO

PROFILE = REPO / "profiles" / "slurm"
SMOKE_SNAKEFILE = REPO / "tests" / "slurm" / "Snakefile"
# Snakemake under `timeout -s INT`: on a hang (e.g. a status command that never reports) it is
# interrupted, cancels its SLURM jobs, and the test fails instead of blocking CI.
RUN_TIMEOUT_S = int(os.environ.get("COOKPROC_SLURM_TIMEOUT_S", "900"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("COOKPROC_SLURM_TEST") != "1",
        reason="needs a running SLURM cluster (bash .ci/slurm/start.sh; COOKPROC_SLURM_TEST=1)",
    ),
]


def run_on_slurm(workdir, *args):
    """Run Snakemake through profiles/slurm in ``workdir``; return its log (stdout+stderr)."""
    cmd = [
        "timeout", "-s", "INT", str(RUN_TIMEOUT_S),
        sys.executable, "-m", "snakemake",
        "--profile", str(PROFILE),
        "--directory", str(workdir),
        # Poll SLURM often: test jobs take seconds, not the hours the profile is tuned for.
        "--slurm-init-seconds-before-status-checks", "2",
        "--seconds-between-status-checks", "2",
        *args,
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    (Path(workdir) / "snakemake-slurm.log").write_text(log)
    assert proc.returncode == 0, f"snakemake on SLURM failed ({proc.returncode}):\n{log[-6000:]}"
    # Status came from squeue: no fallback to sacct, which has no accounting storage to ask here.
    assert "Falling back to 'sacct'" not in log
    return log


def submitted_jobs(log):
    """{SLURM job id: rule name} for every job the log says was submitted to SLURM."""
    rule_of_jobid = {}
    rule = None
    for line in log.splitlines():
        m = re.match(r"^(?:local)?rule (\S+):$", line.strip())
        if m:
            rule = m.group(1)
        m = re.match(r"^jobid: (\d+)$", line.strip())
        if m and rule:
            rule_of_jobid[m.group(1)] = rule
    submitted = {}
    for jobid, slurm_id in re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", log):
        submitted[slurm_id] = rule_of_jobid[jobid]
    return submitted


def slurm_config(key):
    out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        name, _, value = line.partition("=")
        if name.strip() == key:
            return value.strip()
    raise KeyError(key)


def jobcomp_records():
    """{job id: {field: value}} from the jobcomp/filetxt file, one 'Key=Value ...' line per job."""
    records = {}
    for line in Path(slurm_config("JobCompLoc")).read_text().splitlines():
        fields = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
        records[fields["JobId"]] = fields
    return records


def squeue_records(job_ids):
    """{job id: (state, partition, tres per job)} as squeue reports them (finished ones too)."""
    out = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--jobs", ",".join(job_ids),
         "--Format=JobID:|,State:|,Partition:|,tres-per-job:"],
        capture_output=True, text=True, check=True,
    ).stdout
    records = {}
    for line in out.splitlines():
        job_id, state, partition, tres = (part.strip() for part in line.split("|")[:4])
        records[job_id] = (state, partition, tres)
    return records


def assert_ran_on_slurm(submitted, gpu_rules):
    """Every submitted job COMPLETED in SLURM's own records; GPU rules in `gpu` with a GPU."""
    assert submitted, "no job was submitted to SLURM"
    comp = jobcomp_records()
    queue = squeue_records(list(submitted))
    for slurm_id, rule in submitted.items():
        assert slurm_id in comp, f"SLURM job {slurm_id} ({rule}) has no jobcomp record"
        assert comp[slurm_id]["JobState"] == "COMPLETED", comp[slurm_id]
        state, partition, tres = queue[slurm_id]
        assert state == "COMPLETED"
        want = "gpu" if rule in gpu_rules else "cpu"
        assert comp[slurm_id]["Partition"] == partition == want, (rule, comp[slurm_id], queue[slurm_id])
        if rule in gpu_rules:
            assert "gpu:1" in tres, (rule, tres)
        else:
            assert "gpu" not in tres, (rule, tres)


def test_smoke_workflow_runs_cpu_and_gpu_jobs_on_slurm(tmp_path):
    log = run_on_slurm(tmp_path, "--snakefile", str(SMOKE_SNAKEFILE))

    submitted = submitted_jobs(log)
    assert sorted(submitted.values()) == ["cpu_step", "gpu_step", "gpu_step"]
    assert_ran_on_slurm(submitted, gpu_rules={"gpu_step"})

    # Inside the jobs: each ran as a logged SLURM job; the GPU jobs saw their GPU, the CPU job none.
    where = {
        path.stem: dict(tok.split("=", 1) for tok in path.read_text().split())
        for path in (tmp_path / "out").glob("*.txt")
    }
    assert {w["job"] for w in where.values()} == set(submitted)
    assert where["cpu"] == {"job": where["cpu"]["job"], "partition": "cpu", "cuda_visible_devices": "none"}
    for name in ("gpu1", "gpu2"):
        assert submitted[where[name]["job"]] == "gpu_step"
        assert (where[name]["partition"], where[name]["cuda_visible_devices"]) == ("gpu", "0")

    # Both GPU jobs were handed to SLURM together (the one-GPU node then ran them in turn): the
    # local gpu limit of profiles/default, applied to every run, does not throttle the cluster.
    comp = jobcomp_records()
    first, second = sorted((comp[where[n]["job"]] for n in ("gpu1", "gpu2")), key=lambda r: r["StartTime"])
    assert second["SubmitTime"] < first["EndTime"], (first, second)

    # Rerun through SLURM: nothing left to do, nothing submitted.
    again = run_on_slurm(tmp_path, "--snakefile", str(SMOKE_SNAKEFILE))
    assert submitted_jobs(again) == {}
    assert "Nothing to be done" in again


def test_fixture_workflow_runs_on_slurm_through_the_profile(tmp_path):
    """The real workflow, on the tiny fixture dataset, every non-local job submitted to SLURM."""
    from fixtures import make_workdir, write_tiny_upstream

    # A cross-section of the stages (upstream import, SRL training and tagging, Kiddon, scoring),
    # not every system: each SLURM job costs seconds of scheduling.
    workdir = make_workdir(tmp_path / "work", write_tiny_upstream(tmp_path / "upstream"), {"tables": {
        "keyclip_systems": ["upstream-neural", "srl-heur-tagger"],
        "tuple_systems": ["srl-heur-tagger", "kiddon-first-frame"], "predicted_keyclips": ["upstream-neural"]}})
    plan = run_on_slurm(workdir, "--snakefile", str(REPO / "Snakefile"), "--dry-run")
    planned = set(re.findall(r"^rule (\S+):$", plan, re.MULTILINE))  # `localrule` ones run here
    assert "table5" in planned

    # Cap threads at the test node's CPUs: a rule asking for more would never be scheduled there.
    log = run_on_slurm(workdir, "--snakefile", str(REPO / "Snakefile"), "--max-threads", str(os.cpu_count()))
    submitted = submitted_jobs(log)
    # Only the target rule `all` (nothing to run) and rules the workflow itself declares local
    # (`localrule: True`) stay on the submitting host.
    local = set(re.findall(r"^localrule (\S+):$", log, re.MULTILINE))
    assert local <= {"all"} | declared_local_rules()
    assert set(submitted.values()) == planned - local
    assert len(submitted) >= 5
    assert (workdir / "results" / "table5.csv").stat().st_size > 0
    assert_ran_on_slurm(submitted, gpu_rules=gpu_rules_of(plan))


def declared_local_rules():
    """Rules whose definition in rules/*.smk says `localrule: True`."""
    names = set()
    for smk in (REPO / "rules").glob("*.smk"):
        for block in re.split(r"^(?=rule )", smk.read_text(), flags=re.MULTILINE):
            m = re.match(r"rule (\w+):", block)
            if m and re.search(r"^\s+localrule:\s*True\s*$", block, re.MULTILINE):
                names.add(m.group(1))
    return names


def gpu_rules_of(dry_run_log):
    """Rules whose jobs the dry run lists with a gpu resource."""
    rules, rule = set(), None
    for line in dry_run_log.splitlines():
        m = re.match(r"^(?:local)?rule (\S+):$", line)
        if m:
            rule = m.group(1)
        if rule and re.match(r"^\s+resources: .*\bgpu=1\b", line):
            rules.add(rule)
    return rules
