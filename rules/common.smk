# Helpers shared by every stage's .smk file (config validation, paths, the systems to score).
import glob
import os
import re
import sys
from pathlib import Path

# The cookproc library must be importable by every job, whatever its software environment. The
# .venv has it (`pip install -e .`); a job run in one of envs/*.yaml (--sdm conda) does not, and
# neither does a Snakemake installed elsewhere. So the workflow puts its own workflow/ folder on
# the module search path of the Snakemake process that reads this file (first, unless it is there
# already, as with the editable install; the rule files import cookproc too). Snakemake starts
# every script job with `sys.path.extend(<the search path of the Snakemake process running the
# job>)` (its script preamble), so the job's interpreter, a conda env's included, imports this
# checkout's cookproc.
# On SLURM, each job runs Snakemake again on its node, which reads this file again.
# PYTHONPATH would not do: Snakemake removes it from the environment of conda jobs (unless
# --conda-not-block-search-path-envvars). tests/contracts/test_rule_envs.py checks this.
WORKFLOW_PYTHON_DIR = os.path.join(workflow.basedir, "workflow")
if WORKFLOW_PYTHON_DIR not in sys.path:
    sys.path.insert(0, WORKFLOW_PYTHON_DIR)

from cookproc.core.config_files import error_source  # noqa: E402 (needs the path above)
from cookproc.core.config_schema import optional_path, validate_config  # noqa: E402
from cookproc.core.errors import ConfigError, InputError, stop  # noqa: E402
from snakemake.logging import logger  # noqa: E402
from cookproc.core.deps import STORE as WORKFLOW_STORE  # noqa: E402
from cookproc.core import registry  # noqa: E402
from cookproc.app.corpus import corpus_files, shard_files  # noqa: E402
from cookproc.app.subtitles import SUBTITLE_EXTENSIONS  # noqa: E402
from cookproc.data.upstream import FILES as UPSTREAM_FILES, FOLDERS as UPSTREAM_FOLDERS  # noqa: E402
from cookproc.evaluation.systems import USER_NAME as USER_SYSTEM_NAME, scan_user_systems  # noqa: E402
from cookproc.video.frames import VideoError, find_video  # noqa: E402

# Parsed syntax trees (code fingerprints) and validated configs are kept by content between runs
# (and cluster jobs): reading the workflow again only redoes what changed. A cache, never an
# input of a result (cookproc.core.deps.ContentStore).
WORKFLOW_STORE.use_file(os.path.join(".snakemake", "cookproc", "store.json"))

# Checked against workflow/schemas/, defaults filled (also in the sections behind a $ref). A bad
# value is named with its key and where it was set (--config, or a config file and line), on one
# line: stop() ends Snakemake with it, where an exception raised here would be shown with this
# file's line as a traceback.
try:
    validate_config(config, store=WORKFLOW_STORE)
except ConfigError as error:
    source = error_source(
        error,
        ["config.yaml", *map(os.path.relpath, workflow.config_settings.configfiles)],
        dict(workflow.config_settings.config),
    )
    stop(f"{source}: {error}" if source else str(error), logger.error)

# Files of the workflow itself are addressed from its own folder, so that it can run with any
# working directory (snakemake --directory, as the workflow tests do).
REPO_DIR = workflow.basedir
LIB = os.path.join(REPO_DIR, "workflow", "cookproc")
UPSTREAM = config["upstream"]["dir"]
USER_SYSTEMS_DIR = config["tables"]["user_systems_dir"]

# Paths that rules of several files read (the table of shared paths): written by one rule, spelled once.
# The benchmark's clips, written by rules/data.smk and read by every stage.
CLIPS = "results/dataset/clips.parquet"

SYSTEM_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


wildcard_constraints:
    system=SYSTEM_NAME,
    keyclips=SYSTEM_NAME,
    user=USER_SYSTEM_NAME,


def code_fingerprint(script):
    """Digest of the code ``workflow/scripts/<script>.py`` can execute (the script and the cookproc
    modules it imports, transitively), as a rule's ``params: code``: a real change to any of them
    reruns the rule, while comments, docstrings, layout, touching or moving the checkout do not
    (cookproc.core.fingerprint hashes syntax trees keyed by repository-relative paths)."""
    from cookproc.core.fingerprint import code_fingerprint as fingerprint

    return fingerprint(os.path.join(REPO_DIR, "workflow", "scripts", f"{script}.py"), LIB, REPO_DIR)


def repo_path(path):
    """A file of the workflow itself (schemas, tables shipped with the code), relative to the working
    directory: a checkout moved together with its results keeps the same input paths."""
    return os.path.relpath(os.path.join(REPO_DIR, path))


def repairs_file():
    """The repair table as a list of inputs (empty when none is configured)."""
    path = config["upstream"]["repairs"]
    return [repo_path(path)] if path else []


def upstream(path):
    """A file of the upstream benchmark (mirror or download)."""
    return os.path.join(UPSTREAM, path)


def files_in(folder):
    """Every file under a data folder, as inputs. Snakemake compares a file by checksum when its
    modification time is newer, but a folder only by that time: a mirror copied again with the same
    bytes would rerun everything. A folder not there yet (to be downloaded) stays one input."""
    if not os.path.isdir(folder):
        return [folder]
    return sorted(os.path.join(top, name) for top, _, names in os.walk(folder) for name in names)


def folder_of(key, folder):
    """The data folder whose files_in() are input ``key``, read off that input when the job runs (not
    a hard-coded path: Snakemake may relocate inputs, e.g. without a shared file system)."""
    first = files_in(folder)[0]
    suffix = first[len(folder) :]  # "" when the folder itself is the input (still to be downloaded)
    return lambda wildcards, input: os.path.normpath(input[key][0][: len(input[key][0]) - len(suffix)])


def upstream_root(wildcards, input):
    """The upstream folder, read off the rule's first upstream file, input.files (not a hard-coded prefix)."""
    return os.path.normpath(input.files[0][: -len(UPSTREAM_FILES[0])])


def upstream_download_root(wildcards, output):
    """The folder the upstream download fills, read off the rule's first output file, output.files."""
    return os.path.normpath(output.files[0][: -len(UPSTREAM_FILES[0])])


# The user-systems folder, read once: a file that is no system's, a bad name or two files for one
# system never stops the DAG from being built. Those are left out of the tables, and the job of
# rule check_user_systems (a target of `all` and `report_all` while there are any), which runs once
# Tables 4 and 5 are written (with the valid systems), fails with one message listing them all
# (`snakemake -k` builds everything else too).
USER_SYSTEMS = scan_user_systems(USER_SYSTEMS_DIR)
USER_SYSTEMS_CHECK = ["results/systems/user-systems.tsv"] if USER_SYSTEMS.problems else []
if USER_SYSTEMS.problems:
    logger.warning(USER_SYSTEMS.message())


def user_systems(kind):
    """Names of the user-supplied systems of one kind ('keyclips' or 'tuples') that have one file."""
    return USER_SYSTEMS.names(kind)


def user_system_files(kind, name):
    """Every file found for a user system (one when all is well; the import job fails otherwise)."""
    return USER_SYSTEMS.files(kind, name)


def keyclip_systems():
    """Key-clip systems of Table 4: configured ones, then user ones."""
    return list(config["tables"]["keyclip_systems"]) + [f"user-{n}" for n in user_systems("keyclips")]


def tuple_systems():
    """Tuple systems of Table 5: configured ones, then user ones."""
    return list(config["tables"]["tuple_systems"]) + [f"user-{n}" for n in user_systems("tuples")]


# The scored systems' entries in the system registry (cookproc.core.registry: kind, origin, producing
# rule, seeds, threshold rule), by kind and name, and those of Table 5's predicted key clips; a
# name it does not know stops the run here.
try:
    SYSTEMS = registry.configured({"keyclips": keyclip_systems(), "tuples": tuple_systems()})
    PREDICTED_KEYCLIPS = registry.configured({"keyclips": config["tables"]["predicted_keyclips"]})["keyclips"]
except registry.UnknownSystem as error:
    stop(f"config.yaml, tables: {error}", logger.error)

# Systems on the trained SRL tagger's parses (srl-heur-tagger, ...) among the configured ones: then the
# default target also builds the tagger's agreement with upstream's SRL and its EWT training data report.
TAGGER_IN_TABLES = any(
    entry.srl_backend == registry.TAGGER for kind in registry.KINDS for entry in SYSTEMS[kind].values()
)

# The cooking lexicons a system can read (registry.LEXICONS): upstream's list, and the one rebuilt the
# paper's way from the captions (rule lexicon_rebuild, rules/srl.smk).
LEXICONS = {"upstream": upstream(config["srl"]["upstream_lexicon"]), "rebuilt": "results/lexicon/rebuilt.lst"}

# The text-only supervised extractors, written by supervised_tuples_text (rules/supervised.smk) with
# the lexicon the system registry names: supervised-text on upstream's (the deployed one) and
# supervised-text-rebuiltlex on the rebuilt one. The wildcard is what follows "supervised-text".
SUPERVISED_TEXT = {entry.name: entry for entry in registry.made_by("supervised_tuples_text")}
SUPERVISED_TEXT_SUFFIX = "|".join(re.escape(name.removeprefix("supervised-text")) for name in SUPERVISED_TEXT)


def supervised_text_lexicon(wildcards):
    """Input function: the lexicon of supervised-text<suffix>, as the system registry names it."""
    return LEXICONS[SUPERVISED_TEXT[f"supervised-text{wildcards.suffix}"].lexicon]


def user_keyclips_files(wildcards):
    return user_system_files("keyclips", wildcards.user)


def user_tuples_files(wildcards):
    return user_system_files("tuples", wildcards.user)


# Shared paths of the key-clip stage (rules/keyclips.smk) that the supervised and deploy stages read
# too: the frozen sentence vectors (rule text_features) and the per-fold fine-tuned ones of rule
# keyclips_finetune, one file per seed.
TEXT_FEATURES = f"results/features/text/{config['keyclips']['text']['name']}.parquet"
FINETUNED_TEXT = f"results/features/text/finetuned/{config['keyclips']['text']['name']}.seed{{seed}}"


def gpus_for(device):
    """GPUs a job on torch device ``device`` asks for: one unless it is the CPU."""
    return 0 if device == "cpu" else 1


# How every torch job runs on its device (config `torch`; cookproc.core.torch_runtime).
TORCH = config["torch"]


# Input functions of the video stage (rules/video.smk).


def local_video(wildcards):
    """The video file of one job, or nothing: a missing video then fails (or is skipped) inside the
    job with a clear message instead of stopping the whole DAG."""
    try:
        return [str(find_video(config["video"]["videos_dir"], wildcards.video_id, config["video"]["video_extensions"]))]
    except VideoError:
        return []


def configured_file(path):
    """A user asset as an input when configured; when not, the script says which key to set."""
    return [path] if path else []


def listed_videos():
    with checkpoints.video_list.get().output[0].open() as handle:
        return [line.strip() for line in handle if line.strip()]


def per_listed_video(pattern):
    """Input function: ``pattern`` (with a {video_id} wildcard) for every video the checkpoint listed."""
    return lambda wildcards: expand(pattern, video_id=listed_videos())


# Input functions of rule procedures_extract (rules/procedures.smk).
# Snakemake reads nested --config values as strings, so `--config 'procedures={tuple_model: none}'` gives
# "none": "none" and "null" mean no model, here and in `cookproc extract --tuples none`.
PROCEDURES = {
    **config["procedures"],
    **{key: optional_path(config["procedures"].get(key)) for key in ("step_model", "keyclip_model", "tuple_model")},
}


PROCEDURE_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


def procedure_subtitles(wildcards):
    """The one subtitle / transcript file of ``name``. When there is none or several, or the name is
    not allowed, Snakemake stops while it builds the DAG with one line saying so (stop(): an input
    function's exception would be shown with a traceback of this file)."""
    if not re.fullmatch(PROCEDURE_NAME, wildcards.name):
        stop(
            f"procedures for {wildcards.name!r}: a name must match {PROCEDURE_NAME} (a letter or "
            "digit, then letters, digits, '_', '.' or '-'); rename the file in "
            f"{PROCEDURES['dir']} and ask for results/procedures/<name>.json",
            logger.error,
        )
    candidates = [os.path.join(PROCEDURES["dir"], f"{wildcards.name}.{ext}") for ext in SUBTITLE_EXTENSIONS]
    found = [path for path in candidates if os.path.exists(path)]
    if len(found) != 1:
        stop(
            f"procedures for {wildcards.name!r}: expected exactly one subtitle or transcript "
            f"file of {', '.join(candidates)}; found {', '.join(found) or 'none'}" + ("; keep one" if found else ""),
            logger.error,
        )
    return found[0]


def procedure_names():
    """Names of the user's subtitle / transcript files present (valid names only; the report shows
    their procedures)."""
    names = set()
    for ext in SUBTITLE_EXTENSIONS:
        for path in glob.glob(os.path.join(glob.escape(PROCEDURES["dir"]), f"*.{ext}")):
            name = os.path.basename(path)[: -len(ext) - 1]
            if re.fullmatch(PROCEDURE_NAME, name):
                names.add(name)
    return sorted(names)


def procedure_video(wildcards):
    """The optional video of ``name`` (first existing extension), as a list of zero or one file."""
    for ext in PROCEDURES["video_extensions"]:
        path = os.path.join(PROCEDURES["dir"], f"{wildcards.name}.{ext}")
        if os.path.exists(path):
            return [path]
    return []


def procedure_lexicon():
    return PROCEDURES["lexicon"] or upstream("youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst")


# How a file becomes a procedure (cookproc.app.procedures.ProcedureSettings): params of rule
# procedures_extract and of the corpus shards alike, and the model files those settings read.
# The key-clip selector reaches the scripts as an input only (input.keyclip_model).
PROCEDURE_SETTINGS = {
    key: PROCEDURES[key]
    for key in (
        "segmentation",
        "max_clip_s",
        "drop_sound_tags",
        "extractor",
        "srl_backend",
        "tagger_model",
        "device",
        "lowercase",
        "rolling_captions",
        "max_sentence_chars",
        "long_sentences",
        "language",
        "other_language",
        "longest_clip_s",
        "strict",
    )
}
# The procedures and corpus rules run the deployed selector and the tagger on procedures.device.
PROCEDURE_GPUS = 0 if PROCEDURES["device"] == "cpu" else 1
PROCEDURE_MODELS = dict(
    tagger=[PROCEDURES["tagger_model"]] if PROCEDURES["srl_backend"] == "tagger" and PROCEDURES["tagger_model"] else [],
    step_model=[PROCEDURES["step_model"]] if PROCEDURES["step_model"] else [],
    keyclip_model=[PROCEDURES["keyclip_model"]] if PROCEDURES["keyclip_model"] else [],
    tuple_model=[PROCEDURES["tuple_model"]] if PROCEDURES["tuple_model"] else [],
)
# The caption stage's outputs (rules/captions.smk) and its trained step models, one folder per label
# variant (rule deploy_step_model, rules/people.smk, copies one with its people's scores to results/models/).
CAPTIONS_DIR = "results/captions"
STEP_MODEL = f"{CAPTIONS_DIR}/models/steps-{{variant}}"
# The systems scored against people (rules/people.smk, rules/numbers.smk).
PEOPLE = config["people"]
# The neural text key-clip selector and the text-only supervised tuple extractor trained on every
# benchmark recipe (rules/deploy.smk).
DEPLOYED_SELECTOR = "results/models/keyclips-neural-text"
DEPLOYED_TUPLES = "results/models/tuples-supervised-text"


# Captions of the HTML report (rules/report.smk).
def report_caption(name):
    return os.path.join(REPO_DIR, "report", f"{name}.rst")


def corpus_shard_sources(folder, extensions, shards):
    """Input function of rules/corpus.smk: the files of one of ``shards`` shards of ``folder`` (listed
    when the DAG is built; a missing folder, no file or two files of one video stop Snakemake with
    one line)."""

    def sources(wildcards):
        try:
            files = corpus_files(folder, extensions)
        except InputError as error:
            stop(f"corpus: {error}", logger.error)
        return [str(path) for path in shard_files(files, int(wildcards.shard), shards)]

    return sources
