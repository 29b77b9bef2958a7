"""Logging for workflow scripts: everything a script says goes to its rule's log file."""
from __future__ import annotations

import contextlib
import logging
import sys
import traceback


@contextlib.contextmanager
def script_logging(smk):
    """Send stderr and ``logging`` to ``smk.log[0]``; log the traceback of a failure, then re-raise."""
    log_path = smk.log[0] if len(smk.log) else None
    if log_path is None:
        yield logging.getLogger("cookproc")
        return
    with open(log_path, "w", encoding="utf-8", buffering=1) as handle:
        old_stderr = sys.stderr
        sys.stderr = handle
        root = logging.getLogger()
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            yield logging.getLogger(f"cookproc.{smk.rule}")
        except BaseException:
            traceback.print_exc(file=handle)
            raise
        finally:
            root.removeHandler(handler)
            sys.stderr = old_stderr
