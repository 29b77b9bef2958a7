"""TF-IDF + neighbouring-sentences logistic regression: the plain supervised baseline (system tfidf-lr).

Features of clip i: TF-IDF of sentence i, of sentence i-1 and of sentence i+1 (separate blocks, so
the model can weigh context differently; zero beyond the video's ends). The vectoriser is fitted on
the training clips of each fold only.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from cookproc.learn.keyclip_crossval import FitPredict
from cookproc.learn.inputs import shift_rows


def tfidf_fit_predict(clips: pd.DataFrame, *, window: int = 1, ngram_max: int = 2, min_df: int = 2,
                      C: float = 1.0, max_iter: int = 2000) -> FitPredict:
    """A FitPredict for :func:`cookproc.learn.keyclip_crossval.cross_validate`."""
    sentences = clips["sentence"].astype(str).tolist()
    video = clips["video_id"].to_numpy()
    labels = clips["is_key"].to_numpy().astype(int)

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        vec = TfidfVectorizer(ngram_range=(1, ngram_max), min_df=min_df, sublinear_tf=True, lowercase=True)
        vec.fit([sentences[i] for i in train])
        base = vec.transform(sentences).tocsr()
        blocks = [base] + [shift_rows(base, video, o) for o in range(-window, window + 1) if o != 0]
        features = sp.hstack(blocks).tocsr()
        model = LogisticRegression(C=C, max_iter=max_iter, solver="liblinear")
        model.fit(features[train], labels[train])
        proba = model.predict_proba(features)[:, 1]
        return proba[val], proba[test], {"vocabulary": len(vec.vocabulary_)}

    return fit
