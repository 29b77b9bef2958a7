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

import functools
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

from fixtures import (REPO, check_provenance_against_snakemake, deep_merge, fixture_overrides, make_workdir,
                      write_tiny_upstream)

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

    def snakemake(self, work: Path, *args: str, check: bool = True) -> str:
        """Run the snapshot in ``work`` as a user would: its profiles/default applies by itself."""
        cmd = [str(SNAKEMAKE), "-s", str(self.src / "Snakefile"), "--cores", "2", *args]
        env = dict(os.environ, PYTHONPATH=str(self.src / "workflow"))  # jobs import the snapshot's cookproc
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env, timeout=900)
        log = proc.stdout + proc.stderr
        if not check:
            assert proc.returncode != 0, f"snakemake succeeded where it should fail: {' '.join(args)}"
            return log
        assert proc.returncode == 0, f"snakemake failed ({proc.returncode}): {' '.join(args)}\n{log[-6000:]}"
        assert f"workflow specific profile {self.src / 'profiles' / 'default'}" in log
        return log

    def copy_work(self, name: str) -> Path:
        """A copy of the built working directory beside it (so the workflow's own files keep their
        relative paths, as for results inside a checkout); mtimes and .snakemake metadata preserved."""
        dest = self.root / name
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
    return sandbox.copy_work(f"work-{tmp_path.name}")


def test_every_parquet_of_the_whole_dag_carries_the_provenance_snakemake_recorded(sandbox):
    """Issue 39: each file's rule, inputs, params and input digests agree with Snakemake's record."""
    checked = check_provenance_against_snakemake(sandbox.work)
    assert len(checked) == len(list((sandbox.work / "results").rglob("*.parquet"))) >= 20
    assert len(set(checked.values())) >= 15, sorted(set(checked.values()))


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
    pytest.param({"video": {"corrected": {"wordnet_max_senses": 2}}}, "video_tuples_corrected",
                 {"video_tuples_corrected", "table5"}, id="fusion-corrected-wordnet"),
    pytest.param({"video": {"paper": {"tie_key": "72"}}}, "video_tuples_paper", {"video_tuples_paper", "table5"},
                 id="fusion-paper-ties"),
    pytest.param({"kiddon": {"then_is_conjunction": True}}, "kiddon_train",
                 {"kiddon_train", "kiddon_segment", "table4", "table5"}, id="kiddon-then"),
    pytest.param({"srl": {"predicate_tags": ["VB", "VBD", "VBG", "VBN", "VBP", "VBZ"]}}, "srl_parse_spacy",
                 {"srl_parse_spacy", "srl_systems_heur", "table5"}, id="srl-predicate-tags"),
    pytest.param({"srl": {"tagger": {"seed": 14}}}, "train_srl", {"train_srl", "srl_parse_tagger", "table4"}, id="srl-seed"),
    pytest.param({"supervised": {"tuples": {"verb_classifier": {"C": 1.0}}}}, "supervised_tuples",
                 {"supervised_tuples", "table5"}, id="verb-classifier"),
    # Blending weight: the finetuned encoder's head is reused, never fine-tuned again.
    pytest.param({"supervised": {"keyclips": {"head_weight": 0.5}}}, "supervised_keyclips",
                 {"supervised_keyclips"}, id="supervised-head-weight"),
    pytest.param({"supervised": {"keyclips": {"encoder": {"finetune": {"learning_rate": 0.0001}}}}}, "supervised_finetune",
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
    return sandbox.snakemake(sandbox.copy_work("work-forceall"),
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
    sandbox.configure(work, {"keyclips": {"neural": {"finetune": {"learning_rate": 1e-4}}}})
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
LIBRARY = REPO / "workflow" / "cookproc"
# Every library file whose edit a test makes: the modules and the compiled module's C source.
LIBRARY_FILES = sorted(p.relative_to(LIBRARY).as_posix() for p in [*LIBRARY.rglob("*.py"), *LIBRARY.rglob("*.c")]
                       if "__pycache__" not in p.parts)


def declared_rules(snakefile: Path, workdir: Path) -> list:
    """The workflow's rules as Snakemake reads them (private API: rules as declared)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow_api = api.workflow(snakefile=snakefile, workdir=workdir, resource_settings=ResourceSettings(),
                                    config_settings=ConfigSettings(), storage_settings=StorageSettings())
        return list(workflow_api._workflow.rules)


@functools.lru_cache(maxsize=None)
def executable_library_files(script: Path, workflow_dir: Path) -> frozenset[str]:
    """Library files (relative to cookproc/) that ``script`` can execute, found by the standard
    library's modulefinder: an oracle independent of cookproc.core.deps, which the fingerprints use."""
    from modulefinder import ModuleFinder

    finder = ModuleFinder(path=[str(workflow_dir)])  # third-party imports stay unresolved: not ours
    finder.run_script(str(script))
    library = workflow_dir / "cookproc"
    found = set()
    for name in [*finder.modules, *finder.badmodules]:
        if name != "cookproc" and not name.startswith("cookproc."):
            continue
        rel = Path(*name.split(".")[1:]) if "." in name else Path("__init__")
        for candidate in (library / rel.with_suffix(".py"), library / rel / "__init__.py", library / rel.with_suffix(".c")):
            # A compiled module (found as an extension or as missing) counts by its C source.
            if candidate.exists():
                found.add(candidate.relative_to(library).as_posix())
                break
    return frozenset(found)


@pytest.fixture(scope="module")
def rule_scripts(sandbox) -> dict[str, Path]:
    """{rule: its script in the sandbox} for every rule that runs a script."""
    return {rule.name: (Path(str(rule.basedir)) / rule.script).resolve()
            for rule in declared_rules(sandbox.src / "Snakefile", sandbox.work) if rule.script}


def test_every_rule_fingerprints_the_code_its_script_can_execute(tmp_path):
    """Each rule's ``params: code`` is the fingerprint of its own script, over a superset of what
    the script can execute; no rule takes library files (or absolute repository paths) as inputs."""
    from cookproc.core.fingerprint import code_files, code_fingerprint

    workdir = make_workdir(tmp_path / "work", write_tiny_upstream(tmp_path / "upstream"))
    rules = [rule for rule in declared_rules(REPO / "Snakefile", workdir) if rule.script]
    assert "table5" in {rule.name for rule in rules}
    wrong, missing, inputs = {}, {}, {}
    for rule in rules:
        script = (Path(str(rule.basedir)) / rule.script).resolve()
        if rule.params.get("code") != code_fingerprint(script, LIBRARY, REPO):
            wrong[rule.name] = rule.params.get("code")
        covered = {p.resolve().relative_to(LIBRARY).as_posix() for p in code_files(script, LIBRARY)[1:]}
        if executable_library_files(script, REPO / "workflow") - covered:
            missing[rule.name] = sorted(executable_library_files(script, REPO / "workflow") - covered)
        library_inputs = [f for f in rule.input if isinstance(f, str) and
                          (Path(f).is_absolute() and Path(f).is_relative_to(REPO) or "workflow/cookproc/" in f)]
        if library_inputs:
            inputs[rule.name] = library_inputs
    assert not wrong, f"rules whose params.code is not their own script's fingerprint: {sorted(wrong)}"
    assert not missing, f"library files a script can execute but its fingerprint misses: {missing}"
    assert not inputs, f"rules with library files or absolute repository paths as inputs: {inputs}"


def edit(path: Path) -> None:
    """A real edit (the syntax tree changes), as a developer saving the file."""
    text = path.read_text()
    probe = "\nstatic int fingerprint_probe;\n" if path.suffix == ".c" else "\n_fingerprint_probe = 1\n"
    path.write_text(text + probe)


@pytest.fixture
def restore_src(sandbox):
    """Put edited sandbox sources back (content and mtime) after the test."""
    saved: dict[Path, tuple[str, os.stat_result]] = {}

    def remember(path: Path) -> Path:
        if path not in saved:
            saved[path] = (path.read_text(), path.stat())
        return path

    yield remember
    for path, (text, st) in saved.items():
        path.write_text(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def rules_that_can_execute(module: str, rule_scripts: dict[str, Path], workflow_dir: Path) -> set[str]:
    return {rule for rule, script in rule_scripts.items() if module in executable_library_files(script, workflow_dir)}


@pytest.mark.parametrize("module", LIBRARY_FILES)
def test_editing_any_library_module_changes_exactly_the_fingerprints_of_the_rules_that_can_execute_it(
        sandbox, restore_src, rule_scripts, module):
    """Every module, at the level of the rules' ``params: code`` (what Snakemake compares); the
    end-to-end plans of a sample of modules are checked below."""
    from cookproc.core.fingerprint import code_fingerprint

    library, repo = sandbox.src / "workflow" / "cookproc", sandbox.src
    before = {rule: code_fingerprint(script, library, repo) for rule, script in rule_scripts.items()}
    edit(restore_src(library / module))
    after = {rule: code_fingerprint(script, library, repo) for rule, script in rule_scripts.items()}
    changed = {rule for rule in rule_scripts if before[rule] != after[rule]}
    assert changed == rules_that_can_execute(module, rule_scripts, sandbox.src / "workflow")


# End to end: a module every script runs, leaf modules of single stages, the compiled module's C
# source, and a module no rule's script runs (the plan must then be empty).
PLAN_MODULES = ["core/logs.py", "evaluation/stats.py", "scoring/metrics.py", "scoring/_fuzz.c", "srl/tagger.py",
                "keyclips/net.py", "core/fingerprint.py"]


@pytest.mark.parametrize("module", PLAN_MODULES)
def test_editing_a_library_module_plans_exactly_the_rules_that_can_execute_it_and_their_descendants(
        sandbox, work, restore_src, forceall_plan, rule_scripts, module):
    edit(restore_src(sandbox.src / "workflow" / "cookproc" / module))
    log = sandbox.snakemake(work, "--dry-run")
    in_dag = {rule for rule, _, _ in dag_jobs(forceall_plan)}  # rules with a job for target `all`
    using = rules_that_can_execute(module, rule_scripts, sandbox.src / "workflow") & in_dag
    changed = {rule for rule, why in reasons(log).items() if "Params have changed" in why}
    # Snakemake gives one reason per job: a rule that also reads another user's output may be
    # reported as "updated by another job" instead.
    assert changed <= using
    assert {rule for rule in using if rule not in downstream_rules(forceall_plan, using - {rule})} <= changed
    expected = downstream_rules(forceall_plan, using) | {"all"} if using else set()
    assert set(planned(log)) == expected
    if module == "keyclips/net.py":  # the neural net: the CPU baselines stay as they are
        assert {"keyclips_neural_text", "keyclips_neural_full"} <= set(planned(log))
        assert not {"keyclips_tfidf", "supervised_keyclips", "keyclips_finetune"} & set(planned(log))


def relaid(path: Path) -> str:
    """The same code laid out anew: comments added, docstrings reworded, reformatted."""
    text = path.read_text()
    if path.suffix == ".c":
        return "/* Reformatted by tests/workflow/test_rerun.py. */\n" + text.replace(";", " ;").replace("{", "{\n")
    import ast

    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            node.body[0].value.value += " (reworded)"
    return "# A comment added by tests/workflow/test_rerun.py.\n" + ast.unparse(tree) + "\n# and one at the end\n"


def test_comments_docstrings_layout_and_touches_rerun_nothing(sandbox, work, restore_src):
    files = [p for p in (sandbox.src / "workflow").rglob("*") if p.suffix in (".py", ".c")
             and "__pycache__" not in p.parts]
    assert len(files) > 50
    for path in files:
        path.write_text(relaid(restore_src(path)))
    for path in (sandbox.src / "rules").glob("*.smk"):
        restore_src(path)
        os.utime(path, None)  # touched, unchanged
    log = sandbox.snakemake(work, "--dry-run")
    assert planned(log) == {}, reasons(log)


def test_a_checkout_moved_with_its_results_plans_nothing(sandbox, work, tmp_path):
    """The workflow and its working directory copied elsewhere together (the upstream data stays)."""
    moved = Sandbox.__new__(Sandbox)
    moved.root, moved.upstream = tmp_path / "moved", sandbox.upstream
    moved.src = moved.root / "src"
    shutil.copytree(sandbox.src, moved.src, symlinks=True)
    moved_work = shutil.copytree(work, moved.root / "work", symlinks=True)
    log = moved.snakemake(moved_work, "--dry-run")
    assert planned(log) == {}, reasons(log)


def test_data_folders_copied_again_with_the_same_bytes_plan_nothing(sandbox, work):
    """The upstream mirror and the EWT corpus copied again (every file and folder newer than the
    results, same bytes): files are compared by checksum, so nothing reruns."""
    folders = [sandbox.upstream, sandbox.root / "propbank-ewt"]
    saved = {path: path.stat() for folder in folders for path in [folder, *folder.rglob("*")]}
    assert len(saved) > 20
    try:
        for path in saved:
            os.utime(path, None)
        log = sandbox.snakemake(work, "--dry-run")
    finally:
        for path, st in saved.items():
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert planned(log) == {}, reasons(log)


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
    # metrics imports cookproc.scoring._fuzz (compiled, through similarity): its C source is what an edit
    # changes, so a rule whose script reaches metrics lists _fuzz.c, and one that does not, does not.
    from cookproc.core.deps import imported_library_files

    library = REPO / "workflow" / "cookproc"
    scorer = tmp_path / "scorer.py"
    scorer.write_text("from cookproc.scoring.metrics import score_keyclips\n")
    other = tmp_path / "other.py"
    other.write_text("import cookproc.core.errors\n")
    assert library / "scoring" / "_fuzz.c" in imported_library_files(scorer, library)
    assert library / "scoring" / "_fuzz.c" not in imported_library_files(other, library)


def test_a_damaged_intermediate_fails_naming_it_and_the_next_plain_run_rebuilds_it(sandbox, work, tmp_path):
    """A flipped byte, timestamp kept: nothing looks changed until a job reads the file; that job
    fails naming it and moves it aside, and a plain rerun rebuilds it, byte for byte."""
    from cookproc.core.errors import IntermediateError
    from cookproc.core.parquet_io import read_table

    spacy, tuples = work / "results/srl/spacy.parquet", work / "results/tuples/srl-heur-spacy.parquet"
    before = {path: sha256(path) for path in (spacy, tuples)}
    original, st = spacy.read_bytes(), spacy.stat()
    # The first position, from the middle on, where the flip is damage (not an unread footer byte).
    probe = tmp_path / "probe.parquet"
    for position in range(len(original) // 2, len(original)):
        damaged = bytearray(original)
        damaged[position] ^= 0xFF
        probe.write_bytes(damaged)
        try:
            read_table(probe)
        except IntermediateError:
            break
    else:
        pytest.fail("no byte flip in the second half of the file was detected")
    spacy.write_bytes(damaged)
    os.utime(spacy, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert planned(sandbox.snakemake(work, "--dry-run")) == {}

    # Something needs the reader again (here: its output is gone and asked for). The run fails
    # there, naming the file, and moves the file aside ...
    tuples.unlink()
    target = str(tuples.relative_to(work))
    log = sandbox.snakemake(work, target, check=False)
    logs = log + "".join(p.read_text() for p in (work / "logs").rglob("srl_systems*.log"))
    assert "results/srl/spacy.parquet is damaged" in logs
    assert not spacy.exists() and spacy.with_name("spacy.parquet.damaged").read_bytes() == bytes(damaged)
    # ... so the same command again rebuilds it, byte for byte, and finishes.
    log = sandbox.snakemake(work, target)
    assert {"srl_parse_spacy", "srl_systems_heur"} <= set(planned(log))
    assert {path: sha256(path) for path in (spacy, tuples)} == before
    assert planned(sandbox.snakemake(work, "--dry-run")) == {}
