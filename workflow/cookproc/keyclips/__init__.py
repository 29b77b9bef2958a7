"""The key-clip stage (rules/keyclips.smk): learned key-clip selectors under leave-recipes-out folds.

Torch-free (what the CPU systems import): folds, crossval, thresholds, inputs, lexical, tfidf,
summary, sentence_vectors, tuned_vectors. Torch: net, train, neural, finetune, sentence_encoder.
"""
