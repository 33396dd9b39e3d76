"""Ingest errors that name the file, the row and the column."""

from __future__ import annotations


class IngestError(ValueError):
    """Bad input. `row` is the 1-based data row (the CSV header is not counted), or None."""

    def __init__(self, file: str, row: int | None, column: str | None, message: str):
        self.file, self.row, self.column, self.reason = file, row, column, message
        where = f"{file}: row {row if row is not None else '-'}, column {column or '-'}"
        super().__init__(_one_line(f"{where}: {message}"))


def _one_line(text: str) -> str:
    """`text` on one line: a line break inside a key, a value or a file name is shown escaped, as repr() would."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def utf8_text(data: bytes, file: str, first_row: int | None = 1) -> str:
    """`data` (the bytes of `file`; a byte-order mark is dropped) as text, else `not_utf8`."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(file, data, exc, first_row) from None


def not_utf8(file: str, data: bytes, exc: UnicodeDecodeError, first_row: int | None) -> IngestError:
    """The error of a file that is not UTF-8: its row is the line of the first bad byte counted from `first_row`
    (1 for a text file's lines, 0 for a CSV file, whose header is not a data row; None: no row)."""
    row = None if first_row is None else data[:exc.start].count(b"\n") + first_row
    return IngestError(file, row, None, f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x}); save the file as UTF-8")


class IngestWarning(UserWarning):
    """Suspicious but admissible input (e.g. a price that moved more than 10x)."""
