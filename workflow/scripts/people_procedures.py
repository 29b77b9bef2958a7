"""Rules people_procedures_*: one system's procedures of the people's test videos (their transcripts,
read as a user's files are) -> results/people/procedures/<system>.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from pathlib import Path

    import pyarrow as pa

    from cookproc.app.procedures import ProcedureSettings, procedure_documents
    from cookproc.app.progress import LoggedProgress
    from cookproc.captions.inputs import read_videos
    from cookproc.core.parquet_io import write_parquet
    from cookproc.core.torch_runtime import configure_torch
    from cookproc.evaluation.people import PROCEDURES

    smk = snakemake  # noqa: F821
    p = smk.params
    configure_torch(smk.threads, p.settings["device"], deterministic=p.deterministic)
    videos = read_videos(smk.input.videos)
    test = sorted(videos.loc[videos["split"] == "test", "video_id"])
    sources = [Path(p.transcripts_dir) / f"{v}.txt" for v in test]
    models = {key: (smk.input.get(key) or None) for key in ("step_model", "keyclip_model", "tuple_model")}
    settings = ProcedureSettings.from_config({**p.settings, **models})
    documents = procedure_documents(sources, settings, lexicon=smk.input.lexicon, names=test,
                                    progress=LoggedProgress(f"{len(test)} people's test videos"))
    clips = [(d["name"], c) for d in documents for c in d["clips"]]
    table = pa.table({
        "video_id": [v for v, _ in clips], "clip_idx": [c["clip_idx"] for _, c in clips],
        "sentence": [c["sentence"] for _, c in clips],
        "is_key": [c["is_key"] for _, c in clips], "verbs": [c["verbs"] for _, c in clips],
        "args": [c["args"] for _, c in clips],
        "step_verbs": [c["step"]["verbs"] if c["step"] else [] for _, c in clips],
        "step_nouns": [c["step"]["nouns"] if c["step"] else [] for _, c in clips],
        "step_text": [c["step"]["text"] if c["step"] else None for _, c in clips],
    }, schema=PROCEDURES)
    write_parquet(table, smk.output.procedures, PROCEDURES, sort_keys=["video_id", "clip_idx"])
    log.info("%s: %d videos, %d clips, %d key clips (by %s)", smk.output.procedures, len(test), len(clips),
             sum(c["is_key"] for _, c in clips), documents[0]["key_clips_by"] if documents else "-")
