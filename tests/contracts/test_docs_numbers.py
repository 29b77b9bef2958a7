"""The docs' result blocks (README.md, docs/*.md) are well formed and say which run their numbers
come from (cookproc.evaluation.render's lint); `numbers check` compares them with a run's numbers."""
import pytest

from cookproc.evaluation import render
from fixtures import REPO


@pytest.mark.parametrize("doc", ["README.md", "docs/results.md", "docs/methods.md", "docs/benchmarks.md"])
def test_the_docs_blocks_are_well_formed_and_say_which_run_they_come_from(doc):
    text = (REPO / doc).read_text(encoding="utf-8")
    assert render.lint_text(text, doc) == []
    if doc in ("README.md", "docs/results.md", "docs/benchmarks.md"):
        assert render.blocks(text), f"{doc} states result numbers: they belong in numbers blocks"
    # Not rendered from a numbers file yet (no full run in this change): each block says so.
    for match in render.blocks(text):
        first = match["body"].splitlines()[0]
        assert first.startswith("*Numbers from run ") or "to be regenerated" in first, first


def test_the_readme_reads_in_five_minutes():
    """Issue 47: at most 100 lines, and at most one rendered table (the full tables live in docs/results.md)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 100
    assert len(render.blocks(text)) <= 1
