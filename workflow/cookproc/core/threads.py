"""Holding a job's native thread pools to the threads its rule declares.

torch, numpy's BLAS and scikit-learn's OpenMP (the tuple extractor's boosting) each start one thread
per core unless told otherwise, so ``snakemake -c2`` running two one-thread shards would run four or
more busy threads on two cores, and a cluster job would use every core of its node. Torch-free:
torch, when imported already, is set directly; imported later, it reads ``OMP_NUM_THREADS``.
"""
from __future__ import annotations

import os
import sys

#: Read by OpenMP, OpenBLAS and MKL when they load: covers the libraries not loaded yet.
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def limit_threads(n: int) -> int:
    """Hold every native thread pool of this process to ``n`` threads (at least 1) from now on;
    returns ``n``."""
    from threadpoolctl import threadpool_limits

    n = max(1, int(n))
    for name in THREAD_ENV:
        os.environ[name] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    threadpool_limits(limits=n)  # the pools already loaded (numpy's BLAS, ...)
    return n
