"""The kiddon rules on the tiny generated fixture: outputs, contracts, byte-identical reruns."""
import pyarrow.parquet as pq
import pytest

from cookproc.kiddon.training_text import ITERATIONS
from cookproc.kiddon.model import Model
from cookproc.kiddon.outputs import FRAMES
from cookproc.core.parquet_io import read_parquet
from cookproc.core.schemas import KEYCLIPS, TUPLES
from fixtures import make_workdir, n_clips, run_snakemake, write_tiny_upstream

pytestmark = pytest.mark.slow
OUTPUTS = ("results/kiddon/model.json", "results/kiddon/iterations.parquet", "results/kiddon/frames.parquet",
           "results/keyclips/kiddon.parquet", "results/tuples/kiddon.parquet",
           "results/tuples/kiddon-first-frame.parquet")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The kiddon outputs built twice from scratch, under different hash seeds."""
    base = tmp_path_factory.mktemp("kiddon")
    upstream = write_tiny_upstream(base / "upstream")
    runs = []
    with pytest.MonkeyPatch.context() as patch:
        for name, seed in (("a", "1"), ("b", "2")):
            patch.setenv("PYTHONHASHSEED", seed)
            workdir = make_workdir(base / name, upstream, {"kiddon": {"iterations": 4}})
            run_snakemake(workdir, *OUTPUTS)
            runs.append(workdir)
    return runs


def test_outputs_are_byte_identical_across_runs(two_runs):
    first, second = two_runs
    for output in OUTPUTS:
        assert (first / output).read_bytes() == (second / output).read_bytes(), output


def test_outputs_follow_their_contracts(two_runs):
    run = two_runs[0]
    model = Model.from_json((run / "results/kiddon/model.json").read_text(encoding="utf-8"))
    assert model.iteration == 4 and model.verb_counts and model.settings["max_candidates"] == 15
    iterations = read_parquet(run / "results/kiddon/iterations.parquet", ITERATIONS).to_pylist()
    assert [r["iteration"] for r in iterations] == [1, 2, 3, 4]
    objectives = [r["objective"] for r in iterations]
    assert objectives[0] is None and all(b >= a - 1e-9 * abs(a) for a, b in zip(objectives[1:], objectives[2:]))

    keyclips = read_parquet(run / "results/keyclips/kiddon.parquet", KEYCLIPS).to_pylist()
    assert len(keyclips) == n_clips() and {r["system"] for r in keyclips} == {"kiddon"}
    key = {(r["video_id"], r["clip_idx"]) for r in keyclips if r["is_key"]}
    frames = read_parquet(run / "results/kiddon/frames.parquet", FRAMES).to_pylist()
    assert key == {(r["video_id"], r["clip_idx"]) for r in frames if r["role"] == "PRED"} and key
    for name, system in (("kiddon", "kiddon"), ("kiddon-first-frame", "kiddon-first-frame")):
        tuples = read_parquet(run / f"results/tuples/{name}.parquet", TUPLES).to_pylist()
        assert len(tuples) == n_clips() and {r["system"] for r in tuples} == {system}
        assert {(r["video_id"], r["clip_idx"]) for r in tuples if r["verbs"]} <= key
    # "chop the onions and the garlic ." is a key clip of the fixture; the segmenter finds "chop".
    every = {(r["video_id"], r["clip_idx"]): r for r in read_parquet(run / "results/tuples/kiddon.parquet", TUPLES).to_pylist()}
    assert every[("vidSoup0003", 1)]["verbs"] == ["chop"]
    assert pq.read_metadata(run / "results/kiddon/frames.parquet").num_rows == len(frames)
    assert (run / "benchmarks/kiddon/kiddon_train.tsv").exists()
    assert "iteration 4" in (run / "logs/kiddon/kiddon_train.log").read_text(encoding="utf-8")
