"""The workflow's config checked against workflow/schemas/, with its defaults filled at every level.

jsonschema's default filling (snakemake.utils.validate) stops at a ``$ref``: a left-out section, or
a left-out subsection such as ``keyclips.neural.finetune``, would come back as the ``default`` next
to the ``$ref`` and nothing inside it. :func:`validate_config` also validates each referenced part
against its own file, so those get their defaults too; a default given next to a ``$ref`` (the
supervised encoder's ``finetune: {layers: 12}``) overrides the file's defaults for that use.
"""
from __future__ import annotations

import copy
from pathlib import Path

import yaml
from snakemake.utils import validate

#: The top-level config schema; the stages' sections live in schemas/config/.
CONFIG_SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "config.schema.yaml"


def validate_config(config: dict, schema: Path = CONFIG_SCHEMA) -> dict:
    """Validate ``config`` against ``schema`` (raises on an unknown key or a bad value) and fill in
    every default, including those of the parts the schema takes from other files. Returns ``config``."""
    schema = Path(schema)
    validate(config, str(schema))
    _validate_references(config, yaml.safe_load(schema.read_text(encoding="utf-8")), schema.parent)
    return config


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
