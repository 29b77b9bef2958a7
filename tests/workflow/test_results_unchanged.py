"""Results unchanged: the fixture workflow's whole default DAG gives the data recorded in
tests/data/fixture_results.tsv (and, for floating-point columns, tests/data/fixture_values.npz), so
that a refactoring (a move, a rename, a new route from config to code) is shown not to change any
result, on any machine.

What is compared, and how:
- a Parquet file by its data, not its footer's provenance (which names the commit): every column
  that holds no floating-point values, and the null slots and list lengths of those that do, by the
  column digests the reader verifies, exactly; the floating-point values by value, each within
  ``RELATIVE_TOLERANCE`` times the largest magnitude of its recorded column. Floating-point results
  differ in their last bits from one CPU to another (torch's and BLAS's kernels sum in other orders
  on other instruction sets and cache sizes: about 1e-6 of a column's scale between AVX512 and
  AVX2 on the fixture), so bits cannot be the contract; a real change moves values by far more;
- every other output (tables, lists, figures) by its bytes, and numbers.json without its run stamp
  and run times. These hold counts and ratios of counts and ranks, which last-bit differences of
  the scores do not move unless a decision flips, and a flipped decision is a changed result.

A deliberate change of results rewrites the record:

    PYTHONPATH=workflow .venv/bin/python tests/workflow/test_results_unchanged.py --write

and the diff of the .tsv shows which outputs changed.
"""
from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # fixtures, also when run as a script (--write)

from fixtures import make_workdir, run_snakemake, write_tiny_upstream  # noqa: E402

RECORD = TESTS / "data" / "fixture_results.tsv"
VALUES = RECORD.with_name("fixture_values.npz")
COMPARED_SUFFIXES = {".parquet", ".csv", ".tsv", ".md", ".png", ".lst", ".txt"}
VOLATILE_NUMBERS_KEYS = ("run", "run_times")  # the commit, config digest and date; wall times
#: A floating-point value may differ from its record by this share of its column's largest magnitude.
RELATIVE_TOLERANCE = 1e-4


def float_values(column: pa.ChunkedArray) -> np.ndarray | None:
    """The floating-point values of a column (of floats, or of lists of floats), flattened, with
    nulls as NaN; None for a column of other values."""
    type_ = column.type
    if pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_):
        column, type_ = pc.list_flatten(column), type_.value_type
    if not pa.types.is_floating(type_):
        return None
    return column.to_numpy(zero_copy_only=False).astype(np.float64)


def exact_part(column: pa.ChunkedArray) -> list:
    """What of a floating-point column is compared exactly: its type, null slots and list lengths."""
    parts = [str(column.type), column.null_count, hashlib.sha256(
        np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool).tobytes()).hexdigest()]
    if not pa.types.is_floating(column.type):
        parts.append(hashlib.sha256(pc.list_value_length(column).to_numpy(
            zero_copy_only=False).astype(np.int64).tobytes()).hexdigest())
    return parts


@dataclass
class Measured:
    digest: str  # of the exactly compared part
    floats: dict[str, np.ndarray] = field(default_factory=dict)  # column -> values, compared within tolerance


def measure_file(path: Path) -> Measured:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        from cookproc.core import integrity
        from cookproc.core.parquet_io import read_table

        table = read_table(path)  # verifies every column against its stored digest
        digests = integrity.stored_digests(pq.read_metadata(path).metadata)
        assert digests is not None, f"{path} carries no column digests"
        exact, floats = {}, {}
        for name in table.column_names:
            values = float_values(table[name])
            if values is None:
                exact[name] = digests[name]
            else:
                exact[name], floats[name] = exact_part(table[name]), values
        return Measured(hashlib.sha256(json.dumps(sorted(exact.items())).encode()).hexdigest(), floats)
    if path.name == "numbers.json":
        numbers = json.loads(path.read_text(encoding="utf-8"))
        content = json.dumps({k: v for k, v in numbers.items() if k not in VOLATILE_NUMBERS_KEYS},
                             sort_keys=True).encode()
    else:
        content = path.read_bytes()
    return Measured(hashlib.sha256(content).hexdigest())


def measure(workdir: Path) -> dict[str, Measured]:
    """{results path: what is compared} of every compared output of a finished run."""
    outputs = sorted(p for p in (workdir / "results").rglob("*")
                     if p.is_file() and (p.suffix in COMPARED_SUFFIXES or p.name == "numbers.json"))
    return {p.relative_to(workdir).as_posix(): measure_file(p) for p in outputs}


def read_record() -> dict[str, Measured]:
    rows = [line.split("\t") for line in RECORD.read_text(encoding="utf-8").splitlines()[1:]]
    record = {path: Measured(digest) for path, digest in rows}
    with np.load(VALUES, allow_pickle=False) as values:
        for key in values.files:
            path, column = key.split("::")
            record[path].floats[column] = values[key]
    return record


def write_record(measured: dict[str, Measured]) -> None:
    RECORD.parent.mkdir(exist_ok=True)
    lines = ["path\tdigest"] + [f"{path}\t{m.digest}" for path, m in sorted(measured.items())]
    RECORD.write_text("\n".join(lines) + "\n", encoding="utf-8")
    arrays = {f"{path}::{column}": values for path, m in sorted(measured.items())
              for column, values in sorted(m.floats.items())}
    # np.savez stamps each member with the time; a fixed date makes the same values the same bytes.
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, values in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(values), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue(),
                             compress_type=zipfile.ZIP_DEFLATED)
    VALUES.write_bytes(buffer.getvalue())


def float_differences(recorded: Measured, measured: Measured) -> tuple[list[str], float]:
    """The columns whose values differ beyond the tolerance, and the largest difference of any
    column as a share of its column's largest magnitude."""
    beyond, largest = [], 0.0
    for column in sorted(set(recorded.floats) | set(measured.floats)):
        old, new = recorded.floats.get(column), measured.floats.get(column)
        if old is None or new is None or old.shape != new.shape or not np.array_equal(
                np.isnan(old), np.isnan(new)):
            beyond.append(column)
            continue
        finite = ~np.isnan(old)
        scale = float(np.max(np.abs(old[finite]), initial=0.0))
        difference = float(np.max(np.abs(old[finite] - new[finite]), initial=0.0))
        share = difference / scale if scale else (0.0 if difference == 0 else np.inf)
        largest = max(largest, share)
        if share > RELATIVE_TOLERANCE or not np.array_equal(np.isinf(old), np.isinf(new)):
            beyond.append(column)
    return beyond, largest


def compare(recorded: dict[str, Measured], measured: dict[str, Measured]) -> tuple[list[str], str]:
    """The outputs that differ from the record (with what differs), and a summary of what was
    compared and how."""
    changed, largest, n_float_columns = [], (0.0, ""), 0
    for path in sorted(recorded):
        old, new = recorded[path], measured[path]
        beyond, share = float_differences(old, new)
        n_float_columns += len(old.floats)
        largest = max(largest, (share, path))
        if old.digest != new.digest:
            changed.append(f"{path} (exactly compared part)")
        changed += [f"{path} column {column!r} (beyond {RELATIVE_TOLERANCE:g} of its scale)" for column in beyond]
    n_parquet = sum(p.endswith(".parquet") for p in recorded)
    summary = (f"{len(recorded)} outputs compared: {n_parquet} Parquet files by their column digests, "
               f"{n_float_columns} of their floating-point columns by value within {RELATIVE_TOLERANCE:g} of "
               f"each column's largest magnitude (largest difference seen: {largest[0]:.1e} of its scale, in "
               f"{largest[1] or 'none'}); {len(recorded) - n_parquet} other files by their bytes")
    return changed, summary


def run_whole_dag(base: Path) -> Path:
    upstream = write_tiny_upstream(base / "upstream")
    workdir = make_workdir(base / "run", upstream, {})
    run_snakemake(workdir, "all")
    return workdir


@pytest.fixture(scope="module")
def whole_dag(tmp_path_factory) -> Path:
    """The fixture workflow's default DAG, run once for the tests below."""
    return run_whole_dag(tmp_path_factory.mktemp("whole-dag"))


@pytest.mark.slow
def test_the_whole_fixture_dag_gives_the_recorded_results(whole_dag):
    recorded = read_record()
    measured = measure(whole_dag)
    assert set(measured) == set(recorded), (
        f"outputs missing: {sorted(set(recorded) - set(measured))}; new: {sorted(set(measured) - set(recorded))}")
    changed, summary = compare(recorded, measured)
    assert not changed, (f"{len(changed)} differences from {RECORD.name} (a deliberate change: rewrite it, see "
                         f"this file's docstring): {changed}. {summary}")
    print(summary)


@pytest.mark.slow
def test_each_system_file_was_written_by_the_rule_the_registry_names(whole_dag):
    """The system registry's producing rule of every configured system (and of each seed's run of a
    system scored over its seeds) is the rule Snakemake recorded as the writer of its file."""
    import yaml

    from cookproc.app.lineage import snakemake_record
    from cookproc.core import registry
    from cookproc.core.config_schema import validate_config

    config = validate_config(yaml.safe_load((whole_dag / "config.yaml").read_text(encoding="utf-8")))
    systems = registry.configured({"keyclips": config["tables"]["keyclip_systems"],
                                   "tuples": config["tables"]["tuple_systems"]})
    writers = {}
    for entry in (e for kind in registry.KINDS for e in systems[kind].values()):
        writers[entry.path] = entry.rule
        writers.update(dict.fromkeys(entry.seed_run_files(config), entry.seed_run_rule))
    recorded = {path: (snakemake_record(whole_dag, path) or {}).get("rule") for path in writers}
    assert recorded == writers
    # Every kind of origin and of seeds is among them: upstream's imports, seed runs, one-seed fits.
    rules = set(writers.values())
    assert {"import_upstream_neural", "keyclips_neural", "keyclips_neural_text", "supervised_tuples_text"} <= rules
    assert writers["results/tuples/supervised-text-rebuiltlex.parquet"] == "supervised_tuples_text"
    assert len(config["keyclips"]["neural"]["seeds"]) > 1 and len(writers) > len(systems["keyclips"]) + len(
        systems["tuples"])


def recorded_copy() -> dict[str, Measured]:
    return {path: Measured(m.digest, {c: v.copy() for c, v in m.floats.items()}) for path, m in read_record().items()}


def test_last_bit_differences_pass_and_real_changes_do_not():
    """The comparison itself, on the record: values moved by a few units in the last place pass;
    a value moved by more than the tolerance, or a changed exact part, is reported by name."""
    recorded = read_record()
    path, column = next((p, c) for p, m in sorted(recorded.items()) for c in sorted(m.floats)
                        if np.isfinite(m.floats[c]).any() and np.abs(m.floats[c][np.isfinite(m.floats[c])]).max() > 0)
    nudged = recorded_copy()
    values = nudged[path].floats[column]
    nudged[path].floats[column] = np.where(np.isfinite(values), values * (1 + 4e-7), values)
    assert compare(recorded, nudged)[0] == []

    moved = recorded_copy()
    values = moved[path].floats[column]
    scale = np.abs(values[np.isfinite(values)]).max()
    index = int(np.flatnonzero(np.isfinite(values))[0])
    values[index] += 3 * RELATIVE_TOLERANCE * scale
    assert compare(recorded, moved)[0] == [f"{path} column {column!r} (beyond {RELATIVE_TOLERANCE:g} of its scale)"]

    other = recorded_copy()
    other[path].digest = "0" * 64
    assert compare(recorded, other)[0] == [f"{path} (exactly compared part)"]


def test_the_record_holds_the_float_values_of_the_torch_outputs():
    """The outputs that differ between CPUs (torch's features and scores) are recorded by value."""
    recorded = read_record()
    assert {"embedding"} <= set(recorded["results/features/text/all-MiniLM-L6-v2.parquet"].floats)
    assert {"score"} <= set(recorded["results/keyclips/neural-text.parquet"].floats)
    assert not recorded["results/table4.csv"].floats


if __name__ == "__main__":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="run the fixture DAG and rewrite the record")
    parser.add_argument("--from-run", type=Path, help="record a finished fixture run's folder instead")
    parser.add_argument("--check-run", type=Path, help="compare a finished fixture run's folder with the record")
    args = parser.parse_args()
    if args.check_run:
        found, text = compare(read_record(), measure(args.check_run))
        print("\n".join(found) or "no differences")
        print(text)
        sys.exit(1 if found else 0)
    if not (args.write or args.from_run):
        parser.error("say --write, --from-run DIR or --check-run DIR")
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.from_run or run_whole_dag(Path(scratch))
        write_record(measure(workdir))
    print(f"wrote {RECORD} and {VALUES.name}")
