"""The Markov-copula model's error out of sample (test) next to in sample (train), per dataset and k, and where
MedMCQA's over-prediction comes from (thesis seed 001, Ch. 2; issue 28 item 2).

On the embedded data/query_records.parquet, the Llama prefix cascades k = 2..5, the pipeline's code
(`compass.cascades.study.markov_error_table`: Gumbel model and Rational Tuning thresholds fitted on train).
Columns, means over the tuned thresholds, model minus the cascade run on the split (points of accuracy):
accuracy gap; calibration gap (mean calibrated confidence of the answering models minus their accuracy on the
split: what a perfect model of the confidences would still miss); confidence-model gap = the rest. Then, on test,
the confidence-model gap of a model refitted on the test confidences (same family, same thresholds): what is
left once the train-to-test shift of the confidences is removed. Results: docs/results/cascades.md.

    .venv/bin/python scripts/cascade_markov_error.py
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compass.cascades import study as cs  # noqa: E402
from compass.cascades.baselines import threshold_columns  # noqa: E402
from compass.cascades.evaluate import evaluate_thresholds  # noqa: E402
from compass.cascades.markov_model import fit_cascade_model  # noqa: E402
from compass.cascades.rational_tuning import rational_tuning  # noqa: E402

DATASETS = ("mmlu", "medmcqa", "triviaqa", "truthfulqa")


def refit_gap(cal: pd.DataFrame, chain: list[str]) -> dict[int, float]:
    """Per k, model-on-test-confidences minus the test confidence plug-in (points) at the train-tuned thresholds."""
    train_model = fit_cascade_model(cal[cal["split"] == "train"], chain, copula=cs.RT_COPULAS["rt"])
    test_model = fit_cascade_model(cal[cal["split"] == "test"].assign(split="train"), chain, copula=cs.RT_COPULAS["rt"])
    out = {}
    for k in range(2, len(chain) + 1):
        cascade = tuple(chain[:k])
        thr = rational_tuning(train_model, cascade=cascade)[threshold_columns(k)].to_numpy(float)
        data = cs.CascadeData.of(cal, cascade, "test")
        confidence = 1 - evaluate_thresholds(data.p, data.p, data.c, thr)[0]
        out[k] = float(100 * np.mean(test_model.evaluate(cascade, thr)[0] - confidence))
    return out


def main() -> None:
    records = pd.read_parquet(Path(__file__).resolve().parents[1] / "data" / "query_records.parquet")
    rows = []
    for ds in DATASETS:
        rec = cs.prepare_records(records[records["dataset"] == ds], ds)
        cal, _ = cs.calibrated_records(rec, ds)
        chain = list(cs.chains_for(rec)["llama"])
        table = cs.markov_error_table(cal, tuple(chain))
        g = table.groupby(["k", "split"])[["accuracy_gap_points", "calibration_gap_points", "cost_gap_pct"]].mean()
        refit = refit_gap(cal, chain)
        for k in range(2, len(chain) + 1):
            tr, te = g.loc[(k, "train")], g.loc[(k, "test")]
            rows.append({"dataset": ds, "k": k, "acc_gap_train": tr["accuracy_gap_points"],
                         "acc_gap_test": te["accuracy_gap_points"], "calibration_gap_test": te["calibration_gap_points"],
                         "confidence_model_gap_test": te["accuracy_gap_points"] - te["calibration_gap_points"],
                         "refit_on_test_gap": refit[k], "cost_gap_pct_train": tr["cost_gap_pct"],
                         "cost_gap_pct_test": te["cost_gap_pct"]})
    with pd.option_context("display.width", 200, "display.float_format", "{:+.2f}".format):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
