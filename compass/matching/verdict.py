"""When does a matcher's advantage count? (developers' guide: "a method's advantage counts only beyond the
reference rows that do not learn and beyond its standard error").

For one user and one metric (best-model-found rate, convergence rate), a method's advantage over a row is the
difference of their means; it counts when it exceeds the standard error of that difference,
√(SE_a² + SE_b²) (as for independent runs; the study runs every method on the same seeds, and ignoring that
pairing is conservative when outcomes correlate positively). A claim needs it against every reference a person
could run (compass.matching.study.PERSON_REFERENCES); the oracle lookup is a ceiling, not a bar.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.matching.study import PERSON_REFERENCES, REFERENCES

METRICS = {"best_found_pct": "best_found_se", "converged_pct": "converged_se"}


def advantages(summary: pd.DataFrame, method: str = "cupid", metric: str = "best_found_pct") -> pd.DataFrame:
    """Per user and every other method: method's metric minus the other's, the SE of the difference and whether it
    counts (difference > its SE). Columns: user, versus, difference, se, counts."""
    se = METRICS[metric]
    rows = []
    for user, group in summary.groupby("user", sort=False):
        by = group.set_index("method")
        if method not in by.index:
            continue
        for other in by.index.drop(method):
            diff = by.loc[method, metric] - by.loc[other, metric]
            err = float(np.hypot(np.nan_to_num(by.loc[method, se]), np.nan_to_num(by.loc[other, se])))
            rows.append((user, other, float(diff), err, bool(diff > err)))
    return pd.DataFrame(rows, columns=["user", "versus", "difference", "se", "counts"])


def claimed_users(summary: pd.DataFrame, method: str = "cupid", metric: str = "best_found_pct") -> list[str]:
    """Users on which `method` beats every reference a person could run (PERSON_REFERENCES) beyond the SE."""
    table = advantages(summary, method, metric)
    refs = table[table["versus"].isin(PERSON_REFERENCES)]
    counted = refs.groupby("user", sort=False)["counts"].agg(lambda c: bool(c.all()) and len(c) == len(PERSON_REFERENCES))
    return [u for u, ok in counted.items() if ok]


def beaten_baselines(summary: pd.DataFrame, user: str, method: str = "cupid", metric: str = "best_found_pct") -> list[str]:
    """The learning methods `method` beats beyond the SE on `user`."""
    table = advantages(summary, method, metric)
    rows = table[(table["user"] == user) & ~table["versus"].isin(REFERENCES) & table["counts"]]
    return list(rows["versus"])
