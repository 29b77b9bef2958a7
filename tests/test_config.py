"""The config schema: defaults filled, every key of config.yaml described, unknown keys refused."""
import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from cookproc.core.config_schema import CONFIG_SCHEMA, optional_path, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMA = str(CONFIG_SCHEMA)


def load_config():
    return yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))


def test_shipped_config_is_valid_and_defaults_fill_in():
    config = load_config()
    validate_config(config)
    empty = validate_config({})
    assert empty["upstream"]["dir"] == config["upstream"]["dir"]
    assert empty["tables"]["tuple_systems"] == ["upstream-srl-heur"]


def test_defaults_fill_in_behind_nested_references():
    """The fine-tuning settings come from a shared file ($ref): left out, they still get defaults,
    and each of the two users keeps its own layer count, also when only some keys are given."""
    empty = validate_config({})
    neural, supervised = empty["keyclips"]["neural"]["finetune"], empty["supervised"]["keyclips"]["encoder"]["finetune"]
    assert neural["layers"] == 6 and supervised["layers"] == 12
    assert neural["lr"] == supervised["lr"] == 3e-5 and supervised["epochs"] == 1
    partial = validate_config({"supervised": {"keyclips": {"encoder": {"finetune": {"epochs": 2}}}}})
    assert partial["supervised"]["keyclips"]["encoder"]["finetune"] == {**supervised, "epochs": 2}
    with pytest.raises(Exception, match="layres"):
        validate_config({"supervised": {"keyclips": {"encoder": {"finetune": {"layres": 2}}}}})


def test_unknown_keys_are_refused_with_their_name():
    config = load_config()
    config["tables"]["tuple_sytems"] = ["typo"]
    with pytest.raises(Exception, match="tuple_sytems"):
        validate_config(config)
    with pytest.raises(Exception, match="colour"):
        validate({"colour": 1}, SCHEMA)


def test_bad_values_are_refused():
    config = load_config()
    config["upstream"]["commit"] = "main"
    with pytest.raises(Exception, match="commit|pattern"):
        validate_config(copy.deepcopy(config))


def test_every_config_key_has_a_description_and_a_default():
    def walk(schema, base, where):
        if "$ref" in schema:
            path = base / schema["$ref"]
            schema, base = yaml.safe_load(path.read_text(encoding="utf-8")), path.parent
        assert schema.get("type") != "object" or schema.get("additionalProperties") is False, where
        for name, sub in schema.get("properties", {}).items():
            resolved = sub
            if "$ref" in sub:
                resolved = yaml.safe_load((base / sub["$ref"]).read_text(encoding="utf-8"))
            if resolved.get("type") == "object" and "properties" in resolved:
                walk(sub, base, f"{where}.{name}")
            else:
                assert "description" in resolved or "description" in sub, f"{where}.{name} has no description"
                assert "default" in resolved or "default" in sub, f"{where}.{name} has no default"

    walk(yaml.safe_load(Path(SCHEMA).read_text(encoding="utf-8")), Path(SCHEMA).parent, "config")


def test_numbers_given_as_strings_on_the_command_line_are_read_as_numbers():
    """`snakemake --config 'user={max_clip_s: 5}'` hands over the string '5'."""
    config = validate_config({"user": {"max_clip_s": "5"}, "keyclips": {"neural": {"finetune": {"layers": "2"}}},
                              "tables": {"masked": "false"}})
    assert config["user"]["max_clip_s"] == 5 and isinstance(config["user"]["max_clip_s"], int)
    assert config["keyclips"]["neural"]["finetune"]["layers"] == 2  # behind a $ref, in another file
    assert config["tables"]["masked"] is False
    # A string that is no number is refused with the key, the value and the way out.
    with pytest.raises(ValueError, match=r"user\.max_clip_s.*'five'.*--configfile"):
        validate_config({"user": {"max_clip_s": "five"}})
    # An integer key does not take a fraction, nor a number a boolean.
    with pytest.raises(ValueError, match=r"finetune\.layers"):
        validate_config({"keyclips": {"neural": {"finetune": {"layers": "2.5"}}}})
    with pytest.raises(ValueError, match=r"user\.max_clip_s"):
        validate_config({"user": {"max_clip_s": "true"}})


def test_none_and_null_strings_mean_no_file():
    """`--config 'user={tuple_model: none}'` hands over the string 'none'; a path stays a path."""
    assert [optional_path(v) for v in (None, "none", "NULL", " None ")] == [None] * 4
    assert [optional_path(v) for v in ("results/models/x", "nonesuch", "")] == ["results/models/x", "nonesuch", ""]


def test_a_stored_validation_fills_the_same_config_and_never_passes_a_bad_one(tmp_path, monkeypatch):
    """What every Snakemake run and cluster job gets from .snakemake/cookproc/store.json: the
    config of a validation done before, equal to validating again; a changed config or schema is
    validated anew."""
    import shutil

    from cookproc.core import config_schema
    from cookproc.core.deps import ContentStore

    store = ContentStore()
    store.use_file(tmp_path / "store.json")
    fresh = validate_config(load_config())
    assert validate_config(load_config(), store=store) == fresh and (tmp_path / "store.json").is_file()

    again = ContentStore()  # a later process
    again.use_file(tmp_path / "store.json")
    monkeypatch.setattr(config_schema, "validate", lambda *a: pytest.fail("validated again"))
    stored = validate_config(load_config(), store=again)
    # Equal, key order included: rule params are compared as text, so another order would rerun jobs.
    assert stored == fresh and repr(stored) == repr(fresh)
    monkeypatch.undo()

    bad = load_config()
    bad["tables"]["tuple_sytems"] = ["typo"]
    with pytest.raises(Exception, match="tuple_sytems"):
        validate_config(bad, store=again)
    # The same config against an edited copy of the schemas: a new key, validated anew.
    schemas = shutil.copytree(CONFIG_SCHEMA.parent, tmp_path / "schemas")
    edited = schemas / "config" / "report.schema.yaml"
    edited.write_text(edited.read_text().replace("default: 15", "default: 16"))
    config = load_config()
    del config["report"]["top_errors"]
    assert validate_config(config, schemas / "config.schema.yaml", store=again)["report"]["top_errors"] == 16
