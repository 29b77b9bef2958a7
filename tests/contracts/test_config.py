"""The config schema: defaults filled, every key of config.yaml described, unknown keys refused."""
import copy
import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from cookproc.core.config_schema import CONFIG_SCHEMA, ConfigError, optional_path, validate_config
from fixtures import REPO

SCHEMA = str(CONFIG_SCHEMA)


def load_config():
    return yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))


def test_shipped_config_is_valid_and_defaults_fill_in():
    config = load_config()
    validate_config(config)
    empty = validate_config({})
    assert empty["upstream"]["dir"] == config["upstream"]["dir"]
    assert "srl-heur-tagger" in empty["tables"]["tuple_systems"]


def paths_and_values(node, prefix=""):
    if isinstance(node, dict):
        return {k: v for key, child in node.items() for k, v in paths_and_values(child, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): node}


def test_config_yaml_states_every_key_with_the_schemas_default():
    """Defaults live in the schema; config.yaml restates each key (with its comment) and no other
    value, so a run without config.yaml (another working directory, `cookproc`) is the default run."""
    stated, defaults = paths_and_values(load_config()), paths_and_values(validate_config({}))
    assert sorted(set(defaults) - set(stated)) == [], "keys config.yaml does not state"
    assert {k: (stated[k], defaults[k]) for k in defaults if stated[k] != defaults[k]} == {}


def test_defaults_fill_in_behind_nested_references():
    """The fine-tuning settings come from a shared file ($ref): left out, they still get defaults,
    and each of the two users keeps its own layer count, also when only some keys are given."""
    empty = validate_config({})
    neural, supervised = empty["keyclips"]["neural"]["finetune"], empty["supervised"]["keyclips"]["encoder"]["finetune"]
    assert neural["layers"] == 6 and supervised["layers"] == 12
    assert neural["learning_rate"] == supervised["learning_rate"] == 3e-5 and supervised["epochs"] == 1
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
    """`snakemake --config 'procedures={max_clip_s: 5}'` hands over the string '5'."""
    config = validate_config({"procedures": {"max_clip_s": "5"}, "keyclips": {"neural": {"finetune": {"layers": "2"}}},
                              "tables": {"masked": "false"}})
    assert config["procedures"]["max_clip_s"] == 5 and isinstance(config["procedures"]["max_clip_s"], int)
    assert config["keyclips"]["neural"]["finetune"]["layers"] == 2  # behind a $ref, in another file
    assert config["tables"]["masked"] is False
    # A string that is no number is refused with the key and the value (and, by Snakemake, where it was set).
    with pytest.raises(ValueError, match=r"^config key procedures\.max_clip_s: expected number, got the string 'five'$"):
        validate_config({"procedures": {"max_clip_s": "five"}})
    # An integer key does not take a fraction, nor a number a boolean.
    with pytest.raises(ValueError, match=r"finetune\.layers"):
        validate_config({"keyclips": {"neural": {"finetune": {"layers": "2.5"}}}})
    with pytest.raises(ValueError, match=r"procedures\.max_clip_s"):
        validate_config({"procedures": {"max_clip_s": "true"}})


def test_none_and_null_strings_mean_no_file():
    """`--config 'procedures={tuple_model: none}'` hands over the string 'none'; a path stays a path."""
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
    monkeypatch.setattr(config_schema, "_validate", lambda *a: pytest.fail("validated again"))
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


# ----------------------------------------------------------------------------- issue 38 item 4, issue 37 item 6

def snakemake_filled(config, schema=CONFIG_SCHEMA):
    """The filling validate_config did through snakemake.utils.validate before the library stopped
    importing Snakemake: the reference the jsonschema-only code must match, key order included."""
    from cookproc.core.config_schema import coerce_command_line_values

    schema = Path(schema)
    coerce_command_line_values(config, schema)
    validate(config, str(schema))
    for name, part in yaml.safe_load(schema.read_text(encoding="utf-8")).get("properties", {}).items():
        _snakemake_references(config, name, part, schema.parent)
    return config


def _snakemake_references(instance, name, part, base):
    if not isinstance(instance.get(name), dict):
        return
    if "$ref" in part:
        for key, value in (part.get("default") or {}).items():
            instance[name].setdefault(key, copy.deepcopy(value))
        snakemake_filled(instance[name], base / part["$ref"])
    elif part.get("type") == "object":
        for sub, subpart in part.get("properties", {}).items():
            _snakemake_references(instance[name], sub, subpart, base)


def _configs():
    from fixtures import deep_merge

    yield "empty", {}
    yield "config.yaml", load_config()
    for preset in sorted((REPO / "presets").glob("*.yaml")):
        data = yaml.safe_load(preset.read_text(encoding="utf-8"))
        yield f"{preset.name} alone", data
        yield f"config.yaml + {preset.name}", deep_merge(load_config(), data)


@pytest.mark.parametrize("name, config", list(_configs()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_filled_config_is_the_one_snakemake_validate_filled(name, config):
    import json

    ours = validate_config(copy.deepcopy(config))
    reference = snakemake_filled(copy.deepcopy(config))
    assert json.dumps(ours) == json.dumps(reference), name  # values and key order


def test_the_library_never_imports_snakemake():
    import subprocess
    import sys

    code = ("import sys; import cookproc.core.config_schema as c, cookproc.app.cli; c.validate_config({}); "
            "assert not [m for m in sys.modules if m.split('.')[0] == 'snakemake'], 'snakemake imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO,
                   env={"PYTHONPATH": str(REPO / "workflow"), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("config, message", [
    ({"keyclips": {"folds": {"k": "abc"}}},
     "config key keyclips.folds.k: expected integer, got the string 'abc'"),
    ({"tables": {"tuple_sytems": []}}, "config key tables.tuple_sytems: unknown key; the known keys here are bootstrap, "
                                      "figure3_top, keyclip_systems, masked, predicted_keyclips, significance, tuple_systems, "
                                      "user_systems_dir"),
    ({"keyclips": [1]}, "config key keyclips: [1] is not of type 'object'"),
    ({"supervised": {"keyclips": {"encoder": {"finetune": {"layres": 2}}}}},
     "config key supervised.keyclips.encoder.finetune.layres: unknown key; the known keys here are batch_size, "),
])
def test_schema_errors_are_one_line_naming_the_key(config, message):
    from cookproc.core.config_schema import ConfigError

    with pytest.raises(ConfigError) as caught:
        validate_config(config)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value) and len(str(caught.value)) < 400


@pytest.mark.parametrize("text, message", [
    ("keyclips:\n  folds: [\n", r"^{path}, line 3, column 1: not valid YAML: while parsing a flow node; expected the "
                                 r"node content, but found '<stream end>'$"),
    ("procedures:\n\tdir: x\n", r"^{path}, line 2, column 1: not valid YAML: .*found character '\\t'"),
    ("", r"^{path}: the file is empty; expected config sections \(such as `procedures:`\) at the top level$"),
    ("- user\n- keyclips\n", r"^{path}: expected config sections \(such as `procedures:`\) at the top level, got a list$"),
    (None, r"^{path}: config file not found$"),
])
def test_config_files_are_read_with_the_file_and_line_named(tmp_path, text, message):
    import re

    from cookproc.core.config_files import load_config_file
    from cookproc.core.errors import ConfigError

    path = tmp_path / "my.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError, match=message.format(path=re.escape(str(path)))):
        load_config_file(path)


def test_a_keys_line_is_found_in_its_file(tmp_path):
    from cookproc.core.config_files import key_line

    path = tmp_path / "c.yaml"
    path.write_text("# comment\nkeyclips:\n  text: {}\n  folds:\n    grouping: recipe\n    k: abc\n")
    assert key_line(path, ["keyclips", "folds", "k"]) == 6
    assert key_line(path, ["keyclips", "nope"]) == 2
    assert key_line(path, ["procedures"]) is None


@pytest.fixture(scope="module")
def config_workdir(tmp_path_factory):
    from fixtures import make_workdir, write_tiny_upstream

    tmp = tmp_path_factory.mktemp("config")
    return make_workdir(tmp / "work", write_tiny_upstream(tmp / "upstream"))


def _dry_run_error(workdir, *args):
    from fixtures import run_snakemake

    proc = run_snakemake(workdir, "--dry-run", *args, check=False)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines()
             if line.strip() and not line.startswith(("Using workflow specific profile", "Config file config.yaml is"))]
    assert len(lines) <= 4 and "Traceback" not in proc.stderr, lines
    # Issue 55: no frame of a rule file either (`File "rules/common.smk", line 54, in <module>`).
    assert not any(line.lstrip().startswith('File "') or "Error in file" in line for line in lines), lines
    return "\n".join(lines)


def test_snakemake_names_a_bad_command_line_value_its_key_and_where(config_workdir):
    out = _dry_run_error(config_workdir, "--config", "keyclips={folds: {k: abc}}")
    assert "--config: config key keyclips.folds.k: expected integer, got the string 'abc'" in out


def test_snakemake_names_a_bad_value_in_a_configfile_with_its_line(config_workdir):
    (config_workdir / "preset.yaml").write_text("# mine\nkeyclips:\n  folds:\n    k: abc\n")
    out = _dry_run_error(config_workdir, "--configfile", str(config_workdir / "preset.yaml"))
    assert "preset.yaml, line 4: config key keyclips.folds.k: expected integer, got the string 'abc'" in out
    (config_workdir / "preset.yaml").write_text("tables:\n  colour: 1\n")
    out = _dry_run_error(config_workdir, "--configfile", str(config_workdir / "preset.yaml"))
    assert "preset.yaml, line 2: config key tables.colour: unknown key; the known keys here are bootstrap," in out


@pytest.mark.parametrize("files, line", [
    # The overlay: a wrong-typed key.
    ({"preset.yaml": "procedures:\n  max_sentence_chars: abc\n"},
     "preset.yaml, line 2: config key procedures.max_sentence_chars: expected integer, got the string 'abc'"),
    # The second of two overlays is named, with its line.
    ({"a.yaml": "procedures:\n  strict: true\n", "b.yaml": "# b\nkeyclips:\n  neural:\n    seeds: [zero]\n"},
     "b.yaml, line 4: config key keyclips.neural.seeds.0: 'zero' is not of type 'integer'"),
    # A system no registry entry knows, and settings that contradict each other.
    ({"preset.yaml": "tables:\n  keyclip_systems: [nope]\n"}, "config.yaml, tables: "),
    ({"preset.yaml": "supervised:\n  keyclips:\n    finetuned_vectors: true\nkeyclips:\n  neural:\n    finetune:\n"
                     "      layers: 0\n"},
     "config key supervised.keyclips.finetuned_vectors needs keyclips.neural.finetune.layers >= 1"),
])
def test_a_bad_value_in_a_configfile_is_one_line_without_a_traceback(config_workdir, files, line):
    """Issue 55: a wrong-typed key in a --configfile gave the clear line, then
    `File "rules/common.smk", line 54, in <module>`."""
    args = []
    for name, text in files.items():
        (config_workdir / name).write_text(text)
        args += ["--configfile", str(config_workdir / name)]
    out = _dry_run_error(config_workdir, *args)
    assert line in out and len(out.splitlines()) == 1, out


@pytest.mark.parametrize("where", ["overlay", "config.yaml"])
def test_a_key_given_twice_in_any_config_file_is_named_with_its_lines(config_workdir, where):
    """Issue 55 (every config file the run is given is checked): YAML keeps the last of a key given
    twice, silently; config.yaml and each --configfile are read by the project's check, which
    names the file and both lines."""
    twice = "procedures:\n  max_sentence_chars: 100\n  strict: true\n  max_sentence_chars: 200\n"
    config = config_workdir / "config.yaml"
    good = config.read_text()
    try:
        if where == "overlay":
            (config_workdir / "twice.yaml").write_text(twice)
            out = _dry_run_error(config_workdir, "--configfile", str(config_workdir / "twice.yaml"))
            assert "twice.yaml, line 4: config key procedures.max_sentence_chars is given twice (first on line 2), " \
                   "and YAML keeps only the last: give it once" in out, out
        else:
            config.write_text(good + "\n" + twice)
            lines = len(good.splitlines()) + 1
            out = _dry_run_error(config_workdir)
            assert f"config.yaml, line {lines + 4}: config key procedures.max_sentence_chars is given twice (first on " \
                   f"line {lines + 2})" in out or f"config.yaml, line {lines + 1}: config key procedures is given " \
                   "twice" in out, out
    finally:
        config.write_text(good)


def test_a_configfile_snakemake_cannot_parse_stops_it_in_one_line(config_workdir):
    """Issue 55, what the workflow cannot reach: Snakemake's command line parses each --configfile
    before any workflow code runs, so YAML it cannot parse stops it with its own message (naming
    neither file nor line; no traceback). The project's check names both, before a run."""
    from cookproc.core.config_schema import main

    broken = config_workdir / "broken.yaml"
    broken.write_text("procedures:\n  max_sentence_chars: [1\n  strict: true\n")
    out = _dry_run_error(config_workdir, "--configfile", str(broken))
    assert "Config file is not valid JSON or YAML" in out
    assert main([str(broken)]) == 1


def test_snakemake_names_a_renamed_key_in_a_configfile_and_its_new_name(config_workdir):
    (config_workdir / "preset.yaml").write_text("srl:\n  device: cpu\n  epochs: 2\n")
    out = _dry_run_error(config_workdir, "--configfile", str(config_workdir / "preset.yaml"))
    assert "preset.yaml, line 3: config key srl.epochs was renamed to srl.tagger.epochs" in out


def test_snakemake_names_a_broken_config_yaml_with_its_line(config_workdir):
    config = config_workdir / "config.yaml"
    good = config.read_text()
    try:
        config.write_text(good + "procedures:\n  dir: [\n")
        out = _dry_run_error(config_workdir)
        lines = len(good.splitlines())
        assert f"config.yaml, line {lines + 3}, column 1: not valid YAML: while parsing a flow node; expected the node " \
               "content, but found '<stream end>'" in out
    finally:
        config.write_text(good)


@pytest.mark.parametrize("text, message", [
    ("procedures:\n  segmentation: bogus\n", "{path}, line 2: config key procedures.segmentation: 'bogus' is not one of "
                                      "['auto', 'sentence', 'cue']"),
    ("visual:\n  device: cpu\n", "{path}, line 1: config key visual was renamed to video"),
    ("", "{path}: the file is empty; expected config sections (such as `procedures:`) at the top level"),
    ("- user\n", "{path}: expected config sections (such as `procedures:`) at the top level, got a list"),
    ("user: [\n", "{path}, line 2, column 1: not valid YAML: while parsing a flow node"),
    (None, "{path}: config file not found"),
])
def test_cookproc_config_errors_are_one_line_naming_file_line_and_key(tmp_path, text, message):
    import subprocess
    import sys

    path = tmp_path / "cfg.yaml"
    if text is not None:
        path.write_text(text)
    (tmp_path / "talk.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nchop it.\n")
    proc = subprocess.run([str(Path(sys.executable).parent / "cookproc"), "extract", "talk.srt", "--config",
                           str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"cookproc extract: error: {message.format(path=path)}"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_config_files_can_be_checked_before_a_run(tmp_path, capsys):
    """Snakemake reads --configfile files on its command line, before any workflow code: a preset
    can be checked first (one line per file)."""
    from cookproc.core.config_schema import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("keyclips:\n  folds:\n    k: abc\n")
    assert main([str(REPO / "presets" / "paper.yaml"), str(bad), str(tmp_path / "nope.yaml")]) == 1
    out, err = capsys.readouterr()
    assert out == f"{REPO / 'presets' / 'paper.yaml'}: a valid workflow config\n"
    assert err == (f"{bad}, line 3: config key keyclips.folds.k: expected integer, got the string 'abc'\n"
                   f"{tmp_path / 'nope.yaml'}: config file not found\n")


# Stage settings dataclasses built from a config section (the rule passes the section's keys, the
# script calls Settings(**params.<name>)): a default that a field keeps for callers without a config
# must be the schema's, so that a value never depends on the route it took.
STAGE_SETTINGS = [
    ("cookproc.srl.training", "TaggerTrainConfig", ("srl", "tagger")),
    ("cookproc.keyclips.finetune", "FinetuneConfig", ("keyclips", "neural", "finetune")),
    ("cookproc.keyclips.finetune", "FinetuneConfig", ("supervised", "keyclips", "encoder", "finetune")),
]


@pytest.mark.parametrize("module, name, keys", STAGE_SETTINGS, ids=lambda v: ".".join(v) if isinstance(v, tuple) else v)
def test_stage_settings_defaults_are_the_schemas(module, name, keys):
    import dataclasses
    import importlib

    settings = getattr(importlib.import_module(module), name)
    section = validate_config({})
    for key in keys:
        section = section[key]
    shared = [field for field in dataclasses.fields(settings) if field.name in section]
    assert shared, f"{name} has no field of config section {'.'.join(keys)}"
    for field in shared:
        if field.default is dataclasses.MISSING:
            continue  # no default: the config's value always
        default = list(field.default) if isinstance(field.default, tuple) else field.default
        assert default == section[field.name], (f"{name}.{field.name} defaults to {field.default!r}, the schema "
                                                f"of {'.'.join(keys)} to {section[field.name]!r}")


def test_renamed_keys_are_refused_naming_the_new_key_which_the_schema_has():
    from cookproc.core.config_schema import RENAMED_KEYS

    defaults = validate_config({})

    def holds(keys):
        section = defaults
        for key in keys.split("."):
            if not isinstance(section, dict) or key not in section:
                return False
            section = section[key]
        return True

    for old, new in RENAMED_KEYS.items():
        assert holds(new) and not holds(old), (old, new)
        config = {}
        section = config
        *parents, last = old.split(".")
        for key in parents:
            section = section.setdefault(key, {})
        section[last] = {} if last in ("visual", "user") else 1
        with pytest.raises(ConfigError, match=rf"^config key {re.escape(old)} was renamed to {re.escape(new)}$"):
            validate_config(config)


def test_the_tagger_settings_are_section_srl_tagger_with_no_default_of_their_own():
    """Rule train_srl passes srl.tagger whole: the dataclass takes exactly its keys, and states no
    default of them (the schema's is the only one)."""
    import dataclasses

    from fixtures import tagger_settings
    from cookproc.srl.training import TaggerTrainConfig

    section = validate_config({})["srl"]["tagger"]
    fields = {field.name: field for field in dataclasses.fields(TaggerTrainConfig)}
    assert set(section) <= set(fields)
    assert all(fields[key].default is dataclasses.MISSING for key in [*section, "predicate_tags", "device"])
    assert tagger_settings().epochs == section["epochs"] == 13
