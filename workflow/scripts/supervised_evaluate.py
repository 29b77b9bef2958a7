"""Rule supervised_evaluate: Tables 4/5 of the supervised systems next to the paper's, and where the
tuple gains come from (gold items stated in the sentence or absent from it)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pyarrow.csv as pcsv

    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.core.parquet_io import read_table
    from cookproc.supervised.extract import gain_by_presence
    from cookproc.evaluation.tables import align_to_clips, table4, table5
    from cookproc.data.wordnet import verb_lemma

    smk = snakemake  # noqa: F821
    # Sorted like read_clips_parquet, so the per-clip lists below line up with the frame.
    clips = read_table(smk.input.clips).sort_by([("video_id", "ascending"), ("clip_idx", "ascending")])
    keyclips = {name: read_table(path) for name, path in zip(smk.params.keyclip_names, smk.input.keyclips)}
    tuples = {name: read_table(path) for name, path in zip(smk.params.tuple_names, smk.input.tuples)}
    pcsv.write_csv(table4(clips, keyclips), smk.output.table4)
    predicted = {name: keyclips[name] for name in smk.params.predicted_keyclips}
    pcsv.write_csv(table5(clips, tuples, predicted, masked=True), smk.output.table5)

    frame = read_clips_parquet(smk.input.clips)
    frame = frame.merge(read_table(smk.input.clips, columns=["video_id", "clip_idx", "gold_verbs", "gold_args"])
                        .to_pandas(), on=["video_id", "clip_idx"], validate="one_to_one")

    def sets(name):
        cols = align_to_clips(clips, tuples[name], ["verbs", "args"], what=name)
        return {"verbs": cols["verbs"], "arguments": cols["args"]}

    gains = gain_by_presence(frame, sets(smk.params.tuple_names[0]), sets(smk.params.baseline), verb_lemma)
    gains.to_csv(smk.output.gains, index=False, float_format="%.4f")
    log.info("gains by presence:\n%s", gains.to_string())
