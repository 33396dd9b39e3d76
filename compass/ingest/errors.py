"""Ingest errors that name the file, the row and the column."""

from __future__ import annotations


class IngestError(ValueError):
    """Bad input. `row` is the 1-based data row (the CSV header is not counted), or None."""

    def __init__(self, file: str, row: int | None, column: str | None, message: str):
        self.file, self.row, self.column, self.reason = file, row, column, message
        where = f"{file}: row {row if row is not None else '-'}, column {column or '-'}"
        super().__init__(f"{where}: {message}")


class IngestWarning(UserWarning):
    """Suspicious but admissible input (e.g. a price that moved more than 10x)."""
