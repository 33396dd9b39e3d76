"""LMArena's published leaderboard (`lmarena/arena-catalog`, `data/leaderboard-text.json`).

`leaderboard-text.json` maps category -> model -> {rating, rating_q025, rating_q975, ...}: one
Bradley-Terry rating per (model, category) becomes `lmarena_<category>` (scale `elo`), with
stderr = (q975 - q025) / (2 x 1.96). The sibling `scatterplot-data.json` of the same folder, when
present, adds metadata (display name, organization, licence) and list prices (provider
`list_price`).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from compass.ingest.connectors.base import (
    COST_COLS, META_COLS, SCORE_COLS, FormatChange, Parsed, Payload,
    expect, frame, number, read_json, require, scaled, screen, slug,
)

RATING_FIELDS = ("rating", "rating_q025", "rating_q975")
SCATTER = "scatterplot-data.json"
SCATTER_FIELDS = ("model_api_name", "name", "input_token_price", "output_token_price")
Z975 = 1.959964


class LMArenaLeaderboard:
    name = "lmarena_leaderboard"
    source = "lmarena_catalog"

    def siblings(self, name: str) -> list[str]:
        return [SCATTER]

    def parse(self, payload: Payload) -> Parsed:
        board = expect(self.name, payload.name, read_json(self.name, payload.name, payload.main()), dict, "category")
        rows = []
        for category, models in sorted(board.items()):
            for model, r in sorted(expect(self.name, payload.name, models, dict, category).items()):
                require(self.name, payload.name, expect(self.name, payload.name, r, dict, model), RATING_FIELDS)
                rows.append({"raw_name": model, "benchmark": f"lmarena_{slug(category)}", "score": r["rating"],
                             "score_scale": "elo",
                             "stderr": (number(r["rating_q975"]) - number(r["rating_q025"])) / (2 * Z975)})
        if not rows:
            raise FormatChange(self.name, payload.name, "rating", "no category holds any rated model")
        as_of = payload.as_of or dt.date.today()
        tables = {"benchmark_scores": frame(rows, SCORE_COLS, self.source, as_of)}
        if SCATTER in payload.files:
            scatter = expect(self.name, SCATTER, read_json(self.name, SCATTER, payload.files[SCATTER]), list, "-")
            for s in scatter:
                require(self.name, SCATTER, expect(self.name, SCATTER, s, dict, "-"), SCATTER_FIELDS)
            tables["models"] = frame([{
                "raw_name": s["model_api_name"], "display_name": s["name"], "organization": s.get("organization"),
                "open_weights": None if not s.get("license") else s["license"] != "Proprietary",
            } for s in scatter], META_COLS, self.source, as_of)
            tables["model_costs"] = frame(pd.DataFrame([{
                "raw_name": s["model_api_name"], "provider": "list_price",
                "input_usd_per_mtok": scaled(s["input_token_price"] or 0, 1.0),
                "output_usd_per_mtok": scaled(s["output_token_price"] or 0, 1.0),
            } for s in scatter], columns=["raw_name", "provider", "input_usd_per_mtok", "output_usd_per_mtok"]),
                COST_COLS, self.source, as_of)
        return screen(self.name, payload.name, tables)
