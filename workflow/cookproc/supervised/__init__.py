"""Supervised models beyond the paper: a feature-rich key-clip classifier and a candidate-ranking
tuple extractor, both trained and scored under the shared leave-recipes-out folds."""
