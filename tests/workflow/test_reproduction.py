"""The paper's numbers (docs/protocol.md §5) from the upstream prediction files on the real mirror, cell by cell."""

import pytest

from cookproc.data.dataset import read_benchmark_csv, read_repairs
from cookproc.evaluation.systems import import_upstream_keyclips, import_upstream_srl
from cookproc.core.formatting import format_number
from cookproc.evaluation.tables import PERCENT_DIGITS, table4, table5
from fixtures import REPO

# P / R / F1 per (field, mode): docs/protocol.md §5, SRL w/ heur.
SRL_HEUR = {
    "oracle": {("verbs", "exact"): "38.7 51.6 44.3", ("verbs", "fuzzy"): "45.2 60.3 51.6",
               ("verbs", "partial"): "47.3 63.1 54.1", ("arguments", "exact"): "1.6 3.3 2.2",
               ("arguments", "fuzzy"): "21.0 39.3 27.3", ("arguments", "partial"): "32.7 60.1 42.4"},
    "predicted": {("verbs", "exact"): "22.5 29.9 25.7", ("verbs", "fuzzy"): "26.2 34.9 29.9",
                  ("verbs", "partial"): "27.4 36.6 31.4", ("arguments", "exact"): "0.9 1.9 1.3",
                  ("arguments", "fuzzy"): "12.2 22.8 15.9", ("arguments", "partial"): "19.0 34.9 24.6"},
}
TABLE4 = {"upstream-neural": "77.7 51.0 75.3 60.8", "upstream-srl-heur": "61.2 35.2 81.5 49.1"}


@pytest.fixture(scope="module")
def upstream_systems(mirror):
    yc = mirror / "youcook2"
    clips = read_benchmark_csv(yc / "reviewed_0812.csv", repairs=read_repairs(REPO / "workflow/schemas/upstream-repairs.tsv"))
    neural = import_upstream_keyclips(yc / "reviewed_0812.attach_key_sent_selection.tsv", clips)
    srl_keys, srl_tuples = import_upstream_srl(yc / "srl_pred.json", clips)
    return clips, neural, srl_keys, srl_tuples


def percent(value: float) -> str:
    """As the paper and upstream print a score: one decimal."""
    return format_number(value, PERCENT_DIGITS)


def test_table4(upstream_systems):
    clips, neural, srl_keys, _ = upstream_systems
    rows = table4(clips, {"upstream-neural": neural, "upstream-srl-heur": srl_keys}).to_pylist()
    got = {r["system"]: " ".join(percent(r[k]) for k in ("accuracy", "precision", "recall", "f1")) for r in rows}
    assert got == TABLE4


def test_table5_srl_with_heuristics_every_cell(upstream_systems):
    clips, neural, _, srl_tuples = upstream_systems
    rows = table5(clips, {"upstream-srl-heur": srl_tuples}, {"upstream-neural": neural}, masked=False).to_pylist()
    got = {}
    for r in rows:
        got.setdefault(r["counting"], {})[(r["field"], r["mode"])] = " ".join(
            percent(r[k]) for k in ("precision", "recall", "f1"))
    assert got == SRL_HEUR


def test_workflow_on_the_mirror_with_default_data_settings(mirror, tmp_path):
    """The real DAG on the real data (checksums verified, repair table applied), upstream systems only."""
    import csv

    from fixtures import make_workdir, run_snakemake

    workdir = make_workdir(tmp_path, mirror, {
        "upstream": {"verify_checksums": True, "repairs": "workflow/schemas/upstream-repairs.tsv"},
        "tables": {"keyclip_systems": ["upstream-neural", "upstream-srl-heur"],
                   "tuple_systems": ["upstream-srl-heur"], "predicted_keyclips": ["upstream-neural"]}})
    run_snakemake(workdir, "results/table4.csv", "results/table5.csv")
    with open(workdir / "results/table5.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    cell = next(r for r in rows if (r["counting"], r["field"], r["mode"]) == ("oracle", "arguments", "partial"))
    assert (" ".join(percent(float(cell[k])) for k in ("precision", "recall", "f1"))
            == SRL_HEUR["oracle"][("arguments", "partial")])
