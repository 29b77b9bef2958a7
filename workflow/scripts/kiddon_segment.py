"""Segment the benchmark clips with the trained Kiddon model: frames, key clips, tuples (two layouts)."""
from collections import Counter
from pathlib import Path

from cookproc.kiddon.model import Model
from cookproc.kiddon.outputs import (FRAMES, FRAMES_KEY, clip_tuples, frames_table, key_clips, keyclips_table,
                                     segment_clips, tuples_table)
from cookproc.kiddon.segmenter import Segmenter, Settings
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIP_KEY, CLIPS, KEYCLIPS, TUPLES

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    model = Model.from_json(Path(snakemake.input.model).read_text(encoding="utf-8"), path=snakemake.input.model)
    segmenter = Segmenter(Settings.from_dict(model.settings))
    columns = clips.select(["video_id", "clip_idx", "sentence"]).to_pydict()
    rows = segment_clips(zip(columns["video_id"], columns["clip_idx"], columns["sentence"]), model, segmenter)
    keys = list(zip(columns["video_id"], columns["clip_idx"]))

    write_parquet(frames_table(rows), snakemake.output.frames, FRAMES, sort_keys=FRAMES_KEY)
    is_key = key_clips(rows, keys)
    write_parquet(keyclips_table(is_key, snakemake.params.system), snakemake.output.keyclips, KEYCLIPS,
                  sort_keys=CLIP_KEY)
    for layout, output, system in (("all", snakemake.output.tuples, snakemake.params.system),
                                   ("first-frame", snakemake.output.first_frame, snakemake.params.first_frame_system)):
        write_parquet(tuples_table(clip_tuples(rows, keys, layout), system), output, TUPLES, sort_keys=CLIP_KEY)

    roles = Counter(r["role"] for r in rows)
    unmatched = sum(1 for (v, c), k in is_key.items() if k) - len(
        {(r["video_id"], r["clip_idx"]) for r in rows if r["upstream_matched"]})
    log.info("%d clips, %d key (a predicate found); roles %s; %d key clips that upstream's "
             "match-back would miss (merged sentences)", len(keys), sum(is_key.values()),
             dict(sorted(roles.items())), unmatched)
