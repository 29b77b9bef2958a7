"""Config files read with their lines: a file's content, or an error naming the file and the line
(broken YAML, a key given twice in one section, which YAML resolves silently); the line a key is
written on; where a bad key was set (a file and line, or ``--config``). Every config file a run is
given goes through :func:`load_config_file` (``rules/config_file.smk``, ``cookproc extract
--config``); :mod:`cookproc.core.config_schema` checks what they hold.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import yaml

from cookproc.core.errors import ConfigError

#: How much of an offending value a message shows.
SHOWN_CHARS = 120


def cut(text: str) -> str:
    """``text`` on one line, at most :data:`SHOWN_CHARS` characters of it."""
    text = " ".join(str(text).split())
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text)} characters)"


def load_config_file(path: str | os.PathLike) -> dict:
    """A config file's content (YAML or JSON), or a ConfigError naming the file, and the line of a
    syntax error: a missing file, broken YAML, a key given twice in one section (YAML would keep the
    last silently), an empty file or one that is not a mapping of sections."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found" if not path.exists() else f"{path}: not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        what = "; ".join(cut(part) for part in (exc.context, exc.problem) if part)
        raise ConfigError(f"{where}: not valid YAML: {what}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {cut(exc)}") from None
    twice = _key_given_twice(text)
    if twice is not None:
        keys, line, first = twice
        raise ConfigError(f"{path}, line {line}: config key {'.'.join(keys)} is given twice (first on line {first}), "
                          "and YAML keeps only the last: give it once", keys)
    if data is None:
        raise ConfigError(f"{path}: the file is empty; expected config sections (such as `procedures:`) at the top level")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected config sections (such as `procedures:`) at the top level, "
                          f"got a {'list' if isinstance(data, list) else type(data).__name__}")
    return data


def _key_given_twice(text: str) -> tuple[list[str], int, int] | None:
    """The first key written twice in one mapping of a YAML text: (its key path, the line of the
    second, the line of the first), or None. YAML loaders keep the last silently."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    todo = [([], root)]
    while todo:
        keys, node = todo.pop(0)
        if isinstance(node, yaml.SequenceNode):
            todo += [(keys, item) for item in node.value]
        if not isinstance(node, yaml.MappingNode):
            continue
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            line = key_node.start_mark.line + 1
            if key_node.value in seen:
                return [*keys, key_node.value], line, seen[key_node.value]
            seen[key_node.value] = line
            todo.append(([*keys, key_node.value], value_node))
    return None


def key_line(path: str | os.PathLike, keys: Sequence[str]) -> int | None:
    """The line of ``path`` (1-based) where the nested key ``keys`` is written, or None."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    line = None
    for key in keys:
        if isinstance(node, yaml.SequenceNode) and str(key).isdigit() and int(key) < len(node.value):
            node = node.value[int(key)]  # an item of a list (keyclips.neural.seeds.0)
            line = node.start_mark.line + 1
            continue
        if not isinstance(node, yaml.MappingNode):
            return line
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(key):
                line, node = key_node.start_mark.line + 1, value_node
                break
        else:
            return line
    return line


def holds(config, keys: Sequence[str]) -> bool:
    for key in keys:
        if isinstance(config, list) and str(key).isdigit() and int(key) < len(config):
            config = config[int(key)]  # an item of a list
            continue
        if not isinstance(config, dict) or key not in config:
            return False
        config = config[key]
    return True


def error_source(error: ConfigError, files: Sequence[str | os.PathLike], command_line: dict | None) -> str:
    """Where the offending key of ``error`` was set: "--config" when the command line sets it, else
    "<file>, line N" of the last config file (in ``files``, lowest precedence first) that sets it;
    "" when none does (a default, or the key is not known)."""
    keys = list(error.keys)
    if not keys:
        return ""
    if command_line and holds(command_line, keys):
        return "--config"
    for path in reversed([Path(f) for f in files]):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if holds(data, keys):
            line = key_line(path, keys)
            return f"{path}, line {line}" if line else str(path)
    return ""
