"""Shared test fixtures: the tiny synthetic upstream folder and the real mirror (when present)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from fixtures import REPO, write_tiny_upstream

# Keep tests light on the 2-core machines they run on.
os.environ.setdefault("OMP_NUM_THREADS", "1")
MIRROR = (REPO / "../shared/data/cooking-procedural-extraction").resolve()


@pytest.fixture
def tiny_upstream(tmp_path) -> Path:
    return write_tiny_upstream(tmp_path / "upstream")


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not (MIRROR / "youcook2" / "reviewed_0812.csv").exists():
        pytest.skip(f"upstream mirror not found at {MIRROR}")
    return MIRROR
