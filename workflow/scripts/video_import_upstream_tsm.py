"""Upstream's TSM predictions (10-s manifest + 5-s predictions) as TSM source `upstream`."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import TSM_SEGMENTS
from cookproc.video.epic import NOUN, VERB, read_epic_classes
from cookproc.video.segments import import_upstream

with script_logging(snakemake) as log:
    verbs = read_epic_classes(snakemake.input.verb_classes, VERB)
    nouns = read_epic_classes(snakemake.input.noun_classes, NOUN)
    segments = import_upstream(snakemake.input.manifest, snakemake.input.predictions, verbs, nouns)
    write_parquet(segments, snakemake.output[0], TSM_SEGMENTS, sort_keys=("video_id", "segment_idx", "rank"))
    log.info("%d segments of %d videos", segments.num_rows, len(set(segments.column("video_id").to_pylist())))
