"""Rule srl_agreement: per-clip agreement of our SRL w/ heuristics verbs with upstream's SRL output."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    from cookproc.core.parquet_io import atomic_write_text, read_parquet, sort_by_key
    from cookproc.core.schemas import CLIP_KEY, TUPLES
    from cookproc.srl.agreement import verb_agreement

    ours = sort_by_key(read_parquet(snakemake.input.ours, TUPLES), CLIP_KEY)
    theirs = sort_by_key(read_parquet(snakemake.input.upstream, TUPLES), CLIP_KEY)
    keys_ours = list(zip(ours.column("video_id").to_pylist(), ours.column("clip_idx").to_pylist()))
    keys_theirs = list(zip(theirs.column("video_id").to_pylist(), theirs.column("clip_idx").to_pylist()))
    if keys_ours != keys_theirs:
        raise ValueError(f"{snakemake.input.ours} and {snakemake.input.upstream} cover different clips")
    report = verb_agreement(ours.column("verbs").to_pylist(), theirs.column("verbs").to_pylist())
    atomic_write_text(snakemake.output[0], "measure\tvalue\n" + "".join(
        f"{k}\t{v:.4f}\n" if isinstance(v, float) else f"{k}\t{v}\n" for k, v in report.items()))
    log.info("agreement with upstream: %s", report)
