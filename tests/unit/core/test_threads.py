"""Jobs hold their native thread pools to their rule's threads (cookproc.core.threads)."""
import json
import os
import subprocess
import sys

import pytest

# Limit first, then load what a corpus shard loads later: torch and scikit-learn's OpenMP boosting.
PROBE = r"""
import json, sys
import numpy
from cookproc.core.threads import limit_threads
limit_threads(int(sys.argv[1]))
import torch
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
from threadpoolctl import threadpool_info
print(json.dumps({"torch": torch.get_num_threads(), "sklearn": _openmp_effective_n_threads(),
                  "pools": sorted({p["num_threads"] for p in threadpool_info()})}))
"""


@pytest.mark.parametrize("threads, expected", [(1, 1), (2, 2), (0, 1)])
def test_every_pool_loaded_before_or_after_the_limit_uses_the_rules_threads(threads, expected):
    # In a process of its own: the limit holds for the rest of the process.
    out = subprocess.run([sys.executable, "-c", PROBE, str(threads)], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert seen["torch"] == seen["sklearn"] == expected
    # A BLAS pool cannot grow beyond the CPUs this process may use (taskset, a cluster's cgroup).
    usable = min(expected, len(os.sched_getaffinity(0)))
    assert max(seen["pools"]) <= expected and min(seen["pools"]) >= usable
