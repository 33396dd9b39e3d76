"""A scenario that refers to a retired measure is refused for that case, by name or id, saying what changed;
current names resolve to ids (resources.readers.named_measures over compass.measure_names)."""

import pandas as pd
import pytest

from compass.mlcompass.decisions import NotApplicable
from compass.mlcompass.measure_names import identify_measures
from compass.mlcompass.scenarios import Scenario
from resources import readers
from resources.configs import cases
from resources.warehouse import Warehouse

BENCH = pd.Index(["livebench_coding", "livebench_data_analysis", "lmarena_full", "lmarena_math", "gpqa_diamond"])


def test_retired_measures_are_refused_and_names_resolve(tmp_path):
    prev = pd.DataFrame({"C1": [0.8, 0.7, 0.75, 0.7, 0.7], "C2": [0.3, 0.9, 0.35, 0.32, 0.31]}, index=BENCH)
    first = identify_measures(prev, None, None, None)[1]
    _, registry = identify_measures(prev.assign(C2=[0.9, -0.2, 0.0, 0.0, 0.5]), pd.Series({"C1": 0.99, "C2": 0.4}),
                                    first, prev)
    wh, case = Warehouse(tmp_path / "w.duckdb"), cases()["frontier_api"]
    wh.replace("compass.measure_names", registry.assign(case_id=case.case_id), {"case_id": case.case_id})
    single = Scenario.from_yaml("scenarios/constrained_single.yaml")  # floors: {C2: 0.5}
    with pytest.raises(NotApplicable, match=r"constrained_single.yaml: floors.C2: refers to a retired measure: C2 "
                                            r"'livebench_data_analysis' no longer matches .*phi 0.40.* now C3"):
        readers.named_measures(wh, case, single)
    mine = Scenario.from_dict({"name": "mine", "floors": {"general_livebench_coding": 0.5}, "utility": {"weights": {"C3": 1.0}}})
    resolved = readers.named_measures(wh, case, mine)
    assert resolved.floors == {"C1": 0.5} and resolved.utility_weights == {"C3": 1.0}
    # a case whose measures were never named (an older warehouse) resolves nothing
    other = readers.named_measures(wh, cases()["open_mmlu_pro"], single)
    assert other.floors == {"C2": 0.5}
