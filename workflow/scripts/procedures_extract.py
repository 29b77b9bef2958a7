"""A user's subtitles (and optional video) -> clips -> key clips and tuples -> JSON and Markdown."""
from cookproc.logs import script_logging
from cookproc.procedures import make_extractor, procedure_document, to_json, to_markdown, video_info
from cookproc.schemas import atomic_write_text
from cookproc.srl.systems import read_lexicon
from cookproc.subtitles import read_clips

with script_logging(snakemake) as log:
    p = snakemake.params
    video = video_info(snakemake.input.video[0]) if snakemake.input.video else None
    if video:
        log.info("video %s: %.1f s, %dx%d", video["path"], video["duration_s"], video["width"], video["height"])
    clips = read_clips(snakemake.input.subtitles, segmentation=p.segmentation, max_clip_s=p.max_clip_s,
                       video_end_s=video["duration_s"] if video else None, drop_sound_tags=p.drop_sound_tags)
    log.info("[1/3] read %d clips from %s", len(clips), snakemake.input.subtitles)
    lexicon = read_lexicon(snakemake.input.lexicon) - {""}
    extractor = make_extractor(p.extractor, srl_backend=p.srl_backend, lexicon=lexicon,
                               tagger_model=p.tagger_model, device=p.device, lowercase=p.lowercase)
    extractions = extractor.extract([c.sentence for c in clips])
    log.info("[2/3] %s: %d key clips of %d", extractor.name, sum(e.is_key for e in extractions), len(clips))
    settings = {"segmentation": p.segmentation, "max_clip_s": p.max_clip_s, "drop_sound_tags": p.drop_sound_tags,
                "srl_backend": p.srl_backend, "lowercase": p.lowercase, "lexicon": str(snakemake.input.lexicon),
                "lexicon_size": len(lexicon)}
    document = procedure_document(snakemake.wildcards.name, clips, extractions, source=str(snakemake.input.subtitles),
                                  video=video, extractor=extractor.name, settings=settings)
    atomic_write_text(snakemake.output.json, to_json(document))
    atomic_write_text(snakemake.output.markdown, to_markdown(document))
    log.info("[3/3] wrote %s and %s", snakemake.output.json, snakemake.output.markdown)
