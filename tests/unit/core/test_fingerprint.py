"""Code fingerprints (cookproc.core.fingerprint): what changes a rule's ``params: code`` and what does not."""
from __future__ import annotations

import ast
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from cookproc.core.fingerprint import code_digest, code_digests, code_fingerprint, normalized_code

PY = textwrap.dedent('''\
    """Module docstring."""
    import math


    def area(r):
        """Area of a disc."""
        return math.pi * r ** 2  # the formula


    class Disc:
        """A disc."""

        def __init__(self, r):
            self.r = r
''')

C = textwrap.dedent('''\
    /* A header comment. */
    #include <Python.h>

    static int twice(int x) { return 2 * x; }  // trailing comment
    static const char *s = "not // a comment";
''')


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_python_comments_docstrings_and_layout_do_not_count(tmp_path):
    base = code_digest(write(tmp_path / "a.py", PY))
    commented = PY.replace("import math\n", "import math  # needed for pi\n# a new comment line\n")
    redocumented = PY.replace('"""Area of a disc."""', '"""The area of a disc of radius r,\n    in square units."""')
    reformatted = ast.unparse(ast.parse(PY))  # the same tree, laid out by another hand
    assert reformatted != PY
    for variant in (commented, redocumented, reformatted):
        assert code_digest(write(tmp_path / "b.py", variant)) == base


@pytest.mark.parametrize("change", [
    ("return math.pi * r ** 2", "return math.pi * r ** 3"),
    ("self.r = r", "self.radius = r"),
    ("import math", "import math as m\nmath = m"),
    ("    def __init__(self, r):", "    x = 1\n\n    def __init__(self, r):"),
], ids=["expression", "attribute", "import", "class-body"])
def test_python_code_changes_count(tmp_path, change):
    base = code_digest(write(tmp_path / "a.py", PY))
    assert PY.count(change[0]) == 1
    assert code_digest(write(tmp_path / "b.py", PY.replace(*change))) != base


def test_a_string_statement_that_is_not_a_docstring_counts(tmp_path):
    # Only the first statement of a body is a docstring; a later bare string is code (as far as
    # the parser goes) and is kept.
    base = code_digest(write(tmp_path / "a.py", "x = 1\n"))
    assert code_digest(write(tmp_path / "b.py", 'x = 1\n"later"\n')) != base


def test_c_comments_and_layout_do_not_count_but_tokens_and_strings_do(tmp_path):
    base = code_digest(write(tmp_path / "a.c", C))
    relaid = C.replace("{ return 2 * x; }", "{\n    return 2*x;\n}").replace("/* A header comment. */", "")
    assert code_digest(write(tmp_path / "b.c", relaid + "// one more comment\n")) == base
    assert code_digest(write(tmp_path / "c.c", C.replace("2 * x", "3 * x"))) != base
    # A "//" inside a string literal is part of the string, not a comment.
    assert code_digest(write(tmp_path / "d.c", C.replace("not // a comment", "not // the comment"))) != base
    assert "not // a comment" in normalized_code(tmp_path / "a.c")


def test_touching_a_file_changes_nothing(tmp_path):
    path = write(tmp_path / "a.py", PY)
    before = code_digest(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns + 10**9, st.st_mtime_ns + 10**9))
    assert code_digest(path) == before


def make_checkout(root: Path) -> tuple[Path, Path, Path]:
    """A tiny repository: a script importing one module of a library package."""
    library = root / "workflow" / "cookproc"
    write(library / "__init__.py", "")
    write(library / "geometry.py", PY)
    write(library / "unused.py", "y = 2\n")
    script = write(root / "workflow" / "scripts" / "job.py", "from cookproc.geometry import area\nprint(area(1))\n")
    return root, library, script


def test_fingerprint_covers_the_script_and_what_it_imports_keyed_by_relative_path(tmp_path):
    repo, library, script = make_checkout(tmp_path / "one")
    files = code_digests(script, library, repo)
    assert sorted(files) == ["workflow/cookproc/__init__.py", "workflow/cookproc/geometry.py",
                             "workflow/scripts/job.py"]
    base = code_fingerprint(script, library, repo)
    # A module the script cannot execute does not count.
    write(library / "unused.py", "y = 3\n")
    assert code_fingerprint(script, library, repo) == base
    # The script itself counts.
    write(script, "from cookproc.geometry import area\nprint(area(2))\n")
    assert code_fingerprint(script, library, repo) != base


def test_a_moved_checkout_keeps_its_fingerprints(tmp_path):
    repo, library, script = make_checkout(tmp_path / "one")
    moved = tmp_path / "elsewhere" / "two"
    shutil.copytree(repo, moved)
    assert code_fingerprint(moved / "workflow/scripts/job.py", moved / "workflow/cookproc", moved) == \
        code_fingerprint(script, library, repo)
    # The same content under another relative path is another fingerprint (paths are keys).
    (moved / "workflow/cookproc/geometry.py").rename(moved / "workflow/cookproc/shapes.py")
    write(moved / "workflow/scripts/job.py", "from cookproc.shapes import area\nprint(area(1))\n")
    assert code_fingerprint(moved / "workflow/scripts/job.py", moved / "workflow/cookproc", moved) != \
        code_fingerprint(script, library, repo)


def test_unknown_file_kinds_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no code normalisation"):
        normalized_code(write(tmp_path / "a.txt", "x"))


FINGERPRINT_IN_A_FRESH_PROCESS = r"""
import sys
from cookproc.core import deps, fingerprint
store, script, library, repo, parse = sys.argv[1:]
deps.STORE.use_file(store)
if parse == "forbidden":  # every syntax tree must come from the store
    def refuse(*args, **kwargs):
        raise RuntimeError("parsed a file")
    fingerprint.normalized_code = deps._library_imports = refuse
print(fingerprint.code_fingerprint(script, library, repo))
"""


def test_a_fresh_process_reuses_the_stored_syntax_work_by_content_only(tmp_path):
    """What Snakemake gets on each run: a file parsed once is not parsed again while its content
    stays; an edited file is parsed anew (never served a stale result); a damaged store is ignored."""
    import subprocess
    import sys

    repo, library, script = make_checkout(tmp_path / "one")
    store = tmp_path / ".snakemake" / "cookproc" / "code-digests.json"

    def fingerprint(parse="allowed"):
        proc = subprocess.run([sys.executable, "-c", FINGERPRINT_IN_A_FRESH_PROCESS, str(store), str(script),
                               str(library), str(repo), parse], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else proc.stderr

    expected = code_fingerprint(script, library, repo)
    assert fingerprint() == expected and store.is_file()
    assert fingerprint("forbidden") == expected
    write(library / "geometry.py", "import math\n\ndef area(r):\n    return math.pi * r * r\n")
    assert "parsed a file" in fingerprint("forbidden")
    edited = fingerprint()
    assert edited == code_fingerprint(script, library, repo) != expected
    store.write_text("{not json")
    assert fingerprint() == edited
