"""The app: what a user runs on their own files. Subtitles and transcripts read into clips, the
extractors and trained models applied to them, the procedure documents, corpora in shards, the
`cookproc` command and `cookproc inspect`."""
