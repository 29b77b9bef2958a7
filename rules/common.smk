# Helpers shared by every rule file: config validation, paths, the systems to score.
import glob
import os
from pathlib import Path

from snakemake.utils import validate


validate(config, "../workflow/schemas/config.schema.yaml")

LIB = "workflow/cookproc"
SCRIPTS = "workflow/scripts"
UPSTREAM = config["upstream"]["dir"]
USER_SYSTEMS_DIR = config["tables"]["user_systems_dir"]

SYSTEM_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


wildcard_constraints:
    system=SYSTEM_NAME,
    keyclips=SYSTEM_NAME,
    user=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


def lib(*modules):
    """Library files a rule's script imports: listed as inputs so that editing them reruns the rule."""
    return [f"{LIB}/__init__.py"] + [f"{LIB}/{m}.py" for m in modules]


def upstream(path):
    """A file of the upstream benchmark (mirror or download)."""
    return os.path.join(UPSTREAM, path)


def user_systems(kind):
    """Names of user-supplied systems of one kind ('keyclips' or 'tuples') in the user folder."""
    names = set()
    for ext in ("parquet", "jsonl"):
        for path in glob.glob(os.path.join(USER_SYSTEMS_DIR, f"*.{kind}.{ext}")):
            names.add(os.path.basename(path)[: -len(f".{kind}.{ext}")])
    return sorted(names)


def user_system_file(kind, name):
    """The one file a user system of ``kind`` is read from (two formats at once is ambiguous)."""
    found = [
        os.path.join(USER_SYSTEMS_DIR, f"{name}.{kind}.{ext}")
        for ext in ("parquet", "jsonl")
        if os.path.exists(os.path.join(USER_SYSTEMS_DIR, f"{name}.{kind}.{ext}"))
    ]
    if len(found) != 1:
        raise ValueError(
            f"user system {name!r}: expected exactly one of {name}.{kind}.parquet / .jsonl "
            f"in {USER_SYSTEMS_DIR}, found {found}"
        )
    return found[0]


def keyclip_systems():
    """Key-clip systems of Table 4: configured ones, then user ones."""
    return list(config["tables"]["keyclip_systems"]) + [f"user-{n}" for n in user_systems("keyclips")]


def tuple_systems():
    """Tuple systems of Table 5: configured ones, then user ones."""
    return list(config["tables"]["tuple_systems"]) + [f"user-{n}" for n in user_systems("tuples")]


def user_keyclips_file(wildcards):
    return user_system_file("keyclips", wildcards.user)


def user_tuples_file(wildcards):
    return user_system_file("tuples", wildcards.user)
