"""Supervised models beyond the paper: a feature-rich key-clip classifier and a candidate-ranking
tuple extractor, both trained and scored under the shared leave-recipes-out folds.

Every module here is torch-free (scikit-learn); so is all they import from cookproc.learn (no stage imports another).
"""
