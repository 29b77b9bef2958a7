"""The workflow's config checked against workflow/schemas/, with its defaults filled at every level.

jsonschema's default filling (snakemake.utils.validate) stops at a ``$ref``: a left-out section, or
a left-out subsection such as ``keyclips.neural.finetune``, would come back as the ``default`` next
to the ``$ref`` and nothing inside it. :func:`validate_config` also validates each referenced part
against its own file, so those get their defaults too; a default given next to a ``$ref`` (the
supervised encoder's ``finetune: {layers: 12}``) overrides the file's defaults for that use.
"""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import yaml
from snakemake.utils import validate

#: The top-level config schema; the stages' sections live in schemas/config/.
CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


def validate_config(config: dict, schema: Path = CONFIG_SCHEMA, *, store=None) -> dict:
    """Validate ``config`` against ``schema`` (raises on an unknown key or a bad value) and fill in
    every default, including those of the parts the schema takes from other files. Returns ``config``.

    ``store`` (a cookproc.core.deps.ContentStore): a config validated before against the same
    schema files is filled from it without validating again (only configs that passed are kept)."""
    schema = Path(schema)
    key = _store_key(config, schema) if store is not None else None
    filled = store.get(key) if key is not None else None
    if filled is not None:
        config.clear()
        config.update(copy.deepcopy(filled))
        return config
    coerce_command_line_values(config, schema)
    validate(config, str(schema))
    _validate_references(config, yaml.safe_load(schema.read_text(encoding="utf-8")), schema.parent)
    stored = json.loads(json.dumps(config)) if key is not None else None
    if stored is not None and json.dumps(stored) == json.dumps(config) and stored == config:
        # Kept only when JSON gives it back as it is, key order included (no tuples, no number keys).
        store.put(key, stored)
        store.save()
    return config


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

    ``snakemake --config 'user={max_clip_s: 5}'`` hands the workflow the string '5'; a string that
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
            raise ValueError(f"config key {key}: expected {' or '.join(wanted)}, got the string {value!r}; "
                             "values given with --config on the command line arrive as strings, so write "
                             "them in a YAML file passed with --configfile instead")


def _validate_references(instance: dict, schema: dict, base: Path) -> None:
    for name, part in schema.get("properties", {}).items():
        if not isinstance(instance.get(name), dict):
            continue
        if "$ref" in part:
            # The default next to the $ref tunes the shared file's defaults for this use: a section
            # that leaves a key out gets the value given there, then the file's own default.
            for key, value in (part.get("default") or {}).items():
                instance[name].setdefault(key, copy.deepcopy(value))
            validate_config(instance[name], base / part["$ref"])
        elif part.get("type") == "object":
            _validate_references(instance[name], part, base)
