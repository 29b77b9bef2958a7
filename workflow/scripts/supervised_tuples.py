"""Rule supervised_tuples: out-of-fold verbs and arguments of the supervised extractor (TUPLES)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json
    import time

    from cookproc.learn.folds import clip_folds, read_folds
    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.learn.sentence_vectors import clip_text_features
    from cookproc.core.parquet_io import read_table, write_parquet
    from cookproc.core.schemas import TUPLES
    from cookproc.srl.baselines import read_lexicon_lines
    from cookproc.supervised import extract
    from cookproc.supervised.clipfeatures import read_srl, read_tsm_words
    from cookproc.data.wordnet import verb_lemma

    smk = snakemake  # noqa: F821
    p = dict(smk.params.model)
    start, cpu_start = time.perf_counter(), time.process_time()
    clips = read_clips_parquet(smk.input.clips)
    gold = read_table(smk.input.clips, columns=["video_id", "clip_idx", "gold_verbs", "gold_args"]).to_pandas()
    clips = clips.merge(gold, on=["video_id", "clip_idx"], how="left", validate="one_to_one")
    fold, inner = clip_folds(read_folds(smk.input.folds, clips), clips)
    # Without the aligned TSM predictions (the text-only system) no clip has video candidates.
    tsm = (read_tsm_words(smk.input.tsm, clips, p["tsm_max_rank"]) if "tsm" in smk.input.keys()
           else [[] for _ in range(len(clips))])
    log.info("video candidates: %s", smk.input.get("tsm", "none (text only)"))
    embeddings = None
    if "text" in smk.input.keys():
        embeddings = clip_text_features(smk.input.text, clips)
    setups = extract.build_setups(clips, read_srl(smk.input.srl), tsm, read_lexicon_lines(smk.input.lexicon),
                                  verb_lemma, p, embeddings)
    preds, info = extract.run(clips, fold, inner, setups, p)
    write_parquet(extract.tuples_table(smk.params.system, clips, preds), smk.output.tuples, TUPLES,
                  sort_keys=["video_id", "clip_idx"])
    info = {"folds": {f: {str(k): v for k, v in d.items()} for f, d in info.items()},
            "candidates": {f: int(len(s.candidates)) for f, s in setups.items()},
            "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu_start, 1)}
    with open(smk.output.info, "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=1, sort_keys=True)
    log.info("wrote %s; %s", smk.output.tuples, {k: info[k] for k in ("wall_s", "cpu_s")})
