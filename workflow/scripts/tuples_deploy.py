"""Rule deploy_tuple_extractor: the text-only supervised tuple extractor trained on every benchmark
recipe, saved as a folder with its model card (cross-validated scores of the same configuration)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import time

    from cookproc.core.parquet_io import read_parquet, read_table
    from cookproc.core.schemas import TUPLES
    from cookproc.learn.folds import clip_folds, read_folds
    from cookproc.learn.inputs import align_rows, read_clips_parquet
    from cookproc.srl.baselines import read_lexicon_lines
    from cookproc.learn.deployed_model import training_summary
    from cookproc.evaluation.bootstrap import oracle_cell_intervals
    from cookproc.supervised.deploy import model_card, save_extractor, training_table

    smk = snakemake  # noqa: F821
    p = smk.params
    start = time.perf_counter()
    clips = read_clips_parquet(smk.input.clips)
    gold = read_table(smk.input.clips, columns=["video_id", "clip_idx", "gold_verbs", "gold_args"]).to_pandas()
    clips = clips.merge(gold, on=["video_id", "clip_idx"], how="left", validate="one_to_one")
    fold, inner = clip_folds(read_folds(smk.input.folds, clips), clips)
    log.info("[1/3] %d clips of %d recipes; %d in inner-validation recipes", len(clips), clips["recipe"].nunique(),
             int(inner.sum()))

    # The card's scores: the same configuration's cross-validated run (Table 5's supervised-text).
    run = read_parquet(smk.input.crossval, TUPLES).to_pandas()
    rows = align_rows(smk.input.crossval, list(zip(run["video_id"], run["clip_idx"].astype(int))), clips, "tuples")
    cells = oracle_cell_intervals(clips, [list(run["verbs"].iloc[r]) for r in rows],
                                  [list(run["args"].iloc[r]) for r in rows], bootstrap=p.bootstrap)
    out = smk.output.model
    meta = {"settings": dict(p.settings), "srl_backend": p.srl_backend,
            "sentence_vectors": "vectors" in smk.input.keys(), "encoder": dict(p.encoder),
            "lexicon": sorted(read_lexicon_lines(smk.input.lexicon) - {""}), "code": p.code, "path": out,
            "training": training_summary(clips, inner),
            # What the card states, as data (results/numbers.json reads it; a test checks it equals Table 5's row).
            "crossval": {"system": str(run["system"].iloc[0]), "source": smk.input.crossval, "keyclips": "oracle",
                         "cells": cells}}
    name = out.rstrip("/").split("/")[-1]
    log.info("[2/3] fitting what does not depend on new clips (nested selection, the verb classifier)")
    save_extractor(out, training_table(clips, fold, inner), smk.input.srl, smk.input.get("vectors"), meta,
                   lambda fitted: model_card(name, fitted, cells, p.bootstrap, time.perf_counter() - start),
                   tagger=smk.input.get("tagger"))
    f1 = {c["field"]: c["value"] for c in cells if c["metric"] == "f1"}
    log.info("[3/3] wrote %s (cross-validated, oracle key clips: verbs exact F1 %.1f, arguments partial F1 %.1f)",
             out, f1["verbs"], f1["arguments"])
