"""presets/gpu.yaml: every torch rule on a GPU, the same jobs as config.yaml, and with
profiles/slurm the torch rules on the GPU partition and every other rule on CPU nodes."""
from pathlib import Path

import pytest
import yaml

from fixtures import REPO, make_workdir, write_tiny_upstream
from test_presets import PRESETS, merged, planned
from test_slurm_profile import declared, is_gpu_rule, load_rules, routed_partitions

GPU_PRESET = PRESETS / "gpu.yaml"
# The rules whose scripts run torch models on the configured device (the `device` keys of srl,
# video, keyclips and procedures). Everything else is a CPU job, torch-using ones included
# (keyclips_neural_* train their small net on the CPU; srl_parse_spacy and srl_import_allennlp
# are given device "cpu").
TORCH_DEVICE_RULES = {"text_features", "keyclips_finetune", "supervised_finetune", "deploy_keyclip_selector",
                      "train_srl", "srl_parse_tagger", "video_frame_features", "video_tsm", "procedures_extract",
                      "corpus_shard", "caption_vectors"}


def device_keys(config, path=()):
    """Every `device` key of a config, as its path."""
    for key, value in config.items():
        if key == "device":
            yield path + (key,)
        elif isinstance(value, dict):
            yield from device_keys(value, path + (key,))


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    return write_tiny_upstream(tmp_path_factory.mktemp("upstream") / "upstream")


@pytest.fixture(scope="module")
def gpu_rules(tmp_path_factory, upstream):
    preset = yaml.safe_load(GPU_PRESET.read_text())
    return load_rules(REPO / "Snakefile", make_workdir(tmp_path_factory.mktemp("gpu") / "work", upstream, preset))


@pytest.fixture(scope="module")
def cpu_rules(tmp_path_factory, upstream):
    return load_rules(REPO / "Snakefile", make_workdir(tmp_path_factory.mktemp("cpu") / "work", upstream))


def test_the_preset_sets_every_device_key_to_cuda_and_nothing_else():
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    preset = yaml.safe_load(GPU_PRESET.read_text())
    assert sorted(device_keys(preset)) == sorted(device_keys(config))
    assert len(list(device_keys(config))) == 5  # srl, video, keyclips, captions, procedures
    full = merged("gpu")
    for path in device_keys(config):
        value = full
        for key in path:
            value = value[key]
        assert value == "cuda", path


def test_the_preset_asks_for_a_gpu_exactly_on_the_torch_rules(gpu_rules):
    asking = {name for name, rule in gpu_rules.items() if is_gpu_rule(rule)}
    assert asking == TORCH_DEVICE_RULES
    for name, rule in gpu_rules.items():
        device = rule.params.get("device") if "device" in rule.params.keys() else None
        if name in TORCH_DEVICE_RULES:
            assert device == "cuda", name
            assert rule.conda_env == "../envs/torch.yaml", name
            res = declared(rule)
            assert res["gpu"] == 1 and "mem_mb" in res and "runtime" in res, (name, res)
        else:
            assert device in (None, "cpu"), (name, device)


def test_without_the_preset_only_the_video_rules_ask_for_a_gpu(cpu_rules):
    # config.yaml's video.device is auto (CUDA when the job sees one): those two always ask.
    assert {name for name, rule in cpu_rules.items() if is_gpu_rule(rule)} == {"video_frame_features", "video_tsm"}


def test_slurm_sends_the_torch_rules_to_the_gpu_partition_and_the_rest_to_cpu_nodes(gpu_rules):
    chosen = routed_partitions(gpu_rules)
    assert {name for name, partition in chosen.items() if partition == "gpu"} == TORCH_DEVICE_RULES
    assert "table5" in chosen and chosen["table5"] == "cpu"


def test_every_torch_device_rule_runs_the_torch_settings_helper(gpu_rules):
    """One helper (cookproc.core.torch_runtime.configure_torch) applies threads, the device check and
    torch.deterministic in every script that runs a model on a configured device."""
    for name, rule in gpu_rules.items():
        if "device" not in rule.params.keys():
            continue
        assert rule.params.get("deterministic") is False, name  # config.yaml's torch.deterministic
        script = (REPO / "rules" / rule.script).resolve()  # relative to the rule file
        assert "configure_torch(" in script.read_text(), (name, script)


@pytest.mark.slow
def test_the_preset_plans_the_same_jobs_as_config_yaml(tmp_path, upstream):
    work = make_workdir(tmp_path / "work", upstream)
    (work / "data" / "user").mkdir(parents=True)
    (work / "data" / "user" / "soup.txt").write_text("Chop the onions.\nHeat the oil.\n", encoding="utf-8")
    for target in ("all", "results/procedures/soup.json"):
        default = planned(work, target=target)
        gpu = planned(work, "--configfile", str(GPU_PRESET), target=target)
        assert gpu == default, target
        assert TORCH_DEVICE_RULES & set(gpu), target  # the comparison covers torch rules
