"""Step texts scored as captions against people's captions, with the MS-COCO caption evaluation code
that YouCook2's captioning papers report (:data:`PACKAGE`): BLEU-4, METEOR 1.5, ROUGE-L and CIDEr-D,
on text tokenised by its PTB tokenizer (lower case, punctuation dropped).

Each metric is the package's corpus score over the items given (BLEU-4 from the pooled n-gram
counts, METEOR from the pooled matches, ROUGE-L and CIDEr-D the mean over items, CIDEr-D's document
frequencies counted on the references given), in percent as the captioning papers print them. The
tokenizer and METEOR run Java (``java`` on the PATH): a missing Java is an error naming what needs it.
"""
from __future__ import annotations

import contextlib
import io
import math
import shutil
from typing import Mapping, Sequence

from cookproc.core.errors import ExpectedError

#: The maintained implementation and its version (requirements.txt pins it).
PACKAGE = "pycocoevalcap 1.2"
METRICS = ("bleu4", "meteor", "rouge_l", "cider_d")
HEADERS = {"bleu4": "BLEU-4", "meteor": "METEOR", "rouge_l": "ROUGE-L", "cider_d": "CIDEr-D"}


def _require_java() -> None:
    if shutil.which("java") is None:
        raise ExpectedError("the captioning metrics (pycocoevalcap's PTB tokenizer and METEOR 1.5) need Java: "
                            "install a Java runtime (Debian: default-jre-headless; conda: openjdk)")


def caption_scores(hypotheses: Mapping[str, str], references: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """The metrics (:data:`METRICS`, percent) of ``hypotheses`` ({item: text}) against ``references``
    ({item: one or more texts}; the same items); NaN for each when there is no item."""
    if set(hypotheses) != set(references):
        raise ValueError(f"{len(set(hypotheses) ^ set(references))} items have a hypothesis or references, not both")
    if not hypotheses:
        return {metric: math.nan for metric in METRICS}
    if any(not refs for refs in references.values()):
        raise ValueError("an item without a reference text")
    _require_java()
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    keys = sorted(hypotheses)
    with contextlib.redirect_stdout(io.StringIO()):  # the tokenizer and BLEU print their progress
        tokenizer = PTBTokenizer()
        hyp = tokenizer.tokenize({k: [{"caption": hypotheses[k]}] for k in keys})
        ref = tokenizer.tokenize({k: [{"caption": r} for r in references[k]] for k in keys})
        bleu, _ = Bleu(4).compute_score(ref, hyp, verbose=0)
        meteor = Meteor()  # a Java process, ended when the scorer is deleted
        meteor_score, _ = meteor.compute_score(ref, hyp)
        del meteor
        rouge, _ = Rouge().compute_score(ref, hyp)
        cider, _ = Cider().compute_score(ref, hyp)
    return {"bleu4": 100 * float(bleu[3]), "meteor": 100 * float(meteor_score), "rouge_l": 100 * float(rouge),
            "cider_d": 100 * float(cider)}
