"""The upstream benchmark files: pinned checksums, verification, and download of the pinned commit.

The checksum table (``workflow/schemas/upstream-checksums.tsv``) holds one SHA-256 per file the
workflow reads, and one digest per folder of many files (transcripts, captions): the SHA-256 of the
sorted ``name<TAB>sha256`` lines of its files. A mirror or a download is accepted only when every
digest matches.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from cookproc.core.errors import InputError

log = logging.getLogger(__name__)

#: Files and folders of the upstream repository the workflow reads (relative to its root).
FILES = (
    "youcook2/reviewed_0812.csv",
    "youcook2/reviewed_0812.attach_key_sent_selection.tsv",
    "youcook2/srl_pred.json",
    "youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst",
    "youcook2/EPIC_verb_classes.csv",
    "youcook2/EPIC_noun_classes.csv",
    "youcook2/clip_manifest_10s.txt",
    "youcook2/clip_prediction_5s.txt",
    "youcook2/urlsegmentcaption.txt",
)
FOLDERS = ("youcook2/transcript", "youcook2/split")


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def folder_digest(path: str | os.PathLike) -> tuple[str, int]:
    """Digest of a folder's files (names and contents, sorted by name) and their number."""
    files = sorted(p for p in Path(path).iterdir() if p.is_file())
    lines = "".join(f"{p.name}\t{file_sha256(p)}\n" for p in files)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest(), len(files)


def compute_checksums(root: str | os.PathLike) -> list[tuple[str, str, int]]:
    """(relative path, digest, number of files) of everything the workflow reads under ``root``."""
    root = Path(root)
    rows = [(rel, file_sha256(root / rel), 1) for rel in FILES]
    rows += [(rel + "/", *folder_digest(root / rel)) for rel in FOLDERS]
    return rows


def read_checksums(path: str | os.PathLike) -> dict[str, tuple[str, int]]:
    table = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            rel, digest, count = line.rstrip("\n").split("\t")
            if rel == "path":
                continue
            table[rel] = (digest, int(count))
    return table


def format_checksums(rows: list[tuple[str, str, int]]) -> str:
    return "path\tsha256\tfiles\n" + "".join(f"{rel}\t{digest}\t{count}\n" for rel, digest, count in rows)


def verify(root: str | os.PathLike, checksums_path: str | os.PathLike) -> list[tuple[str, str, int]]:
    """Check ``root`` against the pinned checksums; an error lists every file that differs."""
    root = Path(root)
    expected = read_checksums(checksums_path)
    problems = []
    missing = [rel for rel in expected if not (root / rel.rstrip("/")).exists()]
    if missing:
        raise InputError(root, f"upstream files missing: {missing}")
    rows = compute_checksums(root)
    for rel, digest, count in rows:
        want = expected.get(rel)
        if want is None:
            problems.append(f"{rel}: no pinned checksum")
        elif (digest, count) != want:
            problems.append(f"{rel}: sha256 {digest[:12]}… ({count} files), pinned {want[0][:12]}… ({want[1]} files)")
    if problems:
        raise InputError(root, "upstream data differs from the pinned commit: " + "; ".join(problems))
    return rows


def download(url: str, dest: str | os.PathLike, checksums_path: str | os.PathLike) -> None:
    """Download the pinned commit's archive, extract what the workflow reads, verify it, then move
    it into ``dest`` (nothing is left at ``dest`` when any step fails)."""
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest} exists; refusing to overwrite it with a download")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{dest.name}.") as tmp:
        archive = Path(tmp) / "upstream.tar.gz"
        log.info("downloading %s", url)
        with urllib.request.urlopen(url, timeout=120) as response, open(archive, "wb") as out:
            shutil.copyfileobj(response, out)
        staging = Path(tmp) / "tree"
        wanted = set(FILES)
        with tarfile.open(archive, "r:*") as tar:
            for member in tar.getmembers():
                # Archives put everything under one top folder "<repo>-<commit>/".
                rel = member.name.split("/", 1)[1] if "/" in member.name else ""
                if not member.isfile() or not (rel in wanted or any(rel.startswith(f + "/") and rel.count("/") == f.count("/") + 1 for f in FOLDERS)):
                    continue
                target = staging / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
        verify(staging, checksums_path)
        os.replace(staging, dest)
    log.info("upstream files verified and placed in %s", dest)
