"""Rule lexicon_rebuild: the cooking lexicon rebuilt the paper's way, and its overlap with upstream's."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    from cookproc.data.lexicon import build_lexicon, count_first_words, overlap_report
    from cookproc.core.parquet_io import atomic_write_text, read_parquet
    from cookproc.core.schemas import CLIPS
    from cookproc.srl.baselines import read_lexicon_lines

    benchmark_videos = sorted(set(read_parquet(snakemake.input.clips, CLIPS).column("video_id").to_pylist()))
    counts, n_videos, n_captions = count_first_words(snakemake.params.captions_dir, benchmark_videos)
    lexicon = build_lexicon(counts, min_count=snakemake.params.lexicon_min_count)
    atomic_write_text(snakemake.output.lexicon, "".join(w + "\n" for w in lexicon))
    atomic_write_text(snakemake.output.counts, "word\tcount\tin_lexicon\n" + "".join(
        f"{w}\t{n}\t{int(w in set(lexicon))}\n" for w, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))))
    report = overlap_report(lexicon, read_lexicon_lines(snakemake.input.upstream_lexicon))
    atomic_write_text(snakemake.output.overlap, "measure\tvalue\n" + "".join(
        f"{k}\t{v:.4f}\n" if isinstance(v, float) else f"{k}\t{v}\n" for k, v in report.items()))
    log.info("captions of %d videos (%d benchmark videos excluded), %d captions -> %d words; overlap %s",
             n_videos, len(benchmark_videos), n_captions, len(lexicon), report)
