"""Visual-only, naive-fusion and oracle-fusion tuple systems of one TSM source and variant."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import ALIGNED_SEGMENTS, CLIP_KEY, CLIPS, TUPLES
from cookproc.video.epic import NOUN, VERB, read_epic_classes
from cookproc.video.tuples import VisualConfig, build_visual_systems, system_name

with script_logging(snakemake) as log:
    p = snakemake.params
    # Each variant's rule passes only the settings it uses (so the other's do not rerun it).
    settings = {k: getattr(p, k) for k in ("tie_key", "drop_nouns", "wordnet_expansion", "wordnet_max_senses")
                if hasattr(p, k)}
    config = VisualConfig(p.variant, max_rank=p.max_rank, **settings)
    systems = build_visual_systems(
        read_parquet(snakemake.input.clips, CLIPS),
        read_parquet(snakemake.input.aligned, ALIGNED_SEGMENTS),
        read_epic_classes(snakemake.input.verb_classes, VERB),
        read_epic_classes(snakemake.input.noun_classes, NOUN),
        read_parquet(snakemake.input.utterance, TUPLES),
        source=p.source, config=config)
    for kind, path in (("visual", snakemake.output.visual), ("fusion-naive", snakemake.output.naive),
                       ("fusion-oracle", snakemake.output.oracle)):
        table = systems[system_name(kind, p.source, p.variant)]
        write_parquet(table, path, TUPLES, sort_keys=CLIP_KEY)
        n_verbs = sum(len(v) for v in table.column("verbs").to_pylist())
        n_args = sum(len(a) for a in table.column("args").to_pylist())
        log.info("%s: %d clips, %d verbs, %d args", path, table.num_rows, n_verbs, n_args)
