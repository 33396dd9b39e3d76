"""The leaderboard's note on rows whose imputed cells are no better than the column mean."""

import pandas as pd

from pipelines.report.site import imputation_note


def test_the_note_names_the_rows_whose_imputed_cells_are_no_better_than_the_mean():
    board = pd.DataFrame({"model_id": ["a", "b", "c"], "imputed_no_better_share": [0.0, 0.3, None]})
    note = imputation_note(board)
    assert "Imputed cells of b are no better than the column mean" in note and "a," not in note
    assert imputation_note(board.assign(imputed_no_better_share=0.0)) == ""
    assert imputation_note(board.drop(columns="imputed_no_better_share")) == ""  # a board published before the column
