"""Lint of the workflow in CI: Snakemake's own linter, and snakefmt (the formatter of the Snakemake
workflow catalog) over the Snakefile and the rule files, with the settings in pyproject.toml."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures import REPO

BIN = Path(sys.executable).parent


def run(command: list[str], timeout: int) -> subprocess.CompletedProcess:
    # The library of this checkout, whatever the environment installed (as the workflow tests do).
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def test_snakemake_lint_passes():
    done = run([str(BIN / "snakemake"), "--lint"], timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"snakemake --lint failed:\n{output[-4000:]}"
    assert "Congratulations, your workflow is in a good condition!" in output


def test_rule_files_are_formatted_by_snakefmt():
    files = ["Snakefile", *sorted(str(p.relative_to(REPO)) for p in (REPO / "rules").glob("*.smk"))]
    done = run([str(BIN / "snakefmt"), "--check", *files], timeout=300)
    assert done.returncode == 0, (f"snakefmt --check failed (fix with `snakefmt Snakefile rules`):\n"
                                  f"{(done.stdout + done.stderr)[-4000:]}")
