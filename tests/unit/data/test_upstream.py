"""Pinned checksums of the upstream files; the download of the pinned commit (from a local archive)."""
import tarfile

import pytest

from cookproc.core.errors import InputError
from cookproc.data.upstream import compute_checksums, download, format_checksums, verify
from fixtures import REPO


def pin(root, path):
    path.write_text(format_checksums(compute_checksums(root)), encoding="utf-8")
    return path


def test_verify_accepts_identical_and_names_what_differs(tiny_upstream, tmp_path):
    checksums = pin(tiny_upstream, tmp_path / "sums.tsv")
    assert len(verify(tiny_upstream, checksums)) == 11
    (tiny_upstream / "youcook2/srl_pred.json").write_text("[{}, {}]")
    (tiny_upstream / "youcook2/transcript/extra.txt").write_text("one more\n")
    with pytest.raises(InputError) as err:
        verify(tiny_upstream, checksums)
    assert "youcook2/srl_pred.json: sha256" in str(err.value)
    transcripts = len(list((tiny_upstream / "youcook2/transcript").iterdir()))
    assert "youcook2/transcript/: sha256" in str(err.value)
    assert f"({transcripts} files), pinned" in str(err.value) and f"({transcripts - 1} files)" in str(err.value)


def test_download_extracts_verifies_and_refuses_bad_archives(tiny_upstream, tmp_path):
    checksums = pin(tiny_upstream, tmp_path / "sums.tsv")
    archive = tmp_path / "repo.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tiny_upstream, arcname="cooking-procedural-extraction-abc123")
    dest = tmp_path / "downloaded"
    download(archive.as_uri(), dest, checksums)
    assert verify(dest, checksums)

    (tiny_upstream / "youcook2/reviewed_0812.csv").write_text("tampered\n")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tiny_upstream, arcname="cooking-procedural-extraction-abc123")
    dest2 = tmp_path / "downloaded2"
    with pytest.raises(InputError, match="reviewed_0812.csv"):
        download(archive.as_uri(), dest2, checksums)
    assert not dest2.exists()  # nothing half-written
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".downloaded2")] == []


def test_pinned_checksums_match_the_mirror(mirror):
    verify(mirror, REPO / "workflow/schemas/upstream-checksums.tsv")
