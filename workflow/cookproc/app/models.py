"""The trained models and the lexicon an extractor loads: a step model (cookproc.captions.deploy), a
key-clip selector (cookproc.keyclips.deploy), a tuple extractor (cookproc.supervised.deploy), the
cooking lexicon of the srl-heur extractor. A model that is not built is refused with the command that builds it."""
from __future__ import annotations

from pathlib import Path

from cookproc.app.extractors import SupervisedTuples, srl_labeller


def load_tuple_model(path: str | Path, device: str = "cpu", lowercase: bool = True) -> SupervisedTuples:
    """A trained tuple extractor's folder, loaded with the SRL backend it was trained on."""
    from cookproc.core.errors import InputError

    if not Path(path).exists():
        raise InputError(path, "no trained tuple extractor here: build it with `snakemake -c2 "
                               f"{path}` (it trains on the benchmark), or set procedures.tuple_model to null "
                               "(cookproc extract: --tuples none) for the SRL extractor")
    from cookproc.supervised.deploy import TupleExtractor

    model = TupleExtractor.load(path)
    return SupervisedTuples(model, srl_labeller(model.srl_backend, tagger_model=model.tagger_model, device=device),
                            device, lowercase)



def load_selector(path: str | Path, device: str = "cpu"):
    """A trained key-clip selector's folder, loaded (refused with the reason when it does not match)."""
    from cookproc.core.errors import InputError

    if not Path(path).exists():
        raise InputError(path, "no trained key-clip selector here: build it with `snakemake -c2 "
                               f"{path}` (it trains on the benchmark), or set procedures.keyclip_model and procedures.tuple_model to "
                               "null (cookproc extract: --keyclips none) to let the SRL extractor's rule decide")
    from cookproc.keyclips.deploy import KeyClipSelector

    return KeyClipSelector.load(path, device=device)



def load_step_model(path: str | Path):
    """A step model's folder (cookproc.captions.deploy), loaded (refused with the reason when it does not match)."""
    from cookproc.core.errors import InputError

    if not Path(path).exists():
        raise InputError(path, "no step model here: build it with `snakemake -c2 "
                               f"{path}` (it trains on YouCook2's captions), or set procedures.step_model to null "
                               "(cookproc extract: --steps none) to let a key-clip selector or the extractor's rule decide")
    from cookproc.captions.deploy import StepModelFolder

    return StepModelFolder.load(path)


def read_cooking_lexicon(path: str | Path) -> frozenset[str]:
    """The cooking lexicon of the srl-heur extractor (upstream's reading, blank lines dropped)."""
    from cookproc.core.errors import InputError
    from cookproc.srl.baselines import read_lexicon_lines

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "cooking lexicon not found (one word a line; the upstream mirror's "
                               "youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst by default)")
    return read_lexicon_lines(path) - {""}

