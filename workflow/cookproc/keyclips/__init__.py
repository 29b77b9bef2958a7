"""The key-clip stage (rules/keyclips.smk): learned key-clip selectors under leave-recipes-out folds.

Torch-free (what the CPU systems import): lexical, tfidf, summary, and the shared learning code in
cookproc.learn (folds, cross-validation, selection, thresholds, inputs, vectors). Torch: net, train, neural, finetune, sentence_encoder.
"""
