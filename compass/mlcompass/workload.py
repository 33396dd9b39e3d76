"""A team's own workload in dollars: USD per request and per month from per-provider token prices (ML Compass §4.2).

§4.2 prices a model by its expected cost per interaction, c(m) = p_tok(m) E[tokens | workload]. A scenario's
`workload` states that expectation in the team's units (tokens per request, the share of input tokens served
from the provider's prompt cache, requests per month); for every provider row of a model

    usd_per_request = (input_tokens (1 - s) p_in + input_tokens s p_cache + output_tokens p_out) / 1e6

with prices in USD per million tokens and s = `cached_input_share`. A provider without a cache-read price
(`cache_read_usd_per_mtok` absent or null) bills cached tokens at its input price p_in: no discount is assumed
that the price table does not state. A model's cost is then aggregated over its providers like the case's cost
column (`provider_aggregate`, the cheapest by default), so the provider chosen can differ with the workload;
usd_per_month = usd_per_request x requests_per_month.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

CACHE_READ = "cache_read_usd_per_mtok"


@dataclass(frozen=True)
class Workload:
    """Tokens per request, the cached share of the input tokens (in [0, 1]) and requests per month (None:
    dollars per request only)."""

    input_tokens: float
    output_tokens: float
    cached_input_share: float = 0.0
    requests_per_month: float | None = None

    def __post_init__(self) -> None:
        if min(self.input_tokens, self.output_tokens) < 0 or not 0 <= self.cached_input_share <= 1 or (
                self.requests_per_month is not None and self.requests_per_month < 0):
            raise ValueError(f"workload: tokens and requests must be >= 0 and cached_input_share in [0, 1], got {self}")

    def describe(self) -> str:
        """'800 input tokens (50 % cached) + 300 output tokens per request, 2,000,000 requests/month'."""
        volume = f", {self.requests_per_month:,.0f} requests/month" if self.requests_per_month is not None else ""
        return (f"{self.input_tokens:,.0f} input tokens ({100 * self.cached_input_share:.0f} % cached) + "
                f"{self.output_tokens:,.0f} output tokens per request{volume}")


def dollars(x: float) -> str:
    """A monthly amount for people, to the cent: 4800.5 -> '$4,800.50' (as `pipelines.formatting.usd` from $1 up)."""
    return f"${x:,.2f}"


def provider_usd_per_request(prices: pd.DataFrame, workload: Workload) -> pd.Series:
    """USD per request of each provider row of `prices` (input/output and optionally cache-read USD per million
    tokens; module docstring): a null cache-read price bills cached tokens at the input price."""
    p_in = prices["input_usd_per_mtok"].astype(float)
    p_cache = prices[CACHE_READ].astype(float).fillna(p_in) if CACHE_READ in prices else p_in
    cached = workload.input_tokens * workload.cached_input_share
    return ((workload.input_tokens - cached) * p_in + cached * p_cache
            + workload.output_tokens * prices["output_usd_per_mtok"].astype(float)) / 1e6


def workload_costs(prices: pd.DataFrame, workload: Workload, provider_aggregate: str = "min") -> pd.DataFrame:
    """Per model (index model_id) usd_per_request, aggregated over its provider rows of `prices` [model_id,
    provider, input_usd_per_mtok, output_usd_per_mtok, cache_read_usd_per_mtok?], and usd_per_month (NaN without
    `requests_per_month`). Models without a price row are absent."""
    if prices.empty:
        return pd.DataFrame(columns=["usd_per_request", "usd_per_month"], index=pd.Index([], name="model_id"))
    per_request = provider_usd_per_request(prices, workload).groupby(prices["model_id"]).agg(provider_aggregate)
    per_month = per_request * (workload.requests_per_month if workload.requests_per_month is not None else float("nan"))
    return pd.DataFrame({"usd_per_request": per_request, "usd_per_month": per_month}).rename_axis("model_id")
