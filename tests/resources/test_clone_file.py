"""resources.warehouse.clone_file (the read replica's copy): the copy is byte for byte the source, also through the
plain-copy fallback where copy_file_range(2) is refused or missing (os.copy_file_range is Linux only)."""

import os

import pytest

from resources.warehouse import clone_file


@pytest.mark.parametrize("refused", [False, True, "missing"])
def test_the_clone_is_the_file(tmp_path, monkeypatch, refused):
    source = tmp_path / "w.duckdb"
    source.write_bytes(os.urandom(3 << 20))
    (tmp_path / "copy").write_bytes(b"stale, longer than nothing")
    if refused == "missing":
        monkeypatch.delattr(os, "copy_file_range")
    elif refused:
        def refuse(*args):
            raise OSError(18, "Invalid cross-device link")
        monkeypatch.setattr(os, "copy_file_range", refuse)
    clone_file(source, tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == source.read_bytes()
