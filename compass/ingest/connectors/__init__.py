"""Connectors: one per upstream format, each turning the bytes a source publishes into canonical
raw-table rows (contract and name resolution in `compass.ingest.connectors.base`)."""

from compass.ingest.connectors.aider_polyglot import AiderPolyglot
from compass.ingest.connectors.base import Connector, FormatChange, Parsed, Payload
from compass.ingest.connectors.epoch_benchmarks import EpochBenchmarks
from compass.ingest.connectors.litellm_prices import LiteLLMPrices
from compass.ingest.connectors.livebench import LiveBench
from compass.ingest.connectors.lmarena_leaderboard import LMArenaLeaderboard
from compass.ingest.connectors.models_dev import ModelsDev

CONNECTORS: dict[str, Connector] = {
    c.name: c
    for c in (LiteLLMPrices(), LMArenaLeaderboard(), LiveBench(), EpochBenchmarks(), ModelsDev(), AiderPolyglot())
}

__all__ = ["CONNECTORS", "Connector", "FormatChange", "Parsed", "Payload"]
