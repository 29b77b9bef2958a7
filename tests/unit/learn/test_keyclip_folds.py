"""Leave-recipes-out folds and the cross-validation loop."""
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from cookproc.core.errors import InputError
from cookproc.learn.keyclip_crossval import cross_validate, keyclips_table
from cookproc.learn.folds import FOLDS, assign_folds, clip_folds, folds_table, make_folds, read_folds, split_indices
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import KEYCLIPS, conform


def _clips(n_recipes=12, videos_per_recipe=3, clips_per_video=5, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_recipes):
        for v in range(videos_per_recipe):
            for c in range(clips_per_video + (r % 3)):
                rows.append({"video_id": f"vid{r:02d}{v}", "recipe": f"recipe {r}", "clip_idx": c,
                             "start_s": 5.0 * c, "end_s": 5.0 * c + 5, "sentence": f"sentence {r} {v} {c}",
                             "is_key": bool(rng.random() < 0.3)})
    return pd.DataFrame(rows)


def test_no_recipe_in_two_folds_and_folds_are_balanced():
    clips = _clips()
    folds = make_folds(clips, k=4, seed=1, inner_val_fraction=0.2)
    assert (folds.groupby("recipe")["fold"].nunique() == 1).all()
    assert sorted(folds["fold"].unique()) == [0, 1, 2, 3]
    sizes = clips.merge(folds[["video_id", "fold"]]).groupby("fold").size()
    assert sizes.max() - sizes.min() <= 3 * 7  # at most one recipe's clips apart
    assert set(folds["video_id"]) == set(clips["video_id"])


def test_inner_validation_takes_whole_recipes_from_every_fold_and_leaves_training_data():
    clips = _clips()
    folds = make_folds(clips, k=4, seed=1, inner_val_fraction=0.2)
    assert (folds.groupby("recipe")["inner_val"].nunique() == 1).all()
    per_fold = folds.groupby("fold")["inner_val"].agg(["any", "all"])
    assert per_fold["any"].all() and not per_fold["all"].any()


def test_folds_depend_on_the_seed_only():
    clips = _clips()
    a = make_folds(clips, 4, seed=3, inner_val_fraction=0.2)
    b = make_folds(clips.sample(frac=1.0, random_state=7), 4, seed=3, inner_val_fraction=0.2)
    assert a.sort_values("video_id").reset_index(drop=True).equals(b.sort_values("video_id").reset_index(drop=True))
    c = make_folds(clips, 4, seed=4, inner_val_fraction=0.2)
    assert not a["fold"].equals(c["fold"])


def test_assign_folds_refuses_too_few_recipes():
    with pytest.raises(ValueError, match="cannot fill"):
        assign_folds({"a": 3, "b": 4}, k=3, seed=0)


def test_split_indices_partition_every_clip():
    fold = np.array([0, 0, 1, 1, 2, 2, 2])
    inner = np.array([False, True, False, False, True, False, False])
    train, val, test = split_indices(fold, inner, 2)
    assert sorted(np.r_[train, val, test].tolist()) == list(range(7))
    assert test.tolist() == [4, 5, 6] and val.tolist() == [1] and train.tolist() == [0, 2, 3]


def test_cross_validation_scores_every_clip_once_with_the_model_that_never_saw_its_recipe():
    clips = _clips()
    folds = make_folds(clips, k=3, seed=0, inner_val_fraction=0.2)
    fold, inner = clip_folds(folds, clips)
    labels = clips["is_key"].to_numpy()
    recipe = clips["recipe"].to_numpy()
    seen_tests = []

    def fit(train, val, test):
        assert not set(recipe[train]) & set(recipe[test]) and not set(recipe[val]) & set(recipe[test])
        assert not set(train) & set(val)
        seen_tests.append(test)
        score = np.linspace(0, 1, len(labels))  # any deterministic score
        return score[val], score[test] + 0, {}

    result = cross_validate(fold, inner, labels, fit)
    assert len(seen_tests) == 3
    assert np.array_equal(np.sort(np.concatenate(seen_tests)), np.arange(len(labels)))
    assert not np.isnan(result.score).any()
    for f, t in result.thresholds.items():
        members = result.fold == f
        assert np.array_equal(result.is_key[members], result.score[members] >= t)
    table = conform(keyclips_table("neural-text", clips, result), KEYCLIPS, what="test")
    assert table.num_rows == len(clips) and table.column("fold").null_count == 0


def test_folds_file_round_trip_and_errors(tmp_path):
    clips = _clips()
    folds = make_folds(clips, k=3, seed=0, inner_val_fraction=0.2)
    path = tmp_path / "folds.parquet"
    write_parquet(folds_table(folds), path, FOLDS, sort_keys=["video_id"])
    back = read_folds(path, clips)
    assert back.sort_values("video_id").reset_index(drop=True).equals(
        folds.sort_values("video_id").reset_index(drop=True).astype(back.dtypes.to_dict()))
    bad = folds.copy()
    bad.loc[bad["recipe"] == "recipe 0", "fold"] = [0, 1, 2]
    write_parquet(folds_table(bad), path, FOLDS, sort_keys=["video_id"])
    with pytest.raises(InputError, match="recipe 'recipe 0' is in more than one fold"):
        read_folds(path, clips)
    write_parquet(folds_table(folds.iloc[1:]), path, FOLDS, sort_keys=["video_id"])
    with pytest.raises(InputError, match="no fold"):
        read_folds(path, clips)
    assert pq.read_schema(path).names == FOLDS.names


def test_dish_family_is_the_curated_family_or_the_titles_singular_head_noun():
    from cookproc.learn.folds import dish_family

    curated = {"pizza marghetta": "pizza"}
    assert dish_family("cottage pie", curated) == dish_family("shepherd's pie", curated) == "pie"
    assert dish_family("pizza marghetta", curated) == dish_family("pepperoni pizza", curated) == "pizza"
    assert dish_family("chinese spring rolls", {}) == "roll" and dish_family("beef tacos", {}) == "taco"
    assert dish_family("hummus", {}) == "hummus" and dish_family("foie gras", {}) == "gras"


def test_the_shipped_families_group_the_near_duplicates_the_review_named(tmp_path):
    from cookproc.learn.folds import dish_family, read_dish_families
    from fixtures import REPO

    curated = read_dish_families(REPO / "workflow" / "schemas" / "dish-families.tsv")
    for pair in (("cottage pie", "shepherd's pie"), ("salmon sashimi", "tuna sashimi"),
                 ("pork fried rice", "thai fried rice")):
        assert dish_family(pair[0], curated) == dish_family(pair[1], curated), pair
    assert dish_family("caesar salad", curated) != dish_family("pork fried rice", curated)
    bad = tmp_path / "families.tsv"
    bad.write_text("# comment\ncottage pie\tpie\ncottage pie\tstew\n", encoding="utf-8")
    with pytest.raises(InputError, match="families.tsv.*line 3: recipe 'cottage pie' is listed twice"):
        read_dish_families(bad)
    bad.write_text("cottage pie pie\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1: expected 'recipe<TAB>family'"):
        read_dish_families(bad)


def test_family_folds_keep_a_family_in_one_fold_and_recipe_folds_are_unchanged():
    clips = _clips(n_recipes=12)
    family_of = {f"recipe {r}": f"family {r // 3}" for r in range(12)}  # four families of three recipes
    folds = make_folds(clips, k=4, seed=1, inner_val_fraction=0.3, family_of=family_of)
    folds["family"] = folds["recipe"].map(family_of)
    assert (folds.groupby("family")["fold"].nunique() == 1).all()
    assert (folds.groupby("family")["inner_val"].nunique() == 1).all()
    assert sorted(folds["fold"].unique()) == [0, 1, 2, 3]
    # One recipe per family is recipe grouping: the same folds as without families.
    same = make_folds(clips, k=4, seed=1, inner_val_fraction=0.3, family_of={r: r for r in family_of})
    assert same.equals(make_folds(clips, k=4, seed=1, inner_val_fraction=0.3))
