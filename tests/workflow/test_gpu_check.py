"""bench/gpu_check.py in its CI mode (--device cpu --tiny): every torch rule's code path runs, its
numbers are sane, and on the CPU every CPU-vs-device comparison is exact (bit-identical)."""
import json
import math
import os
import subprocess
import sys

from fixtures import REPO

# Every rule that runs a model on a configured device (tests/contracts/test_gpu_preset.py), except the two
# whose models are the deployed selector and the tagger (procedures_extract, corpus_shard): the check
# times those per clip for the corpus projection.
CHECKED_RULES = {"text_features", "keyclips_finetune", "supervised_finetune", "deploy_keyclip_selector", "train_srl",
                 "srl_parse_tagger", "video_frame_features", "video_tsm"}


def test_the_device_check_runs_every_torch_rule_on_the_cpu_in_tiny_mode(tmp_path):
    out = tmp_path / "check.json"
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow"), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_check.py"), "--device", "cpu", "--tiny",
                           "--threads", "1", "--json", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(out.read_text())
    assert result["failed"] == []
    rules = {r["rule"]: r for r in result["rules"]}
    assert set(rules) == CHECKED_RULES
    for name, r in rules.items():
        assert 0 < r["seconds"] < 120 and math.isfinite(r["projected_s"]) and r["projected_s"] > r["seconds"] / 10, name
        assert name in proc.stdout
    # A rule's projection covers more work than its slice (the real rule's steps / items).
    assert rules["keyclips_finetune"]["projected_s"] > rules["keyclips_finetune"]["seconds"]
    assert "5 folds" in rules["keyclips_finetune"]["projection"]
    # CPU against CPU: the same weights and inputs give the same bits.
    agreements = {name: r["agreement"] for name, r in rules.items() if r["agreement"]}
    assert {"text_features", "keyclips_finetune", "supervised_finetune", "deploy_keyclip_selector",
            "srl_parse_tagger", "video_frame_features"} <= set(agreements)
    for name, a in agreements.items():
        if "max_abs_diff" in a:
            assert a["max_abs_diff"] == 0.0, (name, a)
    assert agreements["srl_parse_tagger"]["equal_sentences"] == "100/100"
    assert agreements["deploy_keyclip_selector"]["equal_decisions"] == "200/200"
    in_main_job = {"text_features", "keyclips_finetune", "supervised_finetune", "train_srl", "srl_parse_tagger"}
    assert result["main_job_s"] > sum(rules[n]["projected_s"] for n in in_main_job)
    assert 0 < result["corpus_s_per_clip"] < 1
    assert "main job on one node (16 cores, 1 cpu)" in proc.stdout
