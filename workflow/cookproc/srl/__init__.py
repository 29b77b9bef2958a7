"""Our own semantic role labelling (the paper's AllenNLP BERT SRL cannot be installed here).

Modules: ``training_data`` (PropBank EWT -> span-SRL training data), ``bio`` (BIO <-> spans, constrained
decoding), ``viterbi`` (the same decoding, batched, as tensor operations on the device), ``syntax`` (spaCy: tokenising transcripts, predicates, dependency features),
``word_encoder`` (frozen Hugging Face encoder -> word features), ``tagger`` (the BIO tagger),
``training`` (training and span P/R/F1), ``predict`` (labelling sentences), ``spacy_backend``
(dependency-rule SRL), ``allennlp`` (importer of AllenNLP predictor JSON), ``parses`` (the parse
table shared by every backend) and ``baselines`` (upstream's heuristics -> the SRL baselines' key
clips and tuples).

Torch: viterbi, word_encoder, tagger, training, predict; every other module is torch-free.
"""
