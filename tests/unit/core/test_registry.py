"""The system registry (cookproc.core.registry): every configured system has exactly one entry, and
the facts the rules and tables read from it are the configured ones. That the rule each entry names
wrote the system's file is checked on the fixture run (tests/workflow/test_results_unchanged.py)."""
import pytest
import yaml

from cookproc.core import registry
from cookproc.core.config_schema import validate_config
from cookproc.evaluation.tables import NO_SEED, seeds_of
from fixtures import REPO, deep_merge, fixture_overrides

CONFIGS = ["config.yaml", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "presets").glob("*.yaml"))]


def configured(name, tmp_path):
    """A config as a run with it validates it: config.yaml, then the preset, or the fixture's overrides."""
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    if name == "fixture":
        config = deep_merge(config, fixture_overrides("upstream", tmp_path))
    elif name != "config.yaml":
        config = deep_merge(config, yaml.safe_load((REPO / name).read_text(encoding="utf-8")) or {})
    return validate_config(config)


@pytest.mark.parametrize("name", [*CONFIGS, "fixture"])
def test_every_configured_system_has_exactly_one_entry(name, tmp_path):
    config = configured(name, tmp_path)
    tables, significance = config["tables"], config["tables"]["significance"]
    named = {"keyclips": [*tables["keyclip_systems"], *tables["predicted_keyclips"], *significance["keyclip_systems"]],
             "tuples": [*tables["tuple_systems"], *significance["tuple_systems"], config["video"]["utterance_system"]]}
    for kind, names in named.items():
        for system in names:
            assert len(registry.entries(kind, system)) == 1, (name, kind, system)
    # The paper's systems and the declared pairs name systems of either kind.
    for system in [*significance["paper_systems"], *(s for pair in significance["pairs"] for s in pair)]:
        assert any(len(registry.entries(kind, system)) == 1 for kind in registry.KINDS), (name, system)


def test_the_config_keys_an_entry_names_are_in_the_validated_config():
    config = validate_config({})
    for entry in registry.REGISTRY.values():
        for key in (entry.seeds, entry.threshold):
            if key is not None:
                registry.setting(config, key)  # a KeyError names a key the config does not have
        assert entry.lexicon in (None, *registry.LEXICONS)
        assert bool(entry.seed_runs) == bool(entry.seed_run_rule), entry.name
        assert entry.origin in (registry.UPSTREAM, registry.OURS), entry.name
        assert entry.path == f"results/{entry.kind}/{entry.name}.parquet"


def test_seed_runs_threshold_rules_and_selection_records():
    config = validate_config({"keyclips": {"neural": {"seeds": [4, 5]}}})
    text = registry.lookup("keyclips", "neural-text")
    assert text.seed_run_files(config) == ["results/keyclips/seeds/neural-text.seed4.parquet",
                                           "results/keyclips/seeds/neural-text.seed5.parquet"]
    assert text.selection_infos(config) == ["results/keyclips/seeds/neural-text.seed4.json",
                                            "results/keyclips/seeds/neural-text.seed5.json"]
    assert registry.setting(config, text.threshold) == config["keyclips"]["neural"]["threshold_metric"]
    supervised = registry.lookup("keyclips", "supervised")
    assert supervised.selection_infos(config) == ["results/supervised/keyclips.json"] and not supervised.seed_runs
    assert registry.setting(config, supervised.threshold) == config["supervised"]["keyclips"]["threshold_metric"]
    assert registry.lookup("keyclips", "upstream-neural").threshold is None  # decisions only
    # The tuple extractor and the key-clip classifier of one name are two entries.
    assert registry.lookup("tuples", "supervised").rule == "supervised_tuples" != supervised.rule


def test_a_user_system_takes_its_name_and_an_unknown_one_is_refused_naming_the_registry():
    mine = registry.lookup("tuples", "user-mine")
    assert (mine.name, mine.origin, mine.rule) == ("user-mine", registry.USER, "import_user_tuples")
    assert registry.entries("keyclips", "user-") == []
    with pytest.raises(registry.UnknownSystem, match=r"keyclips system 'neural-txt' has no entries in the system "
                                                     r"registry \(cookproc/core/registry.py\).*neural-text"):
        registry.lookup("keyclips", "neural-txt")
    assert registry.configured({"tuples": ["kiddon"]}) == {"keyclips": {},
                                                           "tuples": {"kiddon": registry.lookup("tuples", "kiddon")}}


def test_seeds_of_names_how_each_systems_rows_were_obtained():
    config = {"keyclips": {"neural": {"seeds": [0, 1, 2]}}, "srl": {"tagger": {"seed": 13}},
              "supervised": {"keyclips": {"encoder": {"seed": 5}}, "tuples": {"seed": 7}}}
    assert seeds_of("neural-text", "keyclips", config) == "mean over seeds 0, 1, 2"
    # The system's one file (Table 5's predicted key clips) is its first seed's run.
    assert seeds_of("neural-full", "keyclips", config, file=True) == "one seed (0)"
    assert seeds_of("supervised", "keyclips", config) == "one seed (5)"
    assert seeds_of("supervised", "tuples", config) == "one seed (7)"
    assert seeds_of("supervised-text", "tuples", config) == "one seed (7)"
    assert seeds_of("srl-heurlex-tagger", "tuples", config) == "one seed (13)"
    assert seeds_of("srl-heur-spacy", "keyclips", config) == NO_SEED
    assert seeds_of("kiddon-first-frame", "tuples", config) == "deterministic fit"
    assert seeds_of("tfidf-lr", "keyclips", config) == "deterministic fit"
    assert seeds_of("upstream-neural", "keyclips", config) == "upstream's predictions"
    assert seeds_of("user-mine", "tuples", config) == "user's predictions"
    assert seeds_of("visual-upstream-paper", "tuples", config) == NO_SEED
    with pytest.raises(registry.UnknownSystem):
        seeds_of("supervised-text", "keyclips", config)


def test_one_rule_writes_the_text_only_extractor_on_either_lexicon():
    made = registry.made_by("supervised_tuples_text")
    assert [(e.name, e.lexicon, e.seeds) for e in made] == [("supervised-text", "upstream", "supervised.tuples.seed"),
                                                            ("supervised-text-rebuiltlex", "rebuilt",
                                                             "supervised.tuples.seed")]
    # Both in Table 5 by default, beside each other.
    systems = validate_config({})["tables"]["tuple_systems"]
    assert systems.index("supervised-text-rebuiltlex") == systems.index("supervised-text") + 1
