"""The Kiddon et al. (2015) unsupervised sentence segmenter, as Xu et al. (2020) used it.

A hard-EM predicate/argument chunker (../shared/specs/kiddon-segmenter.md), trained on the YouCook2
transcripts and run on the benchmark sentences. Modules, in pipeline order:

* ``text``: tokens, the original sentence splitter, out-of-context word classes, ignore rules;
* ``search``: chunking a labelled sentence into frames, the well-formedness constraints, and the
  exhaustive enumeration of labellings;
* ``model``: parameters as counts, scores, the M-step, the JSON model file;
* ``segmenter``: the E-step (best labelling) and the training loop;
* ``roles``: DOBJ / PARG / OARG of a frame's chunks;
* ``training_text``: reading transcripts and lexicon, the per-iteration log table;
* ``outputs``: segmenting benchmark clips, frames / key-clip / tuple tables in two layouts.
"""
