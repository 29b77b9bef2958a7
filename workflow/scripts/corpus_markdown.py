"""The corpus dataset -> one Markdown step list per video (its key clips, in order, with times),
read one shard at a time (a video's clips are all in its shard)."""
import os

from cookproc.corpus import iter_shards, video_clips
from cookproc.core.logs import script_logging
from cookproc.core.schemas import atomic_write_text
from cookproc.documents import steps_markdown

with script_logging(snakemake) as log:
    os.makedirs(snakemake.output.markdown)
    n_videos = 0
    for shard, table in iter_shards(os.path.dirname(snakemake.input.dataset)):
        for video_id, clips in video_clips(table).items():
            text = steps_markdown(video_id, clips[0]["source"], clips[0]["extractor"], clips, n_clips=len(clips))
            atomic_write_text(os.path.join(snakemake.output.markdown, f"{video_id}.md"), text)
            n_videos += 1
        del table
    log.info("wrote %d Markdown files to %s", n_videos, snakemake.output.markdown)
