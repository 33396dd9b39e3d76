"""Aider's polyglot leaderboard (`aider/website/_data/polyglot_leaderboard.yml`, Apache-2.0).

Each YAML entry is one run: `pass_rate_2` (percent of the 225 exercises solved within two
tries) becomes benchmark `aider_polyglot` (fraction). The model is named by the `--model`
argument of the entry's `command` when that is an API spelling (it holds a `/` or `-`, e.g.
`gemini/gemini-2.0-pro-exp-02-05`), else by the displayed `model` (aider's short aliases such as
`r1` or `sonnet` name nothing other sources know). Architect / editor pairs (an `editor_model`) are two models
and are left out. The YAML is read with the safe loader.
"""

from __future__ import annotations

import datetime as dt
import re

import yaml

from compass.ingest.connectors.base import (
    SCORE_COLS, FormatChange, Parsed, Payload, SingleFile, expect, frame, number, require, screen,
)

FIELDS = ("model", "pass_rate_2")
MODEL_FLAG = re.compile(r"--model\s+(\S+)")


class AiderPolyglot(SingleFile):
    name = "aider_polyglot"
    source = "aider"

    def parse(self, payload: Payload) -> Parsed:
        try:
            runs = yaml.safe_load(payload.main())
        except yaml.YAMLError as exc:
            raise FormatChange(self.name, payload.name, "-", f"not valid YAML ({exc})") from None
        rows = []
        for run in expect(self.name, payload.name, runs, list, "-"):
            require(self.name, payload.name, expect(self.name, payload.name, run, dict, "-"), FIELDS)
            if run.get("editor_model"):
                continue
            flag = MODEL_FLAG.search(str(run.get("command") or ""))
            api_name = flag.group(1) if flag and re.search(r"[/-]", flag.group(1)) else None
            rows.append({"raw_name": api_name or str(run["model"]), "benchmark": "aider_polyglot",
                         "score": number(run["pass_rate_2"]) / 100.0, "score_scale": "fraction"})
        as_of = payload.as_of or dt.date.today()
        return screen(self.name, payload.name, {"benchmark_scores": frame(rows, SCORE_COLS, self.source, as_of)})
