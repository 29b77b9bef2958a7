"""The workflow's config checked against workflow/schemas/, with its defaults filled at every level.

Validation is jsonschema's (Draft 2020-12), with each ``properties`` default filled in as Snakemake's
``snakemake.utils.validate`` fills it (the library never imports Snakemake). That filling stops at a
``$ref``: a left-out section, or a left-out subsection such as ``keyclips.neural.finetune``, would
come back as the ``default`` next to the ``$ref`` and nothing inside it. :func:`validate_config`
also validates each referenced part against its own file, so those get their defaults too; a
default given next to a ``$ref`` (the supervised encoder's ``finetune: {layers: 12}``) overrides the
file's defaults for that use.

Every error is a :class:`ConfigError` of a line or two that names the key (and, from
:mod:`cookproc.core.config_files`, the file and the line), never a dump of the schema.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Sequence
from urllib.parse import urlparse
from urllib.request import url2pathname

import yaml

from cookproc.core.config_files import cut as _cut, error_source, holds as _holds, load_config_file
from cookproc.core.errors import ConfigError

#: The workflow's schemas, beside the package (workflow/schemas/); callers may pass another folder's.
SCHEMAS_DIR = Path(__file__).resolve().parents[2] / "schemas"
#: The top-level config schema; the stages' sections live in schemas/config/.
CONFIG_SCHEMA = SCHEMAS_DIR / "config.schema.yaml"
#: Config keys renamed by issue 38 (old dotted key -> new one): a config that still has an old key
#: is refused naming both, rather than as an unknown key.
RENAMED_KEYS = {
    "visual": "video",
    "user": "procedures",
    "keyclips.neural.lr": "keyclips.neural.learning_rate",
    "keyclips.neural.finetune.lr": "keyclips.neural.finetune.learning_rate",
    "keyclips.neural.finetune.head_lr": "keyclips.neural.finetune.head_learning_rate",
    "supervised.keyclips.tuned_vectors": "supervised.keyclips.finetuned_vectors",
    "supervised.keyclips.encoder.finetune.lr": "supervised.keyclips.encoder.finetune.learning_rate",
    "supervised.keyclips.encoder.finetune.head_lr": "supervised.keyclips.encoder.finetune.head_learning_rate",
    **{f"srl.{key}": f"srl.tagger.{key}"
       for key in ("encoder", "epochs", "ensemble", "average_checkpoints", "batch_size", "learning_rate", "hidden",
                   "projection", "dropout", "max_train_words", "seed")},
}


def _load_schema(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _validate(instance: dict, schema_path: Path, where: Sequence[str]) -> None:
    """jsonschema validation that fills ``properties`` defaults in place, as snakemake.utils.validate
    does (relative ``$ref``s resolved from the schema's own file)."""
    import jsonschema
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    schema = _load_schema(schema_path)
    schema["$id"] = schema_path.resolve().as_uri()

    def retrieve(uri: str) -> Resource:
        return Resource.from_contents(_load_schema(Path(url2pathname(urlparse(uri).path))))

    registry = Registry(retrieve=retrieve).with_resource(uri=str(schema_path),
                                                         resource=Resource.from_contents(schema))
    validate_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        for name, subschema in properties.items():
            if "default" in subschema and isinstance(instance, dict):
                instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    filling = validators.extend(Draft202012Validator, {"properties": set_defaults})
    try:
        filling(schema, registry=registry).validate(instance)
    except jsonschema.ValidationError as exc:
        raise describe_error(exc, where) from None


def describe_error(error, where: Sequence[str] = ()) -> ConfigError:
    """A one-line ConfigError for a jsonschema ValidationError: the key, what is wrong, what is expected."""
    keys = [*where, *map(str, error.absolute_path)]
    if error.validator == "additionalProperties":
        unknown = sorted(map(str, set(error.instance) - set(error.schema.get("properties", {}))))
        known = sorted(error.schema.get("properties", {}))
        keys += unknown[:1]
        return ConfigError(f"config key {'.'.join(keys) or '(top level)'}: unknown key; the known keys here are "
                           f"{_cut(', '.join(known))}", keys)
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    hint = f" ({_cut(description)})" if description and error.validator != "type" else ""
    return ConfigError(f"config key {'.'.join(keys) or '(top level)'}: {_cut(error.message)}{hint}", keys)


def validate_config(config: dict, schema: Path = CONFIG_SCHEMA, *, store=None, where: Sequence[str] = ()) -> dict:
    """Validate ``config`` against ``schema`` (a ConfigError naming the key for an unknown key or a
    bad value) and fill in every default, including those of the parts the schema takes from other
    files. Returns ``config``.

    ``store`` (a cookproc.core.deps.ContentStore): a config validated before against the same
    schema files is filled from it without validating again (only configs that passed are kept).
    ``where``: the keys above ``config`` (for the messages)."""
    schema = Path(schema)
    if not isinstance(config, dict):
        raise ConfigError(f"config key {'.'.join(where) or '(top level)'}: expected a mapping of keys, "
                          f"got {_cut(repr(config))}", where)
    if not where:
        check_renamed_keys(config)
    key = _store_key(config, schema) if store is not None else None
    filled = store.get(key) if key is not None else None
    if filled is not None:
        config.clear()
        config.update(copy.deepcopy(filled))
        return config
    coerce_command_line_values(config, schema, ".".join(where))
    _validate(config, schema, where)
    _validate_references(config, _load_schema(schema), schema.parent, where)
    stored = json.loads(json.dumps(config)) if key is not None else None
    if stored is not None and json.dumps(stored) == json.dumps(config) and stored == config:
        # Kept only when JSON gives it back as it is, key order included (no tuples, no number keys).
        store.put(key, stored)
        store.save()
    return config


def check_renamed_keys(config: dict) -> None:
    """A :class:`ConfigError` naming the first old key of :data:`RENAMED_KEYS` that ``config`` still
    has and its new name (the caller adds the file and line, as for any bad key)."""
    for old, new in RENAMED_KEYS.items():
        if _holds(config, old.split(".")):
            raise ConfigError(f"config key {old} was renamed to {new}", old.split("."))


def _store_key(config: dict, schema: Path) -> str | None:
    """The content of ``config`` and of every schema file next to ``schema`` (None: not plain JSON
    data). Key order counts: it is the order of the filled config, which rule params keep (Snakemake
    compares params as text)."""
    try:
        text = json.dumps(config, allow_nan=False)
    except (TypeError, ValueError):
        return None
    digest = hashlib.sha256(text.encode("utf-8"))
    for path in sorted(schema.parent.rglob("*.yaml")):
        digest.update(f"\n{path.relative_to(schema.parent).as_posix()} ".encode() + hashlib.sha256(path.read_bytes()).digest())
    return f"config {schema.name} {digest.hexdigest()}"


def optional_path(value):
    """``value``, or None where it says "no file": None, "none" or "null" (any case). Snakemake's
    ``--config`` and the ``cookproc`` command's options hand these words over as strings."""
    return None if value is None or str(value).strip().lower() in ("none", "null") else value


_SCALAR_TYPES = {"integer": int, "number": (int, float), "boolean": bool}


def coerce_command_line_values(config: dict, schema: Path = CONFIG_SCHEMA, where: str = "") -> None:
    """Turn strings where the schema wants a number or a boolean into that value (in place).

    ``snakemake --config 'procedures={max_clip_s: 5}'`` hands the workflow the string '5'; a string that
    reads as the wanted type is taken as it, any other is refused with the key, the value and the
    way out (a config file keeps YAML's types)."""
    schema = Path(schema)
    tree = yaml.safe_load(schema.read_text(encoding="utf-8"))
    _coerce(config, tree, schema.parent, where)


def _coerce(instance: dict, schema: dict, base: Path, where: str) -> None:
    if "$ref" in schema:  # a part kept in another file, whose own $refs are relative to it
        path = base / schema["$ref"]
        schema, base = yaml.safe_load(path.read_text(encoding="utf-8")), path.parent
    for name, part in (schema.get("properties") or {}).items():
        if name not in instance:
            continue
        key = f"{where}.{name}" if where else name
        value = instance[name]
        if "$ref" in part or part.get("type") == "object":
            if isinstance(value, dict):
                _coerce(value, part, base, key)
            continue
        wanted = part.get("type")
        wanted = [wanted] if isinstance(wanted, str) else list(wanted or [])
        scalars = [t for t in wanted if t in _SCALAR_TYPES]
        if not isinstance(value, str) or not scalars or "string" in wanted:
            continue
        parsed = yaml.safe_load(value) if value.strip() else None
        if any(isinstance(parsed, _SCALAR_TYPES[t]) and not (t != "boolean" and isinstance(parsed, bool))
               for t in scalars) or (parsed is None and "null" in wanted):
            instance[name] = parsed
        else:
            raise ConfigError(f"config key {key}: expected {' or '.join(wanted)}, got the string {_cut(repr(value))}",
                              key.split("."))


def _validate_references(instance: dict, schema: dict, base: Path, where: Sequence[str] = ()) -> None:
    for name, part in schema.get("properties", {}).items():
        if not isinstance(instance.get(name), dict):
            continue
        if "$ref" in part:
            # The default next to the $ref tunes the shared file's defaults for this use: a section
            # that leaves a key out gets the value given there, then the file's own default.
            for key, value in (part.get("default") or {}).items():
                instance[name].setdefault(key, copy.deepcopy(value))
            validate_config(instance[name], base / part["$ref"], where=[*where, name])
        elif part.get("type") == "object":
            _validate_references(instance[name], part, base, [*where, name])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cookproc.core.config_schema FILE...``: check config files (a preset, a
    --configfile) before a run, each on its own; one line per file, exit status 1 if any is bad.
    (Snakemake's command line reads --configfile files before any workflow code runs.)"""
    import sys

    files = list(sys.argv[1:] if argv is None else argv)
    bad = 0
    for path in files:
        try:
            config = load_config_file(path)
            validate_config(config)
        except ConfigError as exc:
            message = str(exc)
            if not message.startswith(str(path)):  # a value: name the file and the key's line
                message = f"{error_source(exc, [path], None) or path}: {message}"
            print(message, file=sys.stderr)
            bad += 1
        else:
            print(f"{path}: a valid workflow config")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
