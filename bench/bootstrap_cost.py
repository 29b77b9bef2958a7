"""Benchmark: the cost of more bootstrap resamples, and the declared significance family, on the
paper preset's inputs (the real upstream mirror).

Builds, in this process, the paper preset's systems that need neither training nor spaCy: upstream's
neural key clips and SRL, and the visual-only / naive / oracle fusion tuples from upstream's TSM
predictions (paper and corrected procedures). Scores Table 4 and Table 5 (oracle, predicted,
predicted-masked), then times the bootstrap (rule confidence_intervals' library calls: intervals of
every cell and the declared family's significance) at the old 1,000 resamples and at the configured
number, in one run, and prints the ratio and the significance summary. The paper preset's family
also holds srl-heur-spacy vs upstream-srl-heur (5 of its comparisons); without a spaCy parse here
they are left out, so the family printed is the rest of the preset's.

    .venv/bin/python bench/bootstrap_cost.py [--upstream DIR] [--resamples 1000 9999]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def paper_systems(upstream: Path, config: dict):
    from cookproc.data.dataset import read_benchmark_csv, read_repairs
    from cookproc.evaluation.systems import import_upstream_keyclips, import_upstream_srl
    from cookproc.video.align import align, clip_spans
    from cookproc.video.epic import NOUN, VERB, read_epic_classes
    from cookproc.video.segments import import_upstream
    from cookproc.video.tuples import VisualConfig, build_visual_systems

    yc = upstream / "youcook2"
    clips = read_benchmark_csv(yc / "reviewed_0812.csv", repairs=read_repairs(REPO / config["upstream"]["repairs"]))
    neural = import_upstream_keyclips(yc / "reviewed_0812.attach_key_sent_selection.tsv", clips)
    srl_keys, srl_tuples = import_upstream_srl(yc / "srl_pred.json", clips)
    verbs, nouns = read_epic_classes(yc / "EPIC_verb_classes.csv", VERB), read_epic_classes(yc / "EPIC_noun_classes.csv", NOUN)
    segments = import_upstream(yc / "clip_manifest_10s.txt", yc / "clip_prediction_5s.txt", verbs, nouns)
    video = config["video"]
    settings = {"paper": dict(tie_key=video["paper"]["tie_key"]),
                "corrected": {k: video["corrected"][k] for k in ("drop_nouns", "wordnet_expansion", "wordnet_max_senses")}}
    tuples = {"upstream-srl-heur": srl_tuples}
    for variant, timing in (("paper", "upstream"), ("corrected", "clips")):
        aligned = align(segments, clip_spans(timing, clips, yc / "reviewed_0812.csv" if timing == "upstream" else None))
        built = build_visual_systems(clips, aligned, verbs, nouns, srl_tuples, source="upstream",
                                     config=VisualConfig(variant, max_rank=video["max_rank"], **settings[variant]))
        tuples.update(built)
    return clips, {"upstream-neural": neural, "upstream-srl-heur": srl_keys}, tuples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=Path, default=REPO / "../shared/data/cooking-procedural-extraction")
    parser.add_argument("--resamples", type=int, nargs=2, default=None,
                        help="the two numbers of resamples compared (default: 1000 and the configured one)")
    args = parser.parse_args()

    from cookproc.evaluation.bootstrap import table4_intervals, table5_intervals
    from cookproc.evaluation.significance import declared_family, significance_table
    from cookproc.core.config_schema import validate_config
    from cookproc.evaluation.tables import keyclip_flags, table5_with_clip_scores

    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    preset = yaml.safe_load((REPO / "presets" / "paper.yaml").read_text(encoding="utf-8"))
    for key, value in preset.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    validate_config(config)
    tables = config["tables"]
    bootstrap = tables["bootstrap"]
    low, high = args.resamples or (1000, bootstrap["resamples"])

    start = time.perf_counter()
    clips, keyclips, tuples = paper_systems(args.upstream.resolve(), config)
    keyclip_names = [s for s in tables["keyclip_systems"] if s in keyclips]
    tuple_names = [s for s in tables["tuple_systems"] if s in tuples]
    table5, clip_scores = table5_with_clip_scores(clips, {s: tuples[s] for s in tuple_names},
                                                  {"upstream-neural": keyclips["upstream-neural"]}, masked=tables["masked"])
    flags = {s: keyclip_flags(clips, keyclips[s], what=s) for s in keyclip_names}
    family = declared_family(tables["significance"], keyclip_systems=keyclip_names, tuple_systems=tuple_names,
                             predicted_keyclips=["upstream-neural"], masked=tables["masked"])
    print(f"inputs: {clips.num_rows} clips, key-clip systems {keyclip_names}, tuple systems {tuple_names}; "
          f"{table5.num_rows} Table 5 cells, {clip_scores.num_rows} per-clip scores ({time.perf_counter() - start:.1f} s)")
    print(f"declared family: {len(family)} comparisons")

    seconds = {}
    for resamples in (low, high):
        options = dict(unit=bootstrap["unit"], resamples=resamples, seed=bootstrap["seed"],
                       confidence=bootstrap["confidence"])
        start = time.perf_counter()
        ci4, cells4 = table4_intervals(clips, flags, **options)
        ci5, cells5 = table5_intervals(clips, clip_scores, **options)
        significance = significance_table(family, {**cells4, **cells5}, confidence=options["confidence"],
                                          resamples=resamples)
        seconds[resamples] = time.perf_counter() - start
        p = significance.column("p_value").to_pylist()
        print(f"B = {resamples}: {seconds[resamples]:.2f} s for {ci4.num_rows + ci5.num_rows} interval rows and "
              f"{significance.num_rows} comparisons; {sum(significance.column('significant').to_pylist())} "
              f"significant after Holm; p min {min(p):.5f} (smallest attainable {2 / (resamples + 1):.5f}), "
              f"p = 0: {sum(v == 0 for v in p)}")
        if resamples == high:
            for row in significance.to_pylist():
                print(f"  {row['table']} {row['keyclips']}/{row['counting']} {row['field']} {row['mode']}: "
                      f"{row['system_a']} - {row['system_b']} = {row['difference']:+.1f} "
                      f"[{row['ci_low']:+.1f}, {row['ci_high']:+.1f}] p {row['p_value']:.4f} holm {row['p_holm']:.4f}")
    print(f"ratio B = {high} / B = {low}: {seconds[high] / seconds[low]:.1f}x the time")


if __name__ == "__main__":
    main()
