"""Shared test fixtures: the tiny synthetic upstream folder and the real mirror (when present)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from fixtures import REPO, write_tiny_upstream

# Test files import each other's helpers by module name (`from test_video_frames import make_video`),
# across folders too (unit/<package>/, workflow/, contracts/): pytest puts each test file's own folder
# on sys.path only when it collects that file, so every folder of test files goes there first (their
# basenames are unique), whatever the collection order and when a single file is run.
TESTS = Path(__file__).resolve().parent
for _folder in sorted({path.parent for path in TESTS.rglob("test_*.py")}, reverse=True):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

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


def _tree_fingerprint(root: Path) -> dict:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session", autouse=True)
def shared_data_stays_untouched():
    """Tests may read ../shared (the mirror, PropBank EWT) but must never write there."""
    shared = (REPO / "../shared/data").resolve()
    before = _tree_fingerprint(shared) if shared.is_dir() else {}
    yield
    after = _tree_fingerprint(shared) if shared.is_dir() else {}
    changed = sorted(set(before.items()) ^ set(after.items()))
    assert not changed, f"tests modified the shared data folder: {changed[:5]}"


# The longest test files, longest first (measured with --durations). Two workers (`-n 2 --dist
# loadfile`) take files in collection order, so these start early instead of one of them running
# alone at the end; xdist's own reordering (by number of tests) is turned off for that reason.
# Matched by file name, in whichever folder of tests/ the file lies (basenames are unique).
LONGEST_FILES = ["test_rerun.py", "test_corpus_workflow.py", "test_slurm.py", "test_video_workflow.py",
                 "test_procedures_workflow.py", "test_cli.py", "test_kiddon_workflow.py", "test_workflow.py"]


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FILES)))  # stable: order within a file kept
