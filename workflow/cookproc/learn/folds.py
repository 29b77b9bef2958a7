"""Leave-recipes-out cross-validation folds.

The paper's neural selector was trained on a private auxiliary set of other videos; here every
learned selector is trained and scored by K-fold cross-validation on the benchmark itself, with
whole recipes held out (several videos share a recipe and its wording, so a video-level split would
leak). The folds are an artefact of their own (results/keyclips/folds.parquet) so that every
learned system, now and later, uses the same ones.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import read_table

#: One row per benchmark video: its recipe and the fold that holds the recipe out.
FOLDS = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("recipe", pa.string(), nullable=False),
        pa.field("fold", pa.int32(), nullable=False),
        # Inside the other folds' training data this video is used for early stopping and the
        # threshold (inner validation), never for fitting weights.
        pa.field("inner_val", pa.bool_(), nullable=False),
    ]
)


def assign_folds(recipe_sizes: dict[str, int], k: int, seed: int) -> dict[str, int]:
    """Recipes to folds 0..k-1 with balanced clip counts.

    Recipes are shuffled with ``seed`` (from a sorted start, so the result never depends on dict or
    hash order), then placed largest first, each into the fold with the fewest clips so far
    (lowest fold id on ties).
    """
    if k < 2:
        raise ValueError(f"need at least 2 folds, got {k}")
    recipes = sorted(recipe_sizes)
    if len(recipes) < k:
        raise ValueError(f"{len(recipes)} recipes cannot fill {k} folds")
    rng = np.random.default_rng(seed)
    shuffled = [recipes[i] for i in rng.permutation(len(recipes))]
    # Stable sort by size keeps the seeded order among equal sizes.
    ordered = sorted(shuffled, key=lambda r: -recipe_sizes[r])
    load = [0] * k
    fold_of = {}
    for recipe in ordered:
        f = min(range(k), key=lambda i: (load[i], i))
        fold_of[recipe] = f
        load[f] += recipe_sizes[recipe]
    return fold_of


def inner_validation_recipes(fold_of: dict[str, int], recipe_sizes: dict[str, int], fraction: float,
                             seed: int) -> set[str]:
    """Recipes that serve as inner validation data, about ``fraction`` of each fold's clips.

    Taken per fold, so that for any held-out fold the remaining folds contribute validation recipes
    too (about ``fraction`` of the training data).
    """
    if not 0 < fraction < 1:
        raise ValueError(f"inner validation fraction must be in (0, 1), got {fraction}")
    rng = np.random.default_rng(seed + 7919)  # separate stream from the fold assignment
    chosen: set[str] = set()
    for f in sorted(set(fold_of.values())):
        members = sorted(r for r, g in fold_of.items() if g == f)
        members = [members[i] for i in rng.permutation(len(members))]
        total = sum(recipe_sizes[r] for r in members)
        taken = 0
        for recipe in members[:-1]:  # never a whole fold: it must keep training data
            if taken >= fraction * total:
                break
            chosen.add(recipe)
            taken += recipe_sizes[recipe]
    return chosen


def read_dish_families(path: str | os.PathLike) -> dict[str, str]:
    """The hand-curated part of the dish-family rule: recipe title -> family (TSV, ``#`` comments)."""
    families: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) != 2 or not all(c.strip() for c in cells):
                raise InputError(path, f"line {number}: expected 'recipe<TAB>family', got {line.strip()!r}")
            recipe, family = (c.strip() for c in cells)
            if recipe in families:
                raise InputError(path, f"line {number}: recipe {recipe!r} is listed twice")
            families[recipe] = family
    return families


def dish_family(recipe: str, curated: dict[str, str]) -> str:
    """The dish family of a recipe title: the curated family when the title is listed, else its head
    noun (the last word, singular): "cottage pie" and "shepherd's pie" are both "pie"."""
    if recipe in curated:
        return curated[recipe]
    head = recipe.lower().split()[-1]
    # A plural's "s" ("rolls", "tacos"), not the "s" of "hummus", "gras" or "swiss".
    return head[:-1] if len(head) > 3 and head.endswith("s") and head[-2] not in "suai" else head


def make_folds(clips: pd.DataFrame, k: int, seed: int, inner_val_fraction: float,
               family_of: dict[str, str] | None = None) -> pd.DataFrame:
    """The FOLDS table (one row per video) for the benchmark clips.

    With ``family_of`` (recipe -> dish family), whole families are assigned to folds and to inner
    validation, so that near-duplicate dishes never sit on both sides of a split.
    """
    per_video = clips.groupby("video_id", sort=True)["recipe"].first()
    sizes = clips.groupby("recipe", sort=True).size().astype(int).to_dict()
    group_of = {r: (family_of[r] if family_of is not None else r) for r in sizes}
    group_sizes: dict[str, int] = {}
    for recipe, size in sizes.items():
        group_sizes[group_of[recipe]] = group_sizes.get(group_of[recipe], 0) + size
    fold_of_group = assign_folds(group_sizes, k, seed)
    inner_groups = inner_validation_recipes(fold_of_group, group_sizes, inner_val_fraction, seed)
    fold_of = {r: fold_of_group[g] for r, g in group_of.items()}
    inner = {r for r, g in group_of.items() if g in inner_groups}
    return pd.DataFrame(
        {
            "video_id": per_video.index.astype(str),
            "recipe": per_video.values.astype(str),
            "fold": [fold_of[r] for r in per_video.values],
            "inner_val": [r in inner for r in per_video.values],
        }
    )


def folds_table(folds: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(folds[list(FOLDS.names)], schema=FOLDS, preserve_index=False)


def read_folds(path: str | os.PathLike, clips: pd.DataFrame) -> pd.DataFrame:
    """Read a folds file and check it covers every clip's video, with one fold per recipe."""
    table = read_table(path)
    missing = [c for c in FOLDS.names if c not in table.column_names]
    if missing:
        raise InputError(path, f"missing columns {missing}; expected {FOLDS.names}")
    folds = table.select(FOLDS.names).to_pandas()
    per_recipe = folds.groupby("recipe")["fold"].nunique()
    if (per_recipe > 1).any():
        raise InputError(path, f"recipe {per_recipe[per_recipe > 1].index[0]!r} is in more than one fold")
    absent = sorted(set(clips["video_id"]) - set(folds["video_id"]))
    if absent:
        raise InputError(path, f"{len(absent)} benchmark videos have no fold, e.g. {absent[0]}")
    return folds


def clip_folds(folds: pd.DataFrame, clips: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per clip (in clip order): the fold id and the inner-validation flag."""
    by_video = folds.set_index("video_id")
    fold = by_video.loc[clips["video_id"], "fold"].to_numpy().astype(np.int64)
    inner = by_video.loc[clips["video_id"], "inner_val"].to_numpy().astype(bool)
    return fold, inner


def split_indices(fold: np.ndarray, inner: np.ndarray, test_fold: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train, validation, test) clip indices for one held-out fold."""
    test = np.flatnonzero(fold == test_fold)
    rest = fold != test_fold
    val = np.flatnonzero(rest & inner)
    train = np.flatnonzero(rest & ~inner)
    return train, val, test
