"""Learned key-clip selectors: inputs (data), leave-recipes-out folds, the paper's neural selector
(keyclip_net, train), cross-validation (crossval), the TF-IDF baseline (tfidf) and seed summaries."""
