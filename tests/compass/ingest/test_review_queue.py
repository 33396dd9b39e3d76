"""The review queue holds what looks like a typo and offers no other model (issue 48, item 4; compass/ingest/review.py,
names.py, review_pairs.py), against the embedded catalog and on the labelled upstream names."""

import pandas as pd
import pytest

from compass.ingest.aliases import alias_lookup
from compass.ingest.errors import IngestError
from compass.ingest.load import MATCH_THRESHOLD
from compass.ingest.name_pairs import read_pairs
from compass.ingest.names import match_names
from compass.ingest.review_pairs import choose_threshold, confusion, from_cross_source, read_review_pairs, scores, sweep
from tests.paths import FIXTURES, ROOT

NAMES = FIXTURES / "names"


@pytest.fixture(scope="module")
def labelled():
    own = read_review_pairs((NAMES / "review_queue_pairs.csv").read_text(), "review_queue_pairs.csv")
    apart = from_cross_source(read_pairs((NAMES / "cross_source_pairs.csv").read_text(), "cross_source_pairs.csv"))
    return scores(pd.concat([own, apart], ignore_index=True))


def test_the_issue_typo_is_held_and_command_a_plus_is_not_offered_command_r_plus():
    """Issue 48: `qwen3.8-max-previw` (old similarity 0.76) entered as a new model; `command-a-plus-05-2026` was held
    as a near miss of `command-r-plus` (0.93). Both scored by a quality source, against the shipped catalog."""
    lookup = alias_lookup(pd.read_parquet(ROOT / "data" / "model_aliases.parquet"),
                          pd.read_parquet(ROOT / "data" / "models.parquet")["model_id"])
    names = ["qwen3.8-max-previw", "command-a-plus-05-2026", "gemini-3.7-flsh"]
    out = match_names(names, lookup, {}, set(names), MATCH_THRESHOLD).set_index("raw_name")
    assert out.loc["qwen3.8-max-previw", ["status", "model_id", "best_candidate"]].tolist() == [
        "pending", None, "qwen3.8-max"]
    assert out.loc["gemini-3.7-flsh", ["status", "best_candidate"]].tolist() == ["pending", "gemini-3.7-flash"]
    command = out.loc["command-a-plus-05-2026"]
    assert command["status"] == "new" and command["model_id"] == "command-a-plus"
    assert command["best_candidate"] is None and command["candidates"] is None


def test_the_shipped_threshold_is_the_one_the_labelled_names_choose_and_meets_its_precision(labelled):
    """Precision >= 0.95 at the shipped threshold (the lowest such score level), recall at least 0.70; the queue
    before issue 48 had 51 % and 53 % on these pairs (docs/your-data.md)."""
    table = sweep(labelled)
    assert choose_threshold(table) == MATCH_THRESHOLD
    at = confusion(labelled, MATCH_THRESHOLD)
    assert at.n_pairs >= 300 and at.precision >= 0.95 and at.recall >= 0.70
    typos = labelled[labelled["source"].isin(["synthetic_typo", "issue_48"])]
    assert confusion(typos, MATCH_THRESHOLD).recall >= 0.95


def test_a_review_fixture_with_a_pair_twice_is_one_line_naming_the_row():
    text = "name,source,candidate,same_model,note\na,x,b,1,\nc,x,d,0,\na,x,b,0,\n"
    with pytest.raises(IngestError) as err:
        read_review_pairs(text, "pairs.csv")
    assert (err.value.file, err.value.row) == ("pairs.csv", 3) and "\n" not in str(err.value)
