"""Rules srl_systems_*: SRL parses -> key clips and tuples of SRL w/ or w/o upstream's heuristics."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    import pyarrow as pa

    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.core.schemas import CLIP_KEY, CLIPS, KEYCLIPS, TUPLES
    from cookproc.srl.parses import SRL_PARSES, clip_parses
    from cookproc.srl.baselines import read_lexicon_lines, system_rows

    system = snakemake.params.system
    clips = read_parquet(snakemake.input.clips, CLIPS).select(["video_id", "clip_idx"]).to_pylist()
    keys = [(c["video_id"], c["clip_idx"]) for c in clips]
    parses = clip_parses(read_parquet(snakemake.input.parses, SRL_PARSES))
    lexicon = read_lexicon_lines(snakemake.input.lexicon) if snakemake.params.heuristics else frozenset()
    keyclips, tuples = system_rows(system, keys, parses, heuristics=snakemake.params.heuristics, lexicon=lexicon,
                                   verb_form=snakemake.params.verb_form)
    write_parquet(pa.Table.from_pylist(keyclips, schema=KEYCLIPS), snakemake.output.keyclips, KEYCLIPS,
                  sort_keys=CLIP_KEY)
    write_parquet(pa.Table.from_pylist(tuples, schema=TUPLES), snakemake.output.tuples, TUPLES, sort_keys=CLIP_KEY)
    log.info("%s: %d clips, %d key, %d verbs, %d args", system, len(keys), sum(k["is_key"] for k in keyclips),
             sum(len(t["verbs"]) for t in tuples), sum(len(t["args"]) for t in tuples))
