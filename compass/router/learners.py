"""The one learner class H of the paper (§4: "we use the same estimator class H for all nuisance function, CATE
function and router training"): scikit-learn's random forest with R randomForest's defaults (spec §2.9: 500 trees;
regression mtry = ⌊d/3⌋ and nodesize 5; classification mtry = ⌊√d⌋ and nodesize 1) or LightGBM (in place of
XGBoost), and out-of-sample predictions of a nuisance on its own training rows (spec §5.2: in-sample forest
predictions nearly interpolate and collapse the CATE fit)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import lightgbm as lgb
import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold


@dataclass(frozen=True)
class LearnerSpec:
    kind: str = "random_forest"  # or "lightgbm"
    n_estimators: int = 500
    min_samples_leaf: int = 5
    max_features: float = 1 / 3  # regression mtry share; classification forests use ⌊√d⌋ (R's default)
    seed: int = 0
    n_jobs: int = 1  # threads per model; keep LightGBM at 1 on a shared machine (its OpenMP threads spin: 15x slower at 2)
    params: dict = field(default_factory=dict)  # extra keyword arguments of the estimator

    def regressor(self, **override):
        kw = {**self.params, **override}
        if self.kind == "random_forest":
            return RandomForestRegressor(n_estimators=self.n_estimators, min_samples_leaf=self.min_samples_leaf,
                                         max_features=self.max_features, oob_score=False, n_jobs=self.n_jobs,
                                         random_state=self.seed, **kw)
        if self.kind == "lightgbm":
            return lgb.LGBMRegressor(n_estimators=min(self.n_estimators, 300), min_child_samples=self.min_samples_leaf,
                                     colsample_bytree=self.max_features, random_state=self.seed, verbose=-1, n_jobs=self.n_jobs, **kw)
        raise ValueError(f"unknown learner {self.kind!r}; use 'random_forest' or 'lightgbm'")

    def classifier(self):
        if self.kind == "random_forest":
            # R's classification default mtry = ⌊√d⌋ (2.2x faster than ⌊d/3⌋ at d = 50 on the propensity forest)
            return RandomForestClassifier(n_estimators=self.n_estimators, min_samples_leaf=1,
                                          max_features="sqrt", n_jobs=self.n_jobs, random_state=self.seed)
        return lgb.LGBMClassifier(n_estimators=min(self.n_estimators, 300), colsample_bytree=self.max_features,
                                  random_state=self.seed, verbose=-1, n_jobs=self.n_jobs)


def out_of_sample(spec: LearnerSpec, X: np.ndarray, target: np.ndarray, classify: bool = False,
                  folds: int = 5) -> tuple[object, np.ndarray]:
    """Fit on all rows; return (model, predictions for those rows that no tree/fold trained on them saw).

    Random forests use their out-of-bag predictions (a row's trees that did not draw it); LightGBM, or a
    forest with too few trees for every row to be out of bag, uses K-fold cross-fitting.
    """
    target = np.asarray(target, dtype=float)
    model = spec.classifier() if classify else spec.regressor()
    if spec.kind == "random_forest":
        model.set_params(oob_score=True, bootstrap=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X, target.astype(int) if classify else target)
        # scikit-learn gives a row that every tree drew an out-of-bag prediction of 0 and only warns
        missing_oob = [w for w in caught if "do not have OOB" in str(w.message)]
        for w in caught:
            if w not in missing_oob:
                warnings.warn(w.message, w.category, stacklevel=2)
        if not missing_oob:
            oob = model.oob_decision_function_[:, 1] if classify else model.oob_prediction_
            return model, np.asarray(oob, dtype=float)
    else:
        model.fit(X, target.astype(int) if classify else target)
    pred = np.empty(len(target))
    for train, held in KFold(folds, shuffle=True, random_state=spec.seed).split(X):
        m = spec.classifier() if classify else spec.regressor()
        m.fit(X[train], target[train].astype(int) if classify else target[train])
        pred[held] = m.predict_proba(X[held])[:, 1] if classify else m.predict(X[held])
    return model, pred


def predict(model, X: np.ndarray, classify: bool = False) -> np.ndarray:
    return model.predict_proba(X)[:, 1] if classify else model.predict(X)
