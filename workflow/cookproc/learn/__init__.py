"""Learning shared by the learned stages (keyclips, supervised): leave-recipes-out folds, cross-
validation, nested selection on inner-validation recipes, thresholds, clip inputs and sentence
vectors. Torch-free: no stage imports another stage, both import this."""
