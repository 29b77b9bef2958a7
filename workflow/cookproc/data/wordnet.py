"""WordNet 3.0 for NLTK, offline, from Debian's ``wordnet-base`` and ``wordnet-sense-index``.

NLTK refuses to read corpora outside an ``nltk_data`` folder, and Debian's files lack ``lexnames``.
:func:`install` lays them out as ``<nltk_data>/corpora/wordnet``. The workflow does this itself
(rule ``wordnet``, rules/resources.smk) into a folder of its working directory
(``resources.nltk_data`` in config.yaml), which every rule whose script can reach this module takes
as its ``wordnet`` input; :func:`cookproc.core.logs.script_logging` hands that input to this module
through ``$COOKPROC_NLTK_DATA``. WordNet is read from that one folder only, never from NLTK's
search path (which includes the .venv's ``nltk_data``), so a job reads the same files in the
.venv and in a conda env. Outside a job (tests, benchmarks, a shell) the folder is the
repository's ``resources/nltk_data``, which setup.sh builds (``python -m cookproc.data.wordnet install``).
Everything else in the library asks for WordNet through :func:`wordnet`, so a missing folder fails
with one clear message.
"""
from __future__ import annotations

import argparse
import functools
import os
import warnings
from pathlib import Path

from cookproc.core.logs import NLTK_DATA_ENV

DEBIAN_WORDNET = Path("/usr/share/wordnet")
WORDNET_FILES = (
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev",
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb", "index.sense",
)
# The lexicographer file names of WordNet 3.0 (wndb(5WN)); Debian does not ship this small file.
LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
]
_POS_NUMBER = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
# Outside a workflow job: the folder setup.sh builds in this repository.
REPOSITORY_NLTK_DATA = Path(__file__).resolve().parents[3] / "resources" / "nltk_data"


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES))


def nltk_data_dir() -> str:
    """The ``nltk_data`` folder WordNet is read from: ``$COOKPROC_NLTK_DATA`` (in a job, its rule's
    ``wordnet`` input), else the repository's ``resources/nltk_data``. Raises in a job whose rule
    declares no ``wordnet`` input (the variable is set, empty), rather than read WordNet from
    wherever an environment happens to have it."""
    folder = os.environ.get(NLTK_DATA_ENV)
    if folder is None:
        return str(REPOSITORY_NLTK_DATA)
    if not folder:
        raise RuntimeError(
            "this job's rule has no `wordnet` input, but its script reads WordNet: add "
            "`wordnet=config[\"resources\"][\"nltk_data\"]` to the rule's input (the folder rule "
            "`wordnet` of rules/resources.smk builds)")
    return folder


def install(source: Path = DEBIAN_WORDNET, nltk_data: Path | None = None) -> Path:
    """Copy Debian's WordNet into ``nltk_data/corpora/wordnet`` (default: :func:`nltk_data_dir`)."""
    target = Path(nltk_data or nltk_data_dir()) / "corpora" / "wordnet"
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"WordNet files {missing} not found in {source}: install Debian's wordnet-base and "
            "wordnet-sense-index (apt-get install wordnet-base wordnet-sense-index), or point "
            "resources.wordnet_source (config.yaml) at a WordNet 3.0 dict/ folder")
    target.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        data = (source / name).read_bytes()
        dest = target / name
        if not dest.exists() or dest.read_bytes() != data:
            dest.write_bytes(data)
    (target / "lexnames").write_text(lexnames_text(), encoding="ascii")
    return target


@functools.lru_cache(maxsize=4)
def _reader(nltk_data: str):
    folder = Path(nltk_data).absolute() / "corpora" / "wordnet"
    missing = [name for name in (*WORDNET_FILES, "lexnames") if not (folder / name).is_file()]
    if missing:
        raise RuntimeError(
            f"WordNet for NLTK is not laid out in {folder} (missing {missing[:3]}...): in the workflow "
            "rule `wordnet` (rules/resources.smk) builds it; by hand, run `python -m cookproc.data.wordnet "
            "install` (setup.sh does) after `apt-get install wordnet-base wordnet-sense-index`")
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    # NLTK opens only files under its data path: authorise this folder. The reader is the one
    # nltk.corpus.wordnet builds, on this folder only (the rest of the search path is not
    # consulted); no Open Multilingual Wordnet, whose absence NLTK warns about.
    root = os.path.abspath(nltk_data)
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return WordNetCorpusReader(str(folder), None)


def wordnet():
    """NLTK's WordNet reader on :func:`nltk_data_dir`, or a clear error saying how to build it."""
    return _reader(nltk_data_dir())


@functools.lru_cache(maxsize=65536)
def _verb_lemma(nltk_data: str, word: str) -> str:
    # What WordNetLemmatizer().lemmatize(word, "v") does (upstream's verb lemmas), on this reader.
    lemmas = _reader(nltk_data)._morphy(word, "v")
    return min(lemmas, key=len) if lemmas else word


def verb_lemma(word: str) -> str:
    """``WordNetLemmatizer().lemmatize(word, 'v')``, cached."""
    return _verb_lemma(nltk_data_dir(), word)


@functools.lru_cache(maxsize=65536)
def _noun_lemma(nltk_data: str, word: str) -> str:
    lemmas = _reader(nltk_data)._morphy(word, "n")
    return min(lemmas, key=len) if lemmas else word


def noun_lemma(word: str) -> str:
    """WordNet's noun lemma of a word (shortest, as :func:`verb_lemma`), cached; the word itself
    when WordNet has none."""
    return _noun_lemma(nltk_data_dir(), word)


@functools.lru_cache(maxsize=65536)
def _noun_lexname(nltk_data: str, word: str) -> str:
    synsets = _reader(nltk_data).synsets(word, pos="n")
    return synsets[0].lexname() if synsets else "none"


def noun_lexname(word: str) -> str:
    """The lexicographer file of a noun's first WordNet sense ("noun.food"), or "none"."""
    return _noun_lexname(nltk_data_dir(), word)


@functools.lru_cache(maxsize=65536)
def _has_verb_synset(nltk_data: str, word: str) -> bool:
    return bool(_reader(nltk_data).synsets(word, pos="v"))


def has_verb_synset(word: str) -> bool:
    return _has_verb_synset(nltk_data_dir(), word)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="lay Debian's WordNet out for NLTK")
    inst.add_argument("--source", type=Path, default=DEBIAN_WORDNET)
    inst.add_argument("--nltk-data", type=Path, default=None,
                      help="the nltk_data folder (default: $COOKPROC_NLTK_DATA, else resources/nltk_data)")
    args = parser.parse_args(argv)
    target = install(args.source, args.nltk_data)
    print(f"WordNet installed for NLTK in {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
