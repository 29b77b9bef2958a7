"""The system registry: every key-clip and tuple system the workflow can score, and the facts about
it that the rules and the tables need, in one place.

A system is a kind (``keyclips``: results/keyclips/<name>.parquet, Table 4; ``tuples``:
results/tuples/<name>.parquet, Table 5) and a name; one name can be a system of both kinds
(``supervised`` is a key-clip classifier and a tuple extractor, two entries). For each:

- ``origin``: ``upstream`` (upstream's prediction files, imported), ``ours`` (this workflow's runs,
  the paper's procedures included) or ``user`` (a file of the user-systems folder, ``user-<name>``);
- ``rule``: the rule that writes its Parquet file (tests/workflow/test_results_unchanged.py checks it against
  Snakemake's records of the fixture run);
- its seeds: ``seeds``, the config key holding its seed (or, with ``seed_runs``, its list of
  seeds: one run per seed, each written by ``seed_run_rule`` to ``seed_runs`` with ``{seed}``, and
  the system's file is the first seed's run), else a deterministic fit or no seed at all;
- ``threshold``: the config key of the rule that turned its scores into key decisions (None: it
  ships decisions only); ``selection_info``: the file(s) where nested selection recorded each fold's
  choice of that rule (``{seed}`` for each seed run);
- ``srl_backend``: the SRL parses its tuples come from (the SRL systems); ``lexicon``: the cooking
  lexicon it reads when the same rule runs it with either (``upstream`` or ``rebuilt``).

Readers: rules/common.smk (the configured systems' entries, which systems need the SRL tagger, the
lexicon of each text-only supervised extractor), rules/evaluate.smk (seed runs, threshold rules,
selection records), rules/numbers.smk (whether any system has seed runs) and
:func:`cookproc.evaluation.tables.seeds_of` (each row's ``seeds`` label).
A new system gets its entry here, and its name under ``tables:`` in config.yaml.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

KEYCLIPS, TUPLES = "keyclips", "tuples"
KINDS = (KEYCLIPS, TUPLES)
UPSTREAM, OURS, USER = "upstream", "ours", "user"
#: A user system's name: this prefix, then the name of its file in the user-systems folder.
USER_PREFIX = "user-"
#: The SRL backends of our SRL systems (rules/srl.smk), and the trained one.
SRL_BACKENDS = ("tagger", "spacy", "allennlp")
TAGGER = "tagger"
#: The cooking lexicons a system can read (the paths: rules/common.smk, LEXICONS).
LEXICONS = ("upstream", "rebuilt")


class UnknownSystem(ValueError):
    """A configured system the registry has no entry for."""


@dataclass(frozen=True)
class System:
    name: str
    kind: str
    origin: str
    rule: str
    seeds: str | None = None
    deterministic: bool = False
    seed_runs: str | None = None
    seed_run_rule: str | None = None
    threshold: str | None = None
    selection_info: str | None = None
    srl_backend: str | None = None
    lexicon: str | None = None

    @property
    def path(self) -> str:
        """The system's file: one row per benchmark clip."""
        return f"results/{self.kind}/{self.name}.parquet"

    def seed_list(self, config: Mapping) -> list[int] | None:
        """Its configured seeds (one for a system trained once), None for a system without seeds."""
        if self.seeds is None:
            return None
        value = setting(config, self.seeds)
        return list(value) if isinstance(value, (list, tuple)) else [value]

    def seed_run_files(self, config: Mapping) -> list[str]:
        """One file per configured seed for a system scored over its seeds, else none."""
        return [self.seed_runs.format(seed=s) for s in self.seed_list(config)] if self.seed_runs else []

    def selection_infos(self, config: Mapping) -> list[str]:
        """The files recording each fold's choice of threshold rule (one per seed run), else none."""
        if self.selection_info is None:
            return []
        if "{seed}" in self.selection_info:
            return [self.selection_info.format(seed=s) for s in self.seed_list(config)]
        return [self.selection_info]


def setting(config: Mapping, key: str) -> Any:
    """The value of a dotted config key (``keyclips.neural.seeds``)."""
    value = config
    for part in key.split("."):
        value = value[part]
    return value


def _entries() -> list[System]:
    neural = [System(f"neural-{variant}", KEYCLIPS, OURS, "keyclips_neural", seeds="keyclips.neural.seeds",
                     seed_runs=f"results/keyclips/seeds/neural-{variant}.seed{{seed}}.parquet",
                     seed_run_rule=f"keyclips_neural_{variant}", threshold="keyclips.neural.threshold_metric",
                     selection_info=f"results/keyclips/seeds/neural-{variant}.seed{{seed}}.json")
              for variant in ("text", "visual", "full")]
    srl = [System(f"srl-{heuristics}-{backend}", kind, OURS, f"srl_systems_{heuristics}",
                  seeds="srl.tagger.seed" if backend == TAGGER else None, srl_backend=backend)
           for heuristics in ("noheur", "heur", "heurlex") for backend in SRL_BACKENDS for kind in KINDS]
    # The paper's visual-only and fusion procedures on TSM predictions (upstream's or our own TSM),
    # as upstream ran them (paper) and corrected.
    video = [System(f"{name}-{source}-{variant}", TUPLES, OURS, f"video_tuples_{variant}")
             for name in ("visual", "fusion-naive", "fusion-oracle") for source in ("upstream", "tsm")
             for variant in ("paper", "corrected")]
    # The text-only supervised extractor, one rule for each cooking lexicon it can read: upstream's (the
    # deployed one) and the rebuilt one.
    supervised_text = [System(f"supervised-text{suffix}", TUPLES, OURS, "supervised_tuples_text",
                              seeds="supervised.tuples.seed", lexicon=lexicon)
                       for lexicon, suffix in (("upstream", ""), ("rebuilt", "-rebuiltlex"))]
    return [
        System("upstream-neural", KEYCLIPS, UPSTREAM, "import_upstream_neural"),
        *(System("upstream-srl-heur", kind, UPSTREAM, "import_upstream_srl") for kind in KINDS),
        *srl,
        *(System(name, kind, OURS, "kiddon_segment", deterministic=True)
          for name, kind in (("kiddon", KEYCLIPS), ("kiddon", TUPLES), ("kiddon-first-frame", TUPLES))),
        *neural,
        System("tfidf-lr", KEYCLIPS, OURS, "keyclips_tfidf", deterministic=True,
               threshold="keyclips.neural.threshold_metric"),
        System("supervised", KEYCLIPS, OURS, "supervised_keyclips", seeds="supervised.keyclips.encoder.seed",
               threshold="supervised.keyclips.threshold_metric", selection_info="results/supervised/keyclips.json"),
        System("supervised", TUPLES, OURS, "supervised_tuples", seeds="supervised.tuples.seed"),
        *supervised_text,
        *video,
    ]


#: Every system of a fixed name, by kind and name.
REGISTRY: dict[tuple[str, str], System] = {}
for _entry in _entries():
    if (_entry.kind, _entry.name) in REGISTRY:
        raise ValueError(f"two registry entries for the {_entry.kind} system {_entry.name!r}")
    REGISTRY[_entry.kind, _entry.name] = _entry
#: The user systems' entries: any name after USER_PREFIX (the import checks the name).
USER_SYSTEMS = {kind: System(f"{USER_PREFIX}{{name}}", kind, USER, f"import_user_{kind}") for kind in KINDS}


def entries(kind: str, name: str) -> list[System]:
    """Every entry a system name matches: the registry's own, and a user system's (tests check each
    configured name matches exactly one)."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {KINDS}")
    found = [REGISTRY[kind, name]] if (kind, name) in REGISTRY else []
    if name.startswith(USER_PREFIX) and len(name) > len(USER_PREFIX):
        found.append(USER_SYSTEMS[kind])
    return found


def lookup(kind: str, name: str) -> System:
    """The entry of the ``kind`` system ``name`` (a user system's entry carries its own name)."""
    found = entries(kind, name)
    if len(found) != 1:
        known = ", ".join(sorted(n for k, n in REGISTRY if k == kind))
        raise UnknownSystem(
            f"the {kind} system {name!r} has {len(found) or 'no'} entries in the system registry "
            f"(cookproc/core/registry.py), one expected; known {kind} systems: {known}, and "
            f"{USER_PREFIX}<name> for a file of the user-systems folder")
    entry = found[0]
    return System(name, **{k: v for k, v in vars(entry).items() if k != "name"}) if entry.origin == USER else entry


def made_by(rule: str) -> list[System]:
    """The systems a rule writes, in the registry's order."""
    return [entry for entry in REGISTRY.values() if entry.rule == rule]


def configured(names: Mapping[str, Iterable[str]]) -> dict[str, dict[str, System]]:
    """{kind: {name: entry}} of the configured systems (``names``: the names of each kind, in the
    tables' order); an unknown name raises :class:`UnknownSystem`."""
    return {kind: {name: lookup(kind, name) for name in names.get(kind, ())} for kind in KINDS}
