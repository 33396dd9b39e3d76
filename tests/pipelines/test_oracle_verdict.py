"""`compass oracle` opens with a verdict in words (issue 48 item 5): what routing each query to its best model would
buy over the best single model, and what a flag means, computed from the oracle.summary row."""

from types import SimpleNamespace

from pipelines.cli import oracle_verdict

ROW = dict(model_set="all", n_prompts=300, n_models=9, sota_model="gpt-4o", sota_quality=0.8, oracle_quality=0.9,
           error_rate_reduction=0.5, cost_saving_at_sota_quality=0.4, headline_flag="", headline_lo=0.8,
           headline_hi=0.95, error_rate_reduction_hi=0.75)


def test_an_identified_oracle_says_the_gain_in_errors_and_dollars():
    text = oracle_verdict(SimpleNamespace(**ROW))
    assert "would score 90.0 %, against 80.0 % for the best single model (gpt-4o): 50 % fewer errors" in text
    assert "for 40 % less" in text and "[" not in text


def test_a_range_says_what_the_data_bound_and_what_the_flag_means():
    text = oracle_verdict(SimpleNamespace(**{**ROW, "headline_flag": "range", "oracle_quality": float("nan")}))
    assert "between 80.0 % and 95.0 %" in text and "at most 75 % fewer errors" in text
    assert "[range: not identified" in text


def test_a_clipped_estimate_without_a_cost_saving_says_neither_dash_nor_nan():
    text = oracle_verdict(SimpleNamespace(**{**ROW, "headline_flag": "below_split_sample",
                                             "cost_saving_at_sota_quality": float("nan")}))
    assert "less" not in text and "nan" not in text and "–" not in text and "split-sample oracle" in text
