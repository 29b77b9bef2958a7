"""``cookproc inspect``: what a Parquet file of the workflow holds, where it came from, and whether
it is still current.

For one file: its columns with their meanings (the data contracts of ``cookproc.core.schemas``),
its row count and first rows, whether its page checksums and column digests verify, its provenance
(``cookproc.core.provenance``), and whether it is current against today's code and config: the
tests Snakemake's rerun triggers make (code, params, inputs), made without Snakemake:

- code: the rule's script and every library module it can execute, fingerprinted again in this
  checkout and compared file by file with the fingerprints the file records;
- params: the config keys the rule's params came from, read again from the config (the workflow
  folder's ``config.yaml``, or ``--config``) and compared key by key;
- inputs: each input's digest computed again and compared.

A changed one makes the file stale, and the report names it (``config key keyclips.neural.max_epochs
changed 30 -> 40``). Params that are no config value as such (derived ones) cannot be checked this
way and are listed as unchecked. ``--lineage`` walks back from the file to the benchmark's own
files (:mod:`cookproc.app.lineage`). A damaged file is reported as damaged, never moved and never
with a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from cookproc.app.lineage import lineage, render_lineage, workflow_root
from cookproc.core import integrity, places, provenance
from cookproc.core.digests import compact, file_digest, plain
from cookproc.core.errors import ExpectedError, InputError, one_line, require_file
from cookproc.core.page_checksums import page_checksum_counts

MISSING = object()
EXIT_OK, EXIT_DAMAGED = 0, 1


# ----------------------------------------------------------------------------- the config
def load_config(path: str | os.PathLike) -> dict:
    """A workflow config, validated and with its defaults filled (as the workflow reads it)."""
    import yaml

    from cookproc.core.config_schema import validate_config

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "config file not found")
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return validate_config(config)
    except Exception as exc:  # YAML errors, snakemake's WorkflowError, jsonschema's errors alike
        raise InputError(path, f"not a valid workflow config: {' '.join(str(exc).split())[:500]}") from exc


def default_config_path(root: Path) -> Path:
    """The config a run in ``root`` reads by default: its config.yaml, else this checkout's."""
    return root / "config.yaml" if (root / "config.yaml").is_file() else provenance.CHECKOUT / "config.yaml"


# ----------------------------------------------------------------------------- one file
def read_verified(path: Path, root: Path | None = None):
    """``(table, None, None)`` for a file a job reading it accepts; ``(None, why, None)`` for a
    damaged one, ``(None, None, why)`` for one written for another path: the verdict of the one check
    every reader makes (:func:`cookproc.core.parquet_io.verify`, relative to the workflow folder
    ``root``), never moving the file."""
    from cookproc.core.parquet_io import verify

    try:
        return verify(path, root=root), None, None
    except integrity.Misplaced as exc:
        return None, None, str(exc)
    except integrity.Damage as exc:
        return None, str(exc), None


def verified(digests: bool, pages: tuple[int, int] | None) -> dict[str, Any]:
    """What reading a file verified: its column digests (when it has them) and its pages' CRCs
    (those it has: pyarrow checks a CRC where a page carries one and says nothing of pages
    without), and that sentence for the report."""
    with_crc, total = pages if pages is not None else (None, None)
    parts = ["column digests verified" if digests else "no column digests"]
    if pages is None:
        parts.append("page checksums unknown (the page headers could not be read)")
    elif total and with_crc == total:
        parts.append(f"page checksums verified ({total} pages)")
    elif with_crc:
        parts.append(f"page checksums verified on {with_crc} of {total} pages (the others have none)")
    else:
        parts.append("no page checksums")
    text = "; ".join(parts)
    if not digests and not with_crc:
        text = "nothing verified: no column digests and no page checksums (the file decodes, but a changed value " \
               "would go unnoticed)"
    return {"column_digests": digests, "pages": total, "pages_with_checksums": with_crc, "text": text}


def _format(value: Any) -> str:
    return compact(value)


def _get(config: Any, dotted: str) -> Any:
    node = config
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = node[key]
    return plain(node)


def _config_changes(key: str, then: Any, now: Any) -> list[str]:
    if now is MISSING:
        return [f"config key {key} is no longer in the config (was {_format(then)})"]
    if isinstance(then, dict) and isinstance(now, dict):
        out = []
        for sub in sorted(set(then) | set(now)):
            if sub in then:
                out += _config_changes(f"{key}.{sub}", then[sub], now.get(sub, MISSING))
            else:
                out.append(f"config key {key}.{sub} was added ({_format(now[sub])})")
        return out
    if _format(then) != _format(now):
        return [f"config key {key} changed {_format(then)} -> {_format(now)}"]
    return []


def code_changes(record: dict) -> list[str]:
    """What changed in the code the file's rule ran, in this checkout (empty: nothing): its code
    fingerprint is computed again (what decides reruns); when it differs, the files the job loaded
    whose content differs are named."""
    import hashlib

    from cookproc.core.fingerprint import code_fingerprint

    script = record.get("script")
    if not script:
        return []
    checkout = provenance.CHECKOUT
    if not (checkout / script).is_file():
        return [f"code: its script {script} is no longer in this checkout"]
    now = code_fingerprint(checkout / script, checkout / "workflow" / "cookproc", checkout)
    if now == record.get("code"):
        return []
    changed = []
    for rel, digest in sorted((record.get("code_files") or {}).items()):
        path = checkout / rel
        if not path.is_file():
            changed.append(f"code changed: {rel} is gone")
        elif hashlib.sha256(path.read_bytes()).hexdigest()[:16] != digest:
            changed.append(f"code changed: {rel}")
    return changed or [f"code changed: a module {script} can import (code fingerprint {record.get('code')} -> {now})"]


def freshness(record: dict | None, root: Path, config: dict | None) -> dict[str, Any]:
    """Whether a file with provenance ``record`` is current against this checkout's code, ``config``
    and its inputs as they are now: {"status": current|stale|unknown, "reasons": [...], "unchecked": [...]}."""
    if record is None or record.get("rule") is None:
        why = "no provenance" if record is None else "written outside a workflow job (no rule recorded)"
        return {"status": "unknown", "reasons": [why], "unchecked": []}
    reasons = code_changes(record)
    if config is not None:
        for key, then in sorted((record.get("config") or {}).items()):
            reasons += _config_changes(key, then, _get(config, key))
    for entry in record.get("inputs") or []:
        path = Path(entry["path"])
        now = file_digest(path if path.is_absolute() else root / path)
        if now is None:
            reasons.append(f"input {entry['path']} is missing")
        elif now != entry.get("digest"):
            reasons.append(f"input {entry['path']} changed")
    unchecked = [f"param {name} (not a config value as such)" for name in record.get("untraced_params") or []]
    return {"status": "stale" if reasons else "current", "reasons": reasons, "unchecked": unchecked}


def inspect_file(path: str | os.PathLike, *, config_path: str | os.PathLike | None = None,
                 rows: int = 5) -> dict[str, Any]:
    """Everything ``cookproc inspect FILE`` reports, as JSON data."""
    import pyarrow.parquet as pq

    from cookproc.core.schemas import column_description, contract_of

    path = Path(path)
    require_file(path)
    if path.suffix != ".parquet":
        raise InputError(path, "not a Parquet file (.parquet): only those carry provenance")
    root = workflow_root(path)
    report: dict[str, Any] = {"file": str(path), "workflow_dir": str(root)}
    table, damage, misplaced = read_verified(path, root)
    if damage is not None:
        report.update(status="damaged", damage=damage)
        return report
    if misplaced is not None:
        # What a rule reading it does: refuse it (and move it aside) as not this path's file. The
        # file is read once more, without the place check, to show what it holds.
        from cookproc.core.parquet_io import verify

        try:
            table = verify(path, user_file=True)
        except integrity.Damage as exc:  # written elsewhere, and damaged since
            report.update(status="damaged", damage=f"{misplaced}, and {exc}")
            return report
    metadata = pq.read_metadata(path).metadata
    digests = integrity.stored_digests(metadata)
    contract = contract_of(table.schema)
    report["contract"] = contract
    report["rows"] = table.num_rows
    report["columns"] = [{"name": field.name, "type": str(field.type), "nullable": field.nullable,
                          "description": column_description(contract, field.name)} for field in table.schema]
    report["first_rows"] = table.slice(0, rows).to_pylist()
    report["verified"] = verified(digests is not None, page_checksum_counts(path))
    try:
        record = provenance.stored_provenance(metadata)
    except provenance.ProvenanceError as exc:
        report.update(status="damaged", damage=str(exc))
        return report
    report["provenance"] = record
    if misplaced is not None:
        report.update(written_elsewhere=misplaced, status="misplaced", unchecked=[], reasons=[
            f"{misplaced}, not as {places.relative_path(path, root)}: a rule reading it refuses it and moves "
            "it aside"])
        return report
    # Outside results/ a file is anybody's copy: where its job wrote it is worth a note only.
    elsewhere = provenance.written_elsewhere(record, path, root)
    if elsewhere is not None:
        report["written_elsewhere"] = elsewhere
    config_file = Path(config_path) if config_path else default_config_path(root)
    config = load_config(config_file) if record is not None and record.get("rule") else None
    report["config_file"] = str(config_file) if config is not None else None
    report.update(freshness(record, root, config))
    return report


# ----------------------------------------------------------------------------- text
def render(report: dict[str, Any]) -> str:
    lines = [report["file"]]
    if report.get("status") == "damaged":
        lines.append(f"  damaged: {report['damage']}")
        return "\n".join(lines) + "\n"
    columns = report["columns"]
    lines.append(f"  contract   {report['contract'] or '(a stage schema)'}; {report['rows']} rows, {len(columns)} columns")
    lines.append(f"  verified   {report['verified']['text']}")
    lines.append("  columns")
    width = max(len(c["name"]) for c in columns)
    type_width = max(len(c["type"]) for c in columns)
    for c in columns:
        null = "null ok " if c["nullable"] else "not null"
        lines.append(f"    {c['name']:<{width}}  {c['type']:<{type_width}}  {null}  {c['description'] or ''}".rstrip())
    lines.append(f"  first {len(report['first_rows'])} rows")
    for row in report["first_rows"]:
        text = json.dumps(row, ensure_ascii=False, default=str)
        lines.append(f"    {text if len(text) <= 160 else text[:157] + '...'}")
    record = report.get("provenance")
    if record is None:
        lines.append("  provenance none")
    else:
        lines.append("  provenance")
        software = ", ".join(f"{k} {v}" for k, v in record.get("software", {}).items() if k != "encoders")
        encoders = record.get("software", {}).get("encoders")
        if record.get("rule") is None:
            lines.append("    written outside a workflow job")
        else:
            commit = record.get("commit")
            commit_text = "none (not a git checkout)" if commit is None else \
                f"{commit}{' + uncommitted changes' if record.get('commit_dirty') else ''}"
            lines += [f"    rule       {record['rule']} {_format(record.get('wildcards') or {})}",
                      f"    outputs    {', '.join(record.get('outputs') or []) or '(not recorded)'}",
                      f"    script     {record.get('script')} (code {record.get('code')}, "
                      f"{len(record.get('code_files') or {})} files)",
                      f"    commit     {commit_text}",
                      f"    params     {_format(record.get('params'))} (sha256 {record.get('params_hash', '')[:16]})",
                      f"    config     {_format(record.get('config'))} (sha256 {record.get('config_hash', '')[:16]})"]
            for entry in record.get("inputs") or []:
                name = f"{entry['name']}: " if entry.get("name") else ""
                lines.append(f"    input      {name}{entry['path']}  {entry.get('digest')}")
        lines.append(f"    software   {software}")
        for encoder in encoders or []:
            lines.append(f"    encoder    {encoder['name']} {encoder['revision']}")
    status = report.get("status")
    if report.get("written_elsewhere") and status != "misplaced":
        lines.append(f"  note       {report['written_elsewhere']}, not as this path")
    if status == "misplaced":
        lines.append("  status     misplaced: " + "; ".join(report["reasons"]))
    elif status == "current":
        lines.append(f"  status     current (code, config {report['config_file']} and inputs unchanged)")
    elif status == "stale":
        lines.append("  status     stale: " + "; ".join(report["reasons"]))
    else:
        lines.append("  status     unknown: " + "; ".join(report.get("reasons") or []))
    for item in report.get("unchecked") or []:
        lines.append(f"  unchecked  {item}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- command line
def add_parser(commands) -> None:
    """The ``inspect`` subcommand of ``cookproc``."""
    command = commands.add_parser(
        "inspect", help="what a Parquet file of the workflow holds, where it came from, whether it is current",
        description="Show FILE's columns and their meanings, row count, first rows, whether its digests verify, "
                    "its provenance (rule, params, config keys, inputs, code) and whether it is current against "
                    "today's code, config and inputs. Exit status 1 for a damaged or missing file, or one written for another path.")
    command.add_argument("file", metavar="FILE", help="a Parquet file under results/ (or any Parquet file)")
    command.add_argument("--lineage", action="store_true", help="the tree of files FILE was made from, down to "
                                                                "the benchmark's files")
    command.add_argument("--json", action="store_true", help="JSON output")
    command.add_argument("--config", metavar="YAML", help="the config to check against (default: config.yaml "
                                                          "of the folder holding results/)")
    command.add_argument("--rows", type=int, default=5, metavar="N", help="rows to show (default 5)")


def run(args: argparse.Namespace) -> int:
    """``cookproc inspect``; bad input or a damaged file: a message and exit status 1, no traceback."""
    try:
        if args.lineage:
            require_file(args.file)
            tree = lineage(Path(args.file).resolve())
            sys.stdout.write(json.dumps(tree, indent=1, ensure_ascii=False) + "\n" if args.json
                             else render_lineage(tree))
            return EXIT_OK
        report = inspect_file(args.file, config_path=args.config, rows=args.rows)
    except (ExpectedError, OSError) as exc:
        print(f"cookproc inspect: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_DAMAGED
    sys.stdout.write(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n" if args.json
                     else render(report))
    return EXIT_DAMAGED if report.get("status") in ("damaged", "misplaced") else EXIT_OK
