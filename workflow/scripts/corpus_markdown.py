"""The corpus dataset -> one Markdown step list per video (its key clips, in order, with times)."""
import os

from cookproc.corpus import CORPUS_CLIPS, video_clips
from cookproc.core.logs import script_logging
from cookproc.documents import steps_markdown
from cookproc.core.schemas import atomic_write_text, read_parquet

with script_logging(snakemake) as log:
    videos = video_clips(read_parquet(snakemake.input.clips, CORPUS_CLIPS))
    os.makedirs(snakemake.output.markdown)
    for video_id, clips in videos.items():
        text = steps_markdown(video_id, clips[0]["source"], clips[0]["extractor"], clips, n_clips=len(clips))
        atomic_write_text(os.path.join(snakemake.output.markdown, f"{video_id}.md"), text)
    log.info("wrote %d Markdown files to %s", len(videos), snakemake.output.markdown)
