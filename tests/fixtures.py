"""A tiny, fully synthetic upstream folder with every file the workflow reads.

Six benchmark videos of four recipes, a few clips each, with gold annotations, the paper's
key-clip predictions, SRL output, TSM segment predictions, a lexicon, EPIC class lists,
transcripts and captions (plus two non-benchmark videos for the unsupervised corpora). Small
enough for a whole-DAG test in seconds; shaped like the real files in every detail the parsers
check.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

HEADER = ["No", "Title", "VideoUrl", "TimeStamp", "Sentence", "RowNumber", "IsUsefulSentence", "Key steps",
          "Verb", "Object(directly related with Verb)", "Location", "Time", "Temperature",
          "Other important phrase(like with"]

# (sentence, is_key, verbs, objects, locations, times, temperatures, others, neural prediction)
VIDEOS = {
    "vidPizza001": ("pizza margherita", [
        ("hi guys , welcome to my kitchen .", 0, "", "", "", "", "", "", 0),
        ("first we 're going to stretch the dough on the board .", 1, "stretch", "dough", "board", "", "", "", 1),
        ("then spread the tomato sauce over the dough .", 1, "spread", "tomato sauce", "dough", "", "", "", 1),
        ("add some fresh basil and mozzarella .", 1, "add", "basil;mozzarella", "", "", "", "", 0),
        ("bake it in the oven for 10 minutes at 450 degrees .", 1, "bake", "pizza", "oven", "10 minutes", "450 degrees", "", 1),
        ("thanks for watching , subscribe .", 0, "", "", "", "", "", "", 1),
    ]),
    "vidPizza002": ("pizza margherita", [
        ("today i 'm making pizza .", 0, "", "", "", "", "", "", 0),
        ("roll the dough with a rolling pin .", 1, "roll", "dough", "", "", "", "rolling pin", 1),
        ("put the sauce and the cheese on top .", 1, "put, add", "sauce;cheese", "top", "", "", "", 1),
        ("it smells so good .", 0, "", "", "", "", "", "", 0),
        ("slide the pizza into the hot oven .", 1, "slide", "pizza", "oven", "", "", "", 0),
    ]),
    "vidSoup0003": ("tomato soup", [
        ("hello everyone .", 0, "", "", "", "", "", "", 0),
        ("chop the onions and the garlic .", 1, "chop", "onions;garlic", "", "", "", "", 1),
        ("heat the oil in a large pot .", 1, "heat", "oil", "large pot", "", "", "", 1),
        ("now we add the tomatoes and stir .", 1, "add, stir", "tomatoes", "pot", "", "", "", 1),
        ("let it simmer for 20 minutes .", 1, "simmer", "soup", "", "20 minutes", "", "", 0),
        ("that 's it for today .", 0, "", "", "", "", "", "", 0),
    ]),
    "vidSoup0004": ("tomato soup", [
        ("welcome back to the channel .", 0, "", "", "", "", "", "", 0),
        ("cut the tomatoes in half .", 1, "cut", "tomatoes", "", "", "", "in half", 1),
        ("blend the soup until smooth .", 1, "blend", "soup", "", "", "", "until smooth", 1),
        ("serve it with some bread .", 1, "serve", "soup", "", "", "", "bread", 0),
        ("enjoy .", 0, "", "", "", "", "", "", 0),
    ]),
    # Two more recipes: leave-recipes-out folds need two recipes each (one for inner validation).
    "vidSalad007": ("green salad", [
        ("hey there , today a quick salad .", 0, "", "", "", "", "", "", 0),
        ("wash the lettuce in cold water .", 1, "wash", "lettuce", "cold water", "", "", "", 1),
        ("slice the cucumber thinly .", 1, "slice", "cucumber", "", "", "", "thinly", 1),
        ("toss everything with the dressing .", 1, "toss", "everything", "", "", "", "dressing", 0),
    ]),
    "vidSalad008": ("fruit salad", [
        ("so let 's get started .", 0, "", "", "", "", "", "", 1),
        ("chop the tomatoes and the onion .", 1, "chop", "tomatoes;onion", "", "", "", "", 1),
        ("mix the oil and the vinegar in a bowl .", 1, "mix", "oil;vinegar", "bowl", "", "", "", 1),
        ("see you next time .", 0, "", "", "", "", "", "", 0),
    ]),
}
SECONDS_PER_CLIP = 7.0

# Small EPIC-Kitchens class lists (same format as upstream's; ids need not be the real ones).
EPIC_VERBS = [(0, "take", ["take", "grab", "pick", "get"]), (1, "put", ["put", "place", "lay", "put-down"]),
              (2, "open", ["open"]), (3, "cut", ["cut", "chop", "slice", "dice"]),
              (4, "mix", ["mix", "stir", "blend", "whisk"]), (5, "pour", ["pour", "add"])]
EPIC_NOUNS = [(0, "Nothing", ["Nothing"]), (1, "pan", ["pan", "pan:frying", "pot", "saucepan"]),
              (2, "board:chopping", ["board:chopping", "board", "chopping:board"]),
              (3, "onion", ["onion", "onion:spring"]), (4, "tomato", ["tomato", "tomato:cherry"]),
              (5, "dough", ["dough"]), (6, "oil", ["oil", "oil:olive"]), (7, "sauce", ["sauce", "sauce:tomato"])]
# Top-1 (verb id, noun id) per 5-second segment, cycled.
SEGMENT_PREDICTIONS = [(3, 3), (1, 1), (4, 7), (0, 5), (5, 6), (3, 4)]

LEXICON = ["add", "stretch", "spread", "bake", "roll", "put", "slide", "chop", "heat", "stir", "simmer", "cut",
           "blend", "serve", "mix", "oil", "salt", "pour", "take", "wash", "slice", "toss"]
EXTRA_VIDEOS = {  # outside the benchmark, like most of YouCook2: the unsupervised corpora, and the
    # caption stage's training, inner-validation (SHA-1 of the id starts with 4 or 5: vidExtra013, 016)
    # and people's test videos (0-3: vidExtra007, 009, 014)
    "vidExtra005": ["add the salt and mix well .", "chop the carrots .", "pour the batter into the pan ."],
    "vidExtra006": ["heat a pan .", "fry the eggs for 2 minutes .", "serve hot ."],
    "vidExtra007": ["hello and welcome back .", "chop the onions finely .", "now throw the onions in the pan .",
                    "stir the sauce for a minute .", "thanks for watching , subscribe ."],
    "vidExtra008": ["hi everyone .", "slice the tomatoes .", "add the tomatoes to the bowl .",
                    "mix the salad with the dressing .", "that 's it ."],
    "vidExtra009": ["welcome to my kitchen .", "boil the pasta in salted water .", "drain the pasta .",
                    "add the sauce and stir ."],
    "vidExtra010": ["hello guys .", "cut the chicken into pieces .", "fry the chicken in the oil .",
                    "serve the chicken with rice ."],
    "vidExtra011": ["today we make soup .", "chop the carrots and the onions .", "boil the water in a pot .",
                    "add the carrots to the pot .", "season the soup with salt ."],
    "vidExtra012": ["hi there .", "whisk the eggs in a bowl .", "pour the eggs into the pan .",
                    "fold the omelette .", "thanks for watching ."],
    "vidExtra013": ["hello .", "spread the butter on the bread .", "place the cheese on the bread .",
                    "bake the bread in the oven ."],
    "vidExtra014": ["welcome back .", "mix the flour and the sugar .", "add the eggs to the flour .",
                    "bake the cake for 30 minutes ."],
    "vidExtra015": ["hey guys .", "peel the potatoes .", "cut the potatoes into cubes .",
                    "fry the potatoes in the oil .", "that 's it for today ."],
    "vidExtra016": ["hi .", "chop the garlic .", "heat the oil in a pan .", "add the garlic to the pan ."],
}


def timestamp(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    return f"{int(minutes):02d}:{secs:04.1f}"


def write_tiny_upstream(root: str | Path) -> Path:
    """Write the fixture under ``root`` (the upstream repository layout) and return ``root``."""
    root = Path(root)
    yc = root / "youcook2"
    (yc / "transcript").mkdir(parents=True, exist_ok=True)
    (yc / "split").mkdir(parents=True, exist_ok=True)

    rows, tsv_rows, srl_verbs, srl_args = [], [], {}, {}
    number = 0
    for video_id, (title, clips) in VIDEOS.items():
        srl_verbs[video_id], srl_args[video_id] = [], []
        for idx, (sentence, key, verbs, objects, locations, times, temps, others, pred) in enumerate(clips):
            number += 1
            row = [str(number), title, f"https://www.youtube.com/watch?v={video_id}",
                   timestamp(idx * SECONDS_PER_CLIP + 0.3), sentence, str(idx), str(key),
                   sentence.rstrip(" .") if key else "", verbs, objects, locations, times, temps, others]
            rows.append(row)
            tsv_rows.append(row + [str(pred)])
            # A plausible SRL-with-heuristics output: first verb and object when the clip is key.
            first_verb = verbs.split(",")[0].strip()
            srl_verbs[video_id].append([first_verb] if key and first_verb else [])
            srl_args[video_id].append([objects.split(";")[0]] if key and objects else [])
    with open(yc / "reviewed_0812.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    with open(yc / "reviewed_0812.attach_key_sent_selection.tsv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(HEADER + ["key_sentence_prediction"])
        writer.writerows(tsv_rows)
    (yc / "srl_pred.json").write_text(json.dumps([srl_verbs, srl_args]), encoding="utf-8")
    (yc / "1.2.cooking_vocab.strict_filtered.unsorted.lst").write_text("\n".join(LEXICON) + "\n", encoding="utf-8")

    for name, classes, column in (("EPIC_verb_classes.csv", EPIC_VERBS, "verbs"),
                                  ("EPIC_noun_classes.csv", EPIC_NOUNS, "nouns")):
        with open(yc / name, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([f"{column[:-1]}_id", "class_key", column])
            for class_id, key, members in classes:
                writer.writerow([class_id, key, repr(members)])

    manifest, predictions, captions = [], [], []
    all_videos = {v: [c[0] for c in clips] for v, (_, clips) in VIDEOS.items()} | EXTRA_VIDEOS
    for video_id, sentences in all_videos.items():
        duration = len(sentences) * SECONDS_PER_CLIP + 1.0
        n10 = math.ceil(duration / 10)
        for k in range(1, n10 + 1):
            start, end = (k - 1) * 10.0, min(k * 10.0, duration)
            manifest.append(f"{video_id}_{k:04d} {video_id} {start:.4f} {end:.4f}")
            halves = [2 * k - 1] if end - start <= 5 else [2 * k - 1, 2 * k]
            for seg in halves:
                verb, noun = SEGMENT_PREDICTIONS[(seg - 1) % len(SEGMENT_PREDICTIONS)]
                predictions.append(f"imgs_cliped_5s/{video_id}_{seg:04d} 150 0 "
                                   f"{EPIC_VERBS[verb][1]} {EPIC_NOUNS[noun][1]}")
        (yc / "transcript" / f"{video_id}.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
        steps = [s for s in sentences if not s.startswith(("hi", "hello", "welcome", "today", "thanks", "that"))]
        (yc / "split" / f"{video_id}.txt").write_text("\n".join(s.rstrip(" .") for s in steps) + "\n",
                                                       encoding="utf-8")
        for i, step in enumerate(steps):
            captions.append(f"https://www.youtube.com/watch?v={video_id}\t{i * 7}\t{i * 7 + 6}\t{step.rstrip(' .')}")
    (yc / "clip_manifest_10s.txt").write_text("\n".join(manifest) + "\n", encoding="utf-8")
    (yc / "clip_prediction_5s.txt").write_text("\n".join(predictions) + "\n", encoding="utf-8")
    (yc / "urlsegmentcaption.txt").write_text("\n".join(captions) + "\n", encoding="utf-8")
    return root


# A tiny PropBank-EWT pair (skeletons without words + CoNLL-U with words), one document per split,
# so that the SRL training data, training and tagging rules run end to end on the fixture.
EWT_SKELETON = """\
google/ewt/answers/00/{doc}.xml 0 0 [WORD] VB (TOP(S(VP* chop chop.01 (V*)
google/ewt/answers/00/{doc}.xml 0 1 [WORD] DT (NP* - - (ARG1*
google/ewt/answers/00/{doc}.xml 0 2 [WORD] NNS *) - - *)
google/ewt/answers/00/{doc}.xml 0 3 [WORD] IN (PP* - - (ARGM-LOC*
google/ewt/answers/00/{doc}.xml 0 4 [WORD] DT (NP* - - *
google/ewt/answers/00/{doc}.xml 0 5 [WORD] NN *))) - - *)
google/ewt/answers/00/{doc}.xml 0 6 [WORD] . *)) - - *

google/ewt/answers/00/{doc}.xml 1 0 [WORD] PRP (TOP(S(NP*) - - (ARG0*)
google/ewt/answers/00/{doc}.xml 1 1 [WORD] VBD (VP* add add.02 (V*)
google/ewt/answers/00/{doc}.xml 1 2 [WORD] NN (NP*)) - - (ARG1*)
google/ewt/answers/00/{doc}.xml 1 3 [WORD] . *)) - - *
"""
EWT_CONLLU = """\
# sent_id = 1
1\tchop\tchop\tVERB\tVB\t_\t0\troot\t_\t_
2\tthe\tthe\tDET\tDT\t_\t3\tdet\t_\t_
3\tonions\tonion\tNOUN\tNNS\t_\t1\tobj\t_\t_
4\ton\ton\tADP\tIN\t_\t6\tcase\t_\t_
5\tthe\tthe\tDET\tDT\t_\t6\tdet\t_\t_
6\tboard\tboard\tNOUN\tNN\t_\t1\tobl\t_\t_
7\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_

# sent_id = 2
1\twe\twe\tPRON\tPRP\t_\t2\tnsubj\t_\t_
2\tadded\tadd\tVERB\tVBD\t_\t0\troot\t_\t_
3\tsalt\tsalt\tNOUN\tNN\t_\t2\tobj\t_\t_
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_
"""


def write_tiny_propbank_ewt(root: str | Path) -> Path:
    """A propbank-ewt folder (layout of ../shared/data/propbank-ewt) with one document per split."""
    root = Path(root)
    (root / "propbank-release/docs/evaluation").mkdir(parents=True, exist_ok=True)
    for split, doc in (("train", "d1"), ("dev", "d2"), ("test", "d3")):
        (root / f"propbank-release/docs/evaluation/ewt.{split}.txt").write_text(f"answers/00/{doc}.xml\n")
        skel = root / f"propbank-release/data/google/ewt/answers/00/{doc}.xml.gold_skel"
        skel.parent.mkdir(parents=True, exist_ok=True)
        skel.write_text(EWT_SKELETON.format(doc=doc))
        conllu = root / f"UD_English-EWT/not-to-release/sources/answers/{doc}.xml.conllu"
        conllu.parent.mkdir(parents=True, exist_ok=True)
        conllu.write_text(EWT_CONLLU)
    return root


def n_clips() -> int:
    return sum(len(clips) for _, clips in VIDEOS.values())


if __name__ == "__main__":  # write a fixture folder for manual runs: python tests/fixtures.py DIR
    import sys

    print(write_tiny_upstream(sys.argv[1]))


# ----------------------------------------------------------------------------- running the workflow
REPO = Path(__file__).resolve().parents[1]


def deep_merge(base: dict, overrides: dict) -> dict:
    out = dict(base)
    for key, value in overrides.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


#: Tables restricted to the upstream systems: for tests about the tables, report or user systems
#: rather than about a stage (each stage's tests cover its own systems), and quicker.
UPSTREAM_SYSTEMS_ONLY = {"tables": {"keyclip_systems": ["upstream-neural", "upstream-srl-heur"],
                                    "tuple_systems": ["upstream-srl-heur"], "predicted_keyclips": ["upstream-neural"]}}


def fixture_overrides(upstream_dir: str | Path, scratch_dir: str | Path) -> dict:
    """Config settings that point the workflow at the fixture: its upstream folder (unpinned, so no
    checksums or repairs), a tiny EWT pair on which the SRL tagger trains briefly, and small
    cross-validation settings for its four recipes. The EWT pair is written under ``scratch_dir``
    (a test's own folder), never beside ``upstream_dir``, which may be the shared mirror."""
    ewt = write_tiny_propbank_ewt(Path(scratch_dir) / "propbank-ewt")
    return {"upstream": {"dir": str(upstream_dir), "verify_checksums": False, "repairs": None},
            "srl": {"propbank_ewt_dir": str(ewt), "tagger": {"epochs": 2, "hidden": 16, "projection": 16}, "device": "cpu"},
            # Four recipes: two leave-recipes-out folds of two; one short training run. A fold's inner
            # validation is one recipe, too few for nested selection: one candidate each (or none). Two
            # seeds, so that Table 4's rows of the neural selectors are means over seeds, as by default.
            "keyclips": {"folds": {"k": 2}, "neural": {"seeds": [0, 1], "max_epochs": 3, "patience": 2,
                                                    "finetune": {"layers": 1},
                                                    "selection": {"candidates": {
                                                        "context_window": [1], "lexical": [True], "head_weight": [0.5],
                                                        "threshold_metric": None}}}},
            # The supervised classifier's second encoder: the packaged MiniLM's top layer (quick).
            "supervised": {"keyclips": {"min_df": 1, "encoder": {"name": "fixture-minilm", "path": None,
                                                                 "finetune": {"layers": 1}},
                                        "selection": {"candidates": {"context_window": None, "C": None,
                                                                     "head_weight": None, "threshold_metric": None}}},
                           "tuples": {"max_iter": 10, "thresholds": [0.3, 0.5], "verb_classifier": {"min_count": 1},
                                      "selection": {"candidates": {"boosting": None, "verb_classifier": None}}}},
            # The caption stage on the fixture's few videos: two cross-fitting folds, small trees, one
            # candidate of each choice; the people's table without the benchmark's deployed models.
            "captions": {"model": {"min_caption_videos": 1, "folds": 2, "neighbours": 2, "tfidf_min_df": 1,
                                   "sentence_trees": {"max_iter": 10}, "video_trees": {"max_iter": 10},
                                   "noun_trees": {"max_iter": 10}, "verb_thresholds": [0.3], "step_thresholds": [0.1],
                                   "noun_thresholds": [0.3]}},
            "people": {"systems": ["nearest-video-captions", "srl-heur-spacy", "steps-captions",
                                   "steps-captions-benchmark"], "max_constant": 5,
                       "bootstrap": {"resamples": 200}},
            # A user's procedures by the benchmark's deployed models (the default before the step model),
            # unless a test asks for the step model (tests/workflow/test_people_workflow.py): it trains on captions.
            "procedures": {"step_model": None, "keyclip_model": "results/models/keyclips-neural-text"},
            # The default target's numbers file without the deployed models (tests that want them
            # list them: tests/workflow/test_numbers_workflow.py).
            "numbers": {"models": []}}


def make_workdir(workdir: str | Path, upstream_dir: str | Path, overrides: dict | None = None) -> Path:
    """A working directory with the repository's config.yaml pointed at ``upstream_dir``."""
    import yaml

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    config = deep_merge(config, fixture_overrides(upstream_dir, workdir))
    config = deep_merge(config, overrides or {})
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return workdir


def run_snakemake(workdir: str | Path, *args: str, check: bool = True, timeout: int = 900):
    """Run the repository's Snakefile in ``workdir``; returns the CompletedProcess (output captured)."""
    import subprocess
    import sys

    snakemake = Path(sys.executable).parent / "snakemake"
    cmd = [str(snakemake), "-s", str(REPO / "Snakefile"), "--directory", str(workdir), "-c2", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    return proc


def check_provenance_against_snakemake(workdir: str | Path) -> dict[str, str]:
    """Check every Parquet file under ``workdir/results`` against Snakemake's record of the job that
    wrote it (``.snakemake/metadata``): same rule, same inputs, Snakemake's params among those the file
    records (its code fingerprint included), and input digests that agree with Snakemake's checksums
    and with the inputs as they are. Returns {file checked (relative path): its rule}."""
    import ast
    import hashlib
    import os

    import pyarrow.parquet as pq

    from cookproc.core import digests, provenance
    from cookproc.app.lineage import snakemake_record

    workdir = Path(workdir)

    def normalized(path: str) -> str:
        return os.path.normpath(os.path.relpath(path, workdir) if os.path.isabs(path) else path)

    checked = {}
    for path in sorted((workdir / "results").rglob("*.parquet")):
        rel = path.relative_to(workdir).as_posix()
        record = provenance.stored_provenance(pq.read_metadata(path).metadata)
        assert record is not None and record["rule"], f"{rel}: no provenance of a job"
        # A file inside a directory output (a model folder) is recorded under the directory.
        job, owner = None, Path(rel)
        while job is None and owner != Path("."):
            job, owner = snakemake_record(workdir, owner.as_posix()), owner.parent
        assert job is not None, f"{rel}: Snakemake has no record of it"
        assert record["rule"] == job["rule"], rel
        # The outputs it was written for (issue 46): among them the output Snakemake recorded it
        # under (its own path, or the folder output holding it), so its reader accepts it there.
        recorded_as = rel if snakemake_record(workdir, rel) is not None else \
            next(p.as_posix() for p in Path(rel).parents if snakemake_record(workdir, p.as_posix()) is not None)
        assert recorded_as in record["outputs"], (rel, record["outputs"])
        assert provenance.written_elsewhere(record, path, workdir) is None, rel
        assert sorted(normalized(e["path"]) for e in record["inputs"]) == sorted(normalized(p) for p in job["input"]), rel
        # Snakemake records each param's repr; the file, JSON values (keys sorted).
        recorded_params = {digests.compact(record["code"])} | {digests.compact(v) for v in record["params"].values()}
        snakemake_params = {digests.compact(digests.plain(ast.literal_eval(p))) for p in job["params"]}
        assert snakemake_params <= recorded_params, (rel, snakemake_params - recorded_params)
        assert repr(record["code"]) in job["params"], rel
        checksums = {normalized(p): c for p, c in (job.get("input_checksums") or {}).items()}
        for entry in record["inputs"]:
            full = workdir / normalized(entry["path"])
            assert digests.file_digest(full) == entry["digest"], (rel, entry["path"])
            snakemake_sum = checksums.get(normalized(entry["path"]))
            if snakemake_sum is not None:
                content = "sha256:" + hashlib.sha256(full.read_bytes()).hexdigest()
                assert snakemake_sum.removeprefix("sha256:") == content.removeprefix("sha256:"), (rel, entry["path"])
                if not entry["digest"].startswith("columns:"):
                    assert entry["digest"] == content, (rel, entry["path"])
        checked[rel] = record["rule"]
    return checked


def tagger_settings(**overrides):
    """The SRL tagger's training settings with the schema's defaults (srl.tagger, srl.predicate_tags,
    srl.device: the dataclass has none), then ``overrides``."""
    from cookproc.core.config_schema import validate_config
    from cookproc.srl.training import TaggerTrainConfig

    srl = validate_config({})["srl"]
    return TaggerTrainConfig(**{**srl["tagger"], "predicate_tags": srl["predicate_tags"], "device": srl["device"],
                                **overrides})
