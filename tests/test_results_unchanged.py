"""Results unchanged: the fixture workflow's whole default DAG gives the data recorded in
tests/data/fixture_results.tsv, so that a refactoring (a move, a rename, a new route from config to
code) is shown not to change any result.

Recorded per output: a Parquet file by its data (the column digests the reader verifies, not the
footer's provenance, which names the commit), a table, list or figure by its bytes, numbers.json
without its run stamp and run times. A deliberate change of results rewrites the record:

    PYTHONPATH=workflow .venv/bin/python tests/test_results_unchanged.py --write

and the diff of the .tsv shows which outputs changed. Torch's CPU kernels round differently on
different instruction sets, so the record names the torch build and CPU capability it was made on;
on another, the outputs of torch rules and everything made from them are not compared (the test
says how many were left out) and the torch-free part still is.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures import REPO, make_workdir, run_snakemake, write_tiny_upstream  # noqa: E402

RECORD = Path(__file__).resolve().parent / "data" / "fixture_results.tsv"
COMPARED_SUFFIXES = {".parquet", ".csv", ".tsv", ".md", ".png", ".lst", ".txt"}
VOLATILE_NUMBERS_KEYS = ("run", "run_times")  # the commit, config digest and date; wall times


def torch_rules() -> set[str]:
    """The rules that run in envs/torch.yaml (their outputs round as the CPU's torch kernels do)."""
    names = set()
    for smk in (REPO / "rules").glob("*.smk"):
        for block in re.split(r"\n(?=rule \w+:)", smk.read_text(encoding="utf-8")):
            match = re.match(r"rule (\w+):", block)
            if match and "envs/torch.yaml" in block:
                names.add(match.group(1))
    return names


def output_digest(path: Path) -> str:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        from cookproc.core import integrity
        from cookproc.core.parquet_io import read_table

        read_table(path)  # verifies every column against its stored digest
        digests = integrity.stored_digests(pq.read_metadata(path).metadata)
        assert digests is not None, f"{path} carries no column digests"
        content = json.dumps(sorted(digests.items())).encode()
    elif path.name == "numbers.json":
        numbers = json.loads(path.read_text(encoding="utf-8"))
        content = json.dumps({k: v for k, v in numbers.items() if k not in VOLATILE_NUMBERS_KEYS},
                             sort_keys=True).encode()
    else:
        content = path.read_bytes()
    return hashlib.sha256(content).hexdigest()


def torch_dependent(workdir: Path, rel: str, rules: set[str], memo: dict[str, bool]) -> bool:
    """Whether a torch rule wrote ``rel`` or any file it was made from (Snakemake's job records)."""
    from cookproc.app.lineage import snakemake_record

    if rel not in memo:
        memo[rel] = False  # no cycles in a DAG; guards a damaged record
        record = snakemake_record(workdir, rel)
        if record is not None:
            memo[rel] = record.get("rule") in rules or any(
                torch_dependent(workdir, str(Path(i)), rules, memo) for i in record.get("input") or [])
    return memo[rel]


def torch_build() -> str:
    import torch

    return f"torch {torch.__version__} on {torch.backends.cpu.get_cpu_capability()}"


def measure(workdir: Path) -> dict[str, tuple[str, bool]]:
    """{results path: (digest, made with torch)} of every compared output of a finished run."""
    rules, memo = torch_rules(), {}
    outputs = sorted(p for p in (workdir / "results").rglob("*")
                     if p.is_file() and (p.suffix in COMPARED_SUFFIXES or p.name == "numbers.json"))
    return {p.relative_to(workdir).as_posix(): (output_digest(p), torch_dependent(
        workdir, p.relative_to(workdir).as_posix(), rules, memo)) for p in outputs}


def read_record() -> tuple[str, dict[str, tuple[str, bool]]]:
    lines = RECORD.read_text(encoding="utf-8").splitlines()
    build = lines[0].removeprefix("# made with ")
    rows = [line.split("\t") for line in lines[2:]]
    return build, {path: (digest, torch == "torch") for path, torch, digest in rows}


def write_record(measured: dict[str, tuple[str, bool]]) -> None:
    RECORD.parent.mkdir(exist_ok=True)
    lines = [f"# made with {torch_build()}", "path\tmade_with\tdigest"]
    lines += [f"{path}\t{'torch' if torch else '-'}\t{digest}" for path, (digest, torch) in sorted(measured.items())]
    RECORD.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_whole_dag(base: Path) -> Path:
    upstream = write_tiny_upstream(base / "upstream")
    workdir = make_workdir(base / "run", upstream, {})
    run_snakemake(workdir, "all")
    return workdir


@pytest.mark.slow
def test_the_whole_fixture_dag_gives_the_recorded_results(tmp_path):
    build, recorded = read_record()
    measured = measure(run_whole_dag(tmp_path))
    same_build = build == torch_build()
    compared = {p for p, (_, torch) in recorded.items() if same_build or not torch}
    assert len(compared) >= 25, f"only {len(compared)} outputs compared"
    assert set(measured) == set(recorded), (
        f"outputs missing: {sorted(set(recorded) - set(measured))}; new: {sorted(set(measured) - set(recorded))}")
    changed = sorted(p for p in compared if measured[p][0] != recorded[p][0])
    assert not changed, (f"{len(changed)} of {len(compared)} outputs differ from {RECORD.name} "
                         f"(a deliberate change: rewrite it, see this file's docstring): {changed}")
    if not same_build:
        pytest.skip(f"{len(recorded) - len(compared)} outputs made with torch not compared: recorded with "
                    f"{build}, this is {torch_build()} (the {len(compared)} others are unchanged)")


def test_torch_rules_are_found():
    rules = torch_rules()
    assert {"train_srl", "keyclips_finetune", "srl_parse_tagger"} <= rules
    assert not rules & {"clips", "table4", "keyclips_tfidf", "kiddon_segment"}


if __name__ == "__main__":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="run the fixture DAG and rewrite the record")
    parser.add_argument("--from-run", type=Path, help="record a finished fixture run's folder instead")
    args = parser.parse_args()
    if not (args.write or args.from_run):
        parser.error("say --write or --from-run DIR")
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.from_run or run_whole_dag(Path(scratch))
        write_record(measure(workdir))
    print(f"wrote {RECORD}")
