"""Rerun guarantees of the workflow, on the tiny fixture dataset: after a complete run nothing is
planned, and a change plans exactly the jobs it affects.

The workflow's own files (Snakefile, config.yaml, rules/, workflow/, profiles/) are snapshotted
into a sandbox, so that a test can edit a library module and so that edits other people make to
the checkout meanwhile do not leak in; jobs import the snapshot's cookproc (PYTHONPATH), and its
profiles/default applies by itself, as for a user. The sandbox is built once per module with a
complete run; each test works on a copy of its working directory (mtimes and Snakemake's metadata
kept), so no test sees another's changes.

New stages add rows to PARAM_CHANGES (e.g. the SRL argument filter, a fusion variant, a seed):
the change, and the exact jobs it must plan.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from fixtures import REPO, deep_merge, fixture_overrides, make_workdir, write_tiny_upstream

pytestmark = pytest.mark.slow

SNAKEMAKE = Path(sys.executable).parent / "snakemake"


class Sandbox:
    """A snapshot of the workflow (src: its code, config and profiles) and a working directory."""

    def __init__(self, root: Path, upstream: Path):
        self.root = root
        self.src = root / "src"
        self.upstream = upstream
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
        self.src.mkdir(parents=True)
        for name in ("Snakefile", "config.yaml"):
            shutil.copy2(REPO / name, self.src / name)
        for folder in ("rules", "workflow", "profiles", "envs"):
            shutil.copytree(REPO / folder, self.src / folder, ignore=ignore)
        self.work = self.configure(root / "work")

    def configure(self, work: Path, overrides: dict | None = None) -> Path:
        """Write work/config.yaml: the snapshot's config on the fixture, plus ``overrides``."""
        config = yaml.safe_load((self.src / "config.yaml").read_text())
        config = deep_merge(config, fixture_overrides(self.upstream, self.root))
        config = deep_merge(config, overrides or {})
        work.mkdir(parents=True, exist_ok=True)
        (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        return work

    def snakemake(self, work: Path, *args: str) -> str:
        """Run the snapshot in ``work`` as a user would: its profiles/default applies by itself."""
        cmd = [str(SNAKEMAKE), "-s", str(self.src / "Snakefile"), "--cores", "2", *args]
        env = dict(os.environ, PYTHONPATH=str(self.src / "workflow"))  # jobs import the snapshot's cookproc
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env, timeout=900)
        log = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"snakemake failed ({proc.returncode}): {' '.join(args)}\n{log[-6000:]}"
        assert f"workflow specific profile {self.src / 'profiles' / 'default'}" in log
        return log

    def copy_work(self, dest: Path) -> Path:
        """A copy of the built working directory; mtimes and .snakemake metadata preserved."""
        shutil.copytree(self.work, dest, symlinks=True)
        return dest


def planned(log: str) -> dict[str, int]:
    """{rule: jobs} of the first 'Job stats' table of a (dry-)run log; {} when nothing to do."""
    if "Nothing to be done" in log:
        return {}
    m = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal\s+\d+", log, re.DOTALL)
    assert m, f"no job stats in:\n{log[-3000:]}"
    return {name: int(count) for name, count in (line.split() for line in m.group(1).splitlines())}


def reasons(log: str) -> dict[str, str]:
    """{rule: reason} of the jobs a dry run lists (the last job of a rule wins)."""
    out, rule = {}, None
    for line in log.splitlines():
        m = re.match(r"^(?:local)?rule (\S+):$", line)
        if m:
            rule = m.group(1)
        m = re.match(r"^\s+reason: (.*)$", line)
        if m and rule:
            out[rule] = m.group(1)
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    root = tmp_path_factory.mktemp("rerun")
    box = Sandbox(root, write_tiny_upstream(root / "upstream"))
    box.snakemake(box.work)  # the complete run (target `all`)
    return box


@pytest.fixture
def work(sandbox, tmp_path) -> Path:
    return sandbox.copy_work(tmp_path / "work")


def test_a_complete_run_leaves_nothing_to_do(sandbox, work):
    log = sandbox.snakemake(work, "--dry-run")
    assert planned(log) == {}
    assert "Nothing to be done" in log


# (config change, the jobs it must plan: the rule whose params changed and everything downstream)
# (config change, the rule whose params it changes, rules that must be among those replanned). The
# exact plan is then derived from the DAG's own files: that rule and everything reading its outputs.
PARAM_CHANGES = [
    pytest.param({"tables": {"figure3_top": 5}}, "dataset_stats", {"dataset_stats"}, id="figure3_top"),
    pytest.param({"tables": {"masked": False}}, "table5", {"table5", "confidence_intervals"}, id="table5-masked"),
    pytest.param({"tables": {"bootstrap": {"seed": 7}}}, "confidence_intervals", {"confidence_intervals"},
                 id="bootstrap-seed"),
    pytest.param({"visual": {"corrected": {"wordnet_max_senses": 2}}}, "video_tuples_corrected",
                 {"video_tuples_corrected", "table5"}, id="fusion-corrected-wordnet"),
    pytest.param({"visual": {"paper": {"tie_key": "72"}}}, "video_tuples_paper", {"video_tuples_paper", "table5"},
                 id="fusion-paper-ties"),
    pytest.param({"kiddon": {"then_is_conjunction": True}}, "kiddon_train",
                 {"kiddon_train", "kiddon_segment", "table4", "table5"}, id="kiddon-then"),
    pytest.param({"srl": {"predicate_tags": ["VB", "VBD", "VBG", "VBN", "VBP", "VBZ"]}}, "srl_parse_spacy",
                 {"srl_parse_spacy", "srl_systems_heur", "table5"}, id="srl-predicate-tags"),
    pytest.param({"srl": {"seed": 14}}, "train_srl", {"train_srl", "srl_parse_tagger", "table4"}, id="srl-seed"),
    pytest.param({"supervised": {"tuples": {"verb_classifier": {"C": 1.0}}}}, "supervised_tuples",
                 {"supervised_tuples", "table5"}, id="verb-classifier"),
    # Blending weight: the tuned encoder's head is reused, never fine-tuned again.
    pytest.param({"supervised": {"keyclips": {"head_weight": 0.5}}}, "supervised_keyclips",
                 {"supervised_keyclips"}, id="supervised-head-weight"),
    pytest.param({"supervised": {"keyclips": {"encoder": {"finetune": {"lr": 0.0001}}}}}, "supervised_finetune",
                 {"supervised_finetune", "supervised_keyclips"}, id="supervised-encoder"),
]


def dag_jobs(forceall_log: str) -> list[tuple[str, set[str], set[str]]]:
    """(rule, input files, output files) of every job a `--forceall --dry-run` lists."""
    blocks = re.split(r"\n(?=\[[^\n]*\]\n(?:local)?rule )", forceall_log)
    jobs = []
    for block in blocks:
        m = re.search(r"^(?:local)?rule (\S+):$", block, re.MULTILINE)
        if not m:
            continue
        files = {key: set(v.group(1).split(", ")) if (v := re.search(rf"^\s+{key}: (.*)$", block, re.MULTILINE))
                 else set() for key in ("input", "output")}
        jobs.append((m.group(1), files["input"], files["output"]))
    return jobs


def downstream_rules(forceall_log: str, start: set[str]) -> set[str]:
    """``start`` and every rule that reads, directly or not, a file they write."""
    jobs = dag_jobs(forceall_log)
    found, grew = set(start), True
    while grew:
        written = {f for rule, _, outputs in jobs if rule in found for f in outputs}
        more = {rule for rule, inputs, _ in jobs if inputs & written} - found
        found |= more
        grew = bool(more)
    return found


def rules_reading(forceall_log: str, suffix: str) -> set[str]:
    """Rules with an input file ending in ``suffix``."""
    return {rule for rule, inputs, _ in dag_jobs(forceall_log) if any(f.endswith(suffix) for f in inputs)}


@pytest.fixture(scope="module")
def forceall_plan(sandbox, tmp_path_factory) -> str:
    return sandbox.snakemake(sandbox.copy_work(tmp_path_factory.mktemp("forceall") / "work"),
                             "--dry-run", "--forceall")


@pytest.mark.parametrize("change, changed_rule, must_include", PARAM_CHANGES)
def test_changing_a_parameter_plans_exactly_what_is_downstream_of_it(sandbox, work, forceall_plan, change,
                                                                       changed_rule, must_include):
    sandbox.configure(work, change)  # as a user editing config.yaml
    log = sandbox.snakemake(work, "--dry-run")
    changed = {rule for rule, why in reasons(log).items() if "Params have changed" in why}
    assert changed_rule in changed
    downstream = downstream_rules(forceall_plan, changed)
    assert must_include <= downstream
    # Exactly the rules whose params changed and all that reads from them; nothing else.
    assert set(planned(log)) == downstream | {"all"}
    assert "clips" not in planned(log) and "verify_upstream" not in planned(log)


def test_fine_tuning_settings_replan_the_sentence_variants_but_not_the_visual_one(sandbox, work):
    sandbox.configure(work, {"keyclips": {"neural": {"finetune": {"lr": 1e-4}}}})
    log = sandbox.snakemake(work, "--dry-run")
    changed = {rule for rule, why in reasons(log).items() if "Params have changed" in why}
    assert changed == {"keyclips_finetune"}
    assert {"keyclips_neural_text", "keyclips_neural_full"} <= set(planned(log))
    assert "keyclips_neural_visual" not in planned(log)


@pytest.mark.parametrize("change", [{"head_weight": 0.25}, {"context_window": 3}], ids=["head-weight", "context"])
def test_net_settings_never_fine_tune_the_encoder_again(sandbox, work, change):
    sandbox.configure(work, {"keyclips": {"neural": change}})
    log = sandbox.snakemake(work, "--dry-run")
    assert {"keyclips_neural_text", "keyclips_neural_full"} <= set(planned(log))
    assert "keyclips_finetune" not in planned(log)


def test_dropping_a_system_replans_only_what_lists_it(sandbox, work, forceall_plan):
    sandbox.configure(work, {"tables": {"keyclip_systems": ["upstream-neural"]}})
    log = sandbox.snakemake(work, "--dry-run")
    # Table 4 and the rules that take the list of systems (intervals, report pages) are replanned,
    # with what reads them; no system is recomputed.
    assert {"table4", "confidence_intervals"} <= set(planned(log))
    listing = {rule for rule, why in reasons(log).items() if "input files has changed" in why or "Params" in why}
    assert set(planned(log)) == downstream_rules(forceall_plan, listing) | {"all"}
    assert not {"import_upstream_neural", "kiddon_segment", "table5"} & set(planned(log))


# ----------------------------------------------------------------------------- library edits
def test_every_rule_lists_the_library_modules_its_script_imports(tmp_path):
    """Editing a module reruns exactly the rules that list it, so each rule must list them all."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

    from cookproc.deps import imported_library_files

    library = REPO / "workflow" / "cookproc"
    workdir = make_workdir(tmp_path / "work", write_tiny_upstream(tmp_path / "upstream"))
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow_api = api.workflow(snakefile=REPO / "Snakefile", workdir=workdir,
                                    resource_settings=ResourceSettings(), config_settings=ConfigSettings(),
                                    storage_settings=StorageSettings())
        rules = [rule for rule in workflow_api._workflow.rules if rule.script]  # private: rules as declared
    assert "table5" in {rule.name for rule in rules}
    missing = {}
    for rule in rules:
        script = (Path(str(rule.basedir)) / rule.script).resolve()
        listed = {str(Path(str(f)).relative_to(library)) for f in rule.input
                  if isinstance(f, str) and Path(str(f)).is_relative_to(library)}
        needed = {str(p.relative_to(library)) for p in imported_library_files(script, library)}
        if needed - listed:
            missing[rule.name] = sorted(needed - listed)
    assert not missing, f"rules whose lib() inputs miss modules their script imports: {missing}"


def edit(path: Path) -> None:
    """A real edit (content and mtime change), as a developer saving the file."""
    text = path.read_text()
    path.write_text(text + "\n# edited by tests/test_rerun.py\n")
    os.utime(path, None)


@pytest.fixture
def restore_src(sandbox):
    """Put edited sandbox sources back (content and mtime) after the test."""
    saved: dict[Path, tuple[str, os.stat_result]] = {}

    def remember(path: Path) -> Path:
        saved[path] = (path.read_text(), path.stat())
        return path

    yield remember
    for path, (text, st) in saved.items():
        path.write_text(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("module, must_include", [
    pytest.param("stats.py", {"dataset_stats"}, id="stats"),
    pytest.param("metrics.py", {"dataset_stats", "table4", "table5", "confidence_intervals"}, id="metrics"),
])
def test_editing_a_library_module_reruns_the_rules_that_use_it(sandbox, work, restore_src, forceall_plan,
                                                               module, must_include):
    edit(restore_src(sandbox.src / "workflow" / "cookproc" / module))
    log = sandbox.snakemake(work, "--dry-run")
    # Exactly the rules whose scripts import the module (their lib inputs list it), and what reads
    # their outputs; never the rules that do not use it.
    using = rules_reading(forceall_plan, f"workflow/cookproc/{module}")
    assert must_include <= downstream_rules(forceall_plan, using)
    assert set(planned(log)) == downstream_rules(forceall_plan, using) | {"all"}
    assert "clips" not in planned(log)
    for rule in using:
        # Snakemake gives one reason per job: a rule that also reads another user's output may be
        # reported as "updated by another job" instead.
        if rule not in downstream_rules(forceall_plan, using - {rule}):
            assert module in reasons(log)[rule], reasons(log)[rule]


# ----------------------------------------------------------------------------- intermediates
CLIPS = Path("results/dataset/clips.parquet")


def test_deleting_an_intermediate_reruns_its_producer_and_only_what_its_checksum_changed(sandbox, work):
    before = sha256(work / CLIPS)
    (work / CLIPS).unlink()
    # Every final output is still up to date: nothing needs the missing file now.
    assert planned(sandbox.snakemake(work, "--dry-run")) == {}
    # Asked for again, only its producer runs; the file comes back byte for byte.
    log = sandbox.snakemake(work, str(CLIPS))
    assert planned(log) == {"clips": 1}
    assert sha256(work / CLIPS) == before
    # It is now newer than everything downstream, but its checksum is the recorded one: no rerun.
    assert planned(sandbox.snakemake(work, "--dry-run")) == {}


def test_a_changed_intermediate_reruns_everything_downstream_of_it(sandbox, work, forceall_plan):
    """The other side of the checksum: different content does rerun its consumers."""
    table = pq.read_table(work / CLIPS)
    pq.write_table(table.slice(0, table.num_rows - 1), work / CLIPS)
    log = sandbox.snakemake(work, "--dry-run")
    downstream = downstream_rules(forceall_plan, {"clips"}) - {"clips"}
    assert {"dataset_stats", "import_upstream_neural", "table4", "table5", "all"} <= downstream
    assert set(planned(log)) == downstream and "verify_upstream" not in planned(log)
    assert "Updated input files" in reasons(log)["table5"] or "updated by another job" in reasons(log)["table5"]
    assert "Updated input files: results/dataset/clips.parquet" in reasons(log)["import_upstream_neural"]


def test_compiled_module_counts_by_its_c_source(tmp_path):
    # metrics imports cookproc._fuzz (compiled): its C source is what an edit changes, so a rule
    # whose script reaches metrics lists _fuzz.c, and one that does not, does not.
    from cookproc.deps import imported_library_files

    library = REPO / "workflow" / "cookproc"
    scorer = tmp_path / "scorer.py"
    scorer.write_text("from cookproc.metrics import score_keyclips\n")
    other = tmp_path / "other.py"
    other.write_text("import cookproc.errors\n")
    assert library / "_fuzz.c" in imported_library_files(scorer, library)
    assert library / "_fuzz.c" not in imported_library_files(other, library)
