"""Published utility weights keep their sign; the paper's PRISM linear score is a named utility form."""

import numpy as np
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.mlcompass import decisions as dec
from compass.mlcompass.case_study import BenchmarkSpec, CaseStudy, CostSpec, UtilitySpec
from compass.mlcompass.utility_models import utilities_from_rows


def _outcomes(seed=0, n_models=40, per_model=60):
    """Two contexts; in both, success rises with C1 and FALLS with C2 (known signs)."""
    rng = np.random.default_rng(seed)
    ids = [f"m{i}" for i in range(n_models)]
    measures = pd.DataFrame(rng.uniform(size=(n_models, 2)), index=ids, columns=["C1", "C2"])
    rows = []
    for g in ("math", "law"):
        for m in ids:
            p = 1 / (1 + np.exp(-(3 * measures.at[m, "C1"] - 2 * measures.at[m, "C2"])))
            rows += [{"dataset": "d", "split": "test", "query_id": f"{g}{m}{k}", "model_id": m,
                      "correct": float(rng.uniform() < p), "category": g} for k in range(per_model)]
    return measures, pd.DataFrame(rows)


def _case(**utility) -> CaseStudy:
    spec = UtilitySpec(source="query_records", datasets=("d",), context="category", label="threshold",
                       threshold=0.5, n_repeats=2, min_rows_per_group=100, **utility)
    return CaseStudy("c", "test", BenchmarkSpec(), CostSpec(), spec)


def test_weights_table_publishes_signed_coefficients_and_warns():
    measures, records = _outcomes()
    tables = dec.case_utility_tables(_case(), measures, records, pd.DataFrame())
    w = tables["compass.utility_weights"].set_index(["context_group", "factor"])
    assert (w.xs("C2", level="factor")["coefficient"] < 0).all() and (w.xs("C1", level="factor")["coefficient"] > 0).all()
    assert (w["weight"] > 0).all()  # the normalized magnitudes the paper reports
    assert dec.negative_coefficients(tables["compass.utility_weights"]).startswith(
        "negative utility coefficients: C2 in 2 of 2 contexts (law, math)")
    assert dec.negative_coefficients(tables["compass.utility_weights"].assign(coefficient=1.0)) == ""


def test_linear_score_form_is_the_papers_prism_utility():
    """form: linear_score publishes Û_g = β̂_gᵀx with β̂_g the normalized |coefficients|, summing to one."""
    measures, records = _outcomes()
    tables = dec.case_utility_tables(_case(form="linear_score"), measures, records, pd.DataFrame())
    utilities = utilities_from_rows(tables["compass.utility_models"])
    weights = tables["compass.utility_weights"].pivot(index="factor", columns="context_group", values="weight")
    for g, beta in utilities.items():
        assert isinstance(beta, pd.Series) and beta.sum() == pytest.approx(1.0)
        pd.testing.assert_series_equal(beta, weights[g].rename(None), check_names=False)
    assert set(tables["compass.utility_models"]["estimator"]) == {"linear_score"}


@pytest.mark.parametrize("utility, message", [
    ({"form": "score"}, "utility.form must be one of"),
    ({"form": "linear_score", "estimator": "lightgbm"}, "linear_score needs coefficients"),
])
def test_bad_utility_form_is_a_clear_error(utility, message):
    doc = {"case_id": "c", "utility": {"source": "query_records", "datasets": ["d"], **utility}}
    with pytest.raises(IngestError, match=message):
        CaseStudy.from_dict(doc, "cases/c.yaml")
