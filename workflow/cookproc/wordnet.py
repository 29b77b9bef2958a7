"""WordNet 3.0 for NLTK, offline, from Debian's ``wordnet-base`` and ``wordnet-sense-index``.

NLTK refuses to read corpora outside its data path, and Debian's files lack ``lexnames``. The
setup step (``python -m cookproc.wordnet install``) lays them out under ``<venv>/nltk_data``, which
NLTK searches by default, so ``nltk.corpus.wordnet`` works with no download. Everything else in
the library asks for WordNet through :func:`wordnet` so a missing install fails with one clear
message.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

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


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES))


def install(source: Path = DEBIAN_WORDNET, nltk_data: Path | None = None) -> Path:
    """Copy Debian's WordNet into ``nltk_data/corpora/wordnet`` (default: ``sys.prefix/nltk_data``)."""
    target = (nltk_data or Path(sys.prefix) / "nltk_data") / "corpora" / "wordnet"
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"WordNet files {missing} not found in {source}: install Debian's wordnet-base and "
            "wordnet-sense-index (apt-get install wordnet-base wordnet-sense-index)")
    target.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        data = (source / name).read_bytes()
        dest = target / name
        if not dest.exists() or dest.read_bytes() != data:
            dest.write_bytes(data)
    (target / "lexnames").write_text(lexnames_text(), encoding="ascii")
    return target


@functools.lru_cache(maxsize=1)
def wordnet():
    """NLTK's WordNet reader, or a clear error saying how to install it offline."""
    from nltk.corpus import wordnet as wn

    try:
        wn.ensure_loaded()
    except LookupError as exc:
        raise RuntimeError(
            "NLTK cannot find WordNet. Run the setup (`python -m cookproc.wordnet install`, done by "
            "`.ci/setup`) after `apt-get install wordnet-base wordnet-sense-index`.") from exc
    return wn


@functools.lru_cache(maxsize=1)
def lemmatizer():
    """NLTK's WordNetLemmatizer on the offline WordNet (what upstream used for verb lemmas)."""
    from nltk.stem import WordNetLemmatizer

    wordnet()
    return WordNetLemmatizer()


@functools.lru_cache(maxsize=65536)
def verb_lemma(word: str) -> str:
    """``WordNetLemmatizer().lemmatize(word, 'v')``, cached."""
    return lemmatizer().lemmatize(word, "v")


@functools.lru_cache(maxsize=65536)
def has_verb_synset(word: str) -> bool:
    return bool(wordnet().synsets(word, pos="v"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="lay Debian's WordNet out for NLTK")
    inst.add_argument("--source", type=Path, default=DEBIAN_WORDNET)
    inst.add_argument("--nltk-data", type=Path, default=None)
    args = parser.parse_args(argv)
    target = install(args.source, args.nltk_data)
    os.environ.setdefault("NLTK_DATA", str(target.parent.parent))
    print(f"WordNet installed for NLTK in {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
