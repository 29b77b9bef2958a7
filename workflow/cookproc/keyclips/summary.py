"""Scores of cross-validated key-clip runs, per run and as mean and spread over seeds."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from cookproc.core.errors import InputError
from cookproc.scoring.metrics import score_keyclips
from cookproc.learn.inputs import align_rows
from cookproc.core.parquet_io import read_parquet
from cookproc.core.schemas import KEYCLIPS

_SEED = re.compile(r"\.seed(\d+)\.parquet$")


def score_run(clips: pd.DataFrame, path) -> dict:
    """Accuracy/P/R/F1 (x100) of one KEYCLIPS file over all benchmark clips; every clip must be present."""
    table = read_parquet(path, KEYCLIPS).to_pandas()
    if len(table) != len(clips):
        raise InputError(path, f"{len(table)} rows, expected one per benchmark clip ({len(clips)})")
    rows = align_rows(path, list(zip(table["video_id"], table["clip_idx"].astype(int))), clips, "key clips")
    score = score_keyclips(clips["is_key"].to_numpy(), table["is_key"].to_numpy()[rows])
    systems = table["system"].unique()
    if len(systems) != 1:
        raise InputError(path, f"expected one system, found {sorted(systems)}", column="system")
    seed = _SEED.search(Path(path).name)
    return {"system": systems[0], "seed": int(seed.group(1)) if seed else None,
            "accuracy": 100 * score.accuracy, "precision": 100 * score.precision,
            "recall": 100 * score.recall, "f1": 100 * score.f1}


def seed_summary(clips: pd.DataFrame, paths: list) -> pd.DataFrame:
    """One row per run (``run`` = seed<N>), then per system with several seeds a ``mean`` and a ``std``
    row (sample standard deviation) and a ``range`` row (max - min)."""
    runs = pd.DataFrame([score_run(clips, p) for p in paths])
    metrics = ["accuracy", "precision", "recall", "f1"]
    out = []
    for system in sorted(runs["system"].unique()):
        group = runs[runs["system"] == system].sort_values("seed", na_position="first")
        for _, r in group.iterrows():
            run = "single" if pd.isna(r["seed"]) else f"seed{int(r['seed'])}"
            out.append({"system": system, "run": run, **{m: r[m] for m in metrics}})
        if len(group) > 1:
            values = group[metrics].to_numpy(dtype=float)
            out.append({"system": system, "run": "mean", **dict(zip(metrics, values.mean(0)))})
            out.append({"system": system, "run": "std", **dict(zip(metrics, values.std(0, ddof=1)))})
            out.append({"system": system, "run": "range", **dict(zip(metrics, np.ptp(values, 0)))})
    return pd.DataFrame(out, columns=["system", "run", *metrics])
