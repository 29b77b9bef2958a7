"""profiles/slurm and the workflow's resource declarations, checked without a cluster.

tests/workflow/test_slurm.py runs jobs on a real SLURM (gated); this file checks, in every CI run, what
decides where jobs land: the profile's settings, each rule's resources, and the partition the
slurm executor plugin picks for each rule of the real workflow from profiles/slurm/partitions.yaml,
and that a site's own partition file ($SNAKEMAKE_SLURM_PARTITIONS, the plugin's convention) wins.
"""

import logging
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from snakemake.api import SnakemakeApi
from snakemake.profiles import ProfileConfigFileParser
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings
from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file

from fixtures import REPO, make_workdir, write_tiny_upstream

PROFILES = REPO / "profiles"


def load_profile(name):
    """The profile as Snakemake reads it: {option: value}, yte templates evaluated."""
    path = PROFILES / name / "config.yaml"
    with open(path) as stream:
        return ProfileConfigFileParser().parse(stream)


def test_slurm_profile_uses_the_slurm_executor_with_squeue_status(monkeypatch):
    monkeypatch.delenv("COOKPROC_SLURM_ACCOUNT", raising=False)
    monkeypatch.delenv("SNAKEMAKE_SLURM_PARTITIONS", raising=False)
    profile = load_profile("slurm")
    assert profile["executor"] == "slurm"
    # squeue needs no accounting storage; sacct would fail and the executor would wait forever.
    assert profile["slurm-status-command"] == "squeue"
    # No site partition file: the profile's own (the CI test cluster's partitions).
    assert Path(profile["slurm-partition-config"]) == PROFILES / "slurm" / "partitions.yaml"
    defaults = dict(item.split("=", 1) for item in profile["default-resources"])
    assert {"mem_mb", "runtime"} <= set(defaults)
    assert "slurm_account" not in defaults  # no account given: the cluster's default is used


def test_slurm_profile_retries_a_failed_job_once(monkeypatch):
    monkeypatch.delenv("SNAKEMAKE_SLURM_PARTITIONS", raising=False)
    assert int(load_profile("slurm")["retries"]) == 1
    # Only on the cluster: locally a failing job fails at once.
    assert "retries" not in load_profile("default") and "restart-times" not in load_profile("default")


def test_slurm_profile_takes_the_account_from_the_environment(monkeypatch):
    monkeypatch.setenv("COOKPROC_SLURM_ACCOUNT", "lab42")
    profile = load_profile("slurm")
    assert "slurm_account=lab42" in profile["default-resources"]


def test_slurm_profile_leaves_partitions_to_a_sites_snakemake_slurm_partitions(monkeypatch, tmp_path):
    # The slurm executor plugin reads $SNAKEMAKE_SLURM_PARTITIONS only when no partition file is
    # given as an option; a profile that always set one would override the site's file.
    site = tmp_path / "site-partitions.yaml"
    site.write_text("partitions:\n  short: {max_gpu: 0}\n  a100: {max_gpu: 4}\n")
    monkeypatch.setenv("SNAKEMAKE_SLURM_PARTITIONS", str(site))
    assert "slurm-partition-config" not in load_profile("slurm")


def cli_partition_config(monkeypatch):
    """--slurm-partition-config as Snakemake's command line sets it from --profile profiles/slurm
    (and the workflow profile profiles/default, applied too): a path, or None when unset."""
    from snakemake.cli import parse_args

    monkeypatch.chdir(REPO)
    _, args = parse_args(["--profile", str(PROFILES / "slurm"), "--dry-run"])
    assert args.executor == "slurm" and args.retries == 1
    value = args.slurm_partition_config
    return Path(value) if isinstance(value, (str, Path)) else None


def test_snakemake_command_line_from_the_profile_honours_snakemake_slurm_partitions(monkeypatch, tmp_path):
    monkeypatch.delenv("SNAKEMAKE_SLURM_PARTITIONS", raising=False)
    assert cli_partition_config(monkeypatch).resolve() == PROFILES / "slurm" / "partitions.yaml"
    site = tmp_path / "site-partitions.yaml"
    site.write_text("partitions:\n  short: {max_gpu: 0}\n")
    monkeypatch.setenv("SNAKEMAKE_SLURM_PARTITIONS", str(site))
    assert cli_partition_config(monkeypatch) is None  # so the plugin reads the site's file


def test_shipped_partitions_are_those_of_the_ci_test_cluster():
    # tests/workflow/test_slurm.py routes jobs to `cpu` and `gpu` on the cluster .ci/slurm/start.sh writes,
    # through profiles/slurm/partitions.yaml: the two must name the same partitions.
    start = (REPO / ".ci" / "slurm" / "start.sh").read_text()
    cluster = set(re.findall(r"^PartitionName=(\S+)", start, re.MULTILINE))
    shipped = {p.name for p in read_partition_file(PROFILES / "slurm" / "partitions.yaml")}
    assert cluster == shipped == {"cpu", "gpu"}


def test_default_profile_runs_locally_one_gpu_job_at_a_time():
    profile = load_profile("default")
    assert "executor" not in profile  # local
    assert profile["resources"] == ["gpu=1"]
    # Snakemake applies profiles/default to cluster runs too; scoped `local`, the limit is per
    # machine and does not hold back GPU jobs on SLURM (tests/workflow/test_slurm.py checks it there).
    assert profile["set-resource-scopes"] == ["gpu=local"]


def test_slurm_profile_sets_no_key_that_the_default_profile_would_override():
    # profiles/default is the workflow profile: it wins over --profile profiles/slurm key by key.
    shared = set(load_profile("default")) & set(load_profile("slurm"))
    assert not shared, f"set in both profiles (the default one wins): {sorted(shared)}"


def load_rules(snakefile, workdir):
    """{name: rule} of a workflow, loaded (not run) in ``workdir``."""
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow_api = api.workflow(
            snakefile=snakefile,
            workdir=workdir,
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(),
            storage_settings=StorageSettings(),
        )
        # Private, but the only way to see each rule's declared resources without running it.
        return {rule.name: rule for rule in workflow_api._workflow.rules}


def every_device_on_gpu(config):
    """Config overrides that set every `device` key to cuda, so that each GPU-capable rule asks
    for its GPU (with device: cpu, as in the fixture config, rules may ask for none)."""
    out = {}
    for key, value in config.items():
        if key == "device":
            out[key] = "cuda"
        elif isinstance(value, dict) and (sub := every_device_on_gpu(value)):
            out[key] = sub
    return out


@pytest.fixture(scope="module")
def workflow_rules(tmp_path_factory):
    """The rules of the repository's workflow, loaded on the tiny fixture dataset, devices on GPU."""
    tmp = tmp_path_factory.mktemp("profile")
    overrides = every_device_on_gpu(yaml.safe_load((REPO / "config.yaml").read_text()))
    workdir = make_workdir(tmp / "work", write_tiny_upstream(tmp / "upstream"), overrides)
    return load_rules(REPO / "Snakefile", workdir)


@pytest.fixture(scope="module")
def smoke_rules(tmp_path_factory):
    """The rules of tests/slurm/Snakefile (one CPU, one GPU rule), which tests/workflow/test_slurm.py submits."""
    return load_rules(REPO / "tests" / "slurm" / "Snakefile", tmp_path_factory.mktemp("smoke"))


def declared(rule):
    """{resource: value} the rule itself declares (constants; callables as the callable)."""
    return {
        name: (res if res.is_evaluable() else res.value)
        for name, res in rule.resources.items()
        if not name.startswith("_") and name != "tmpdir"
    }


def is_gpu_rule(rule):
    gpu = declared(rule).get("gpu", 0)
    return not callable(gpu) and gpu >= 1


def test_gpu_rules_declare_gpu_memory_runtime_and_a_device_param(workflow_rules):
    gpu_capable = [rule for rule in workflow_rules.values() if "gpu" in rule.resources]
    for rule in gpu_capable:
        res = declared(rule)
        assert res["gpu"] == 1, f"{rule.name}: gpu={res['gpu']} with every device set to cuda"
        assert "mem_mb" in res and "runtime" in res, f"{rule.name}: declares {sorted(res)}"
        assert "device" in rule.params.keys(), f"{rule.name}: GPU rules take a `device` param (cpu works)"


def test_no_rule_asks_for_gpus_through_slurm_extra_or_gres(workflow_rules):
    for rule in workflow_rules.values():
        res = declared(rule)
        assert "slurm_extra" not in res, f"{rule.name}: use resources gpu=1, not slurm_extra"
        assert "gres" not in res and "gpu_model" not in res, rule.name


class _Resources(dict):
    __getattr__ = dict.__getitem__


def fake_job(rule):
    """What the plugin's partition scoring reads of a job: its name, threads and resources."""
    res = {k: v for k, v in declared(rule).items() if isinstance(v, (int, float, str))}
    res.setdefault("mem_mb", 4000)  # the profile's default
    res.setdefault("runtime", 60)
    cores = rule.resources["_cores"]
    threads = 1 if cores.is_evaluable() else cores.value
    return SimpleNamespace(name=rule.name, threads=threads, resources=_Resources(res))


def routed_partitions(rules):
    """{rule: partition} as the slurm plugin picks them from profiles/slurm/partitions.yaml."""
    partitions = read_partition_file(PROFILES / "slurm" / "partitions.yaml")
    assert {p.name: p.limits.max_gpu for p in partitions} == {"cpu": 0, "gpu": 1}
    logger = logging.getLogger("partition-test")
    return {name: get_best_partition(partitions, fake_job(rule), logger) for name, rule in rules.items()}


def test_profile_routes_gpu_rules_to_gpu_partitions_and_cpu_rules_away_from_them(workflow_rules):
    chosen = routed_partitions(workflow_rules)
    assert "table5" in chosen  # the real workflow was loaded
    for name, rule in workflow_rules.items():
        assert chosen[name] == ("gpu" if is_gpu_rule(rule) else "cpu"), (name, declared(rule))


def test_profile_routing_separates_the_smoke_workflows_cpu_and_gpu_rule(smoke_rules):
    # The same check on a workflow known to have a GPU rule, so that it is never vacuous.
    assert routed_partitions(smoke_rules) == {"all": "cpu", "cpu_step": "cpu", "gpu_step": "gpu"}
