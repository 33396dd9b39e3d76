"""Connector entries in the source config (compass/ingest/load.py): a bad entry is a one-line error naming the
config, the entry and the key; canonical `table:` + `path:` entries keep working beside them."""

import pytest

from compass.ingest.errors import IngestError
from compass.ingest.load import ConnectorSource, SourceFile, read_config


def _config(tmp_path, entries: str, top: str = "") -> object:
    path = tmp_path / "c.yaml"
    path.write_text(f"replace_defaults: true\n{top}sources:\n{entries}")
    return path


def test_connector_and_table_entries_in_order(tmp_path):
    (tmp_path / "aliases.csv").write_text("alias,model_id\nkimi-k3,kimi-k2\n")
    config = read_config(_config(tmp_path, "  - {table: model_costs, path: a.csv}\n"
                                           "  - {connector: livebench, url: 'https://x.org/public/table_2026_06_25.csv',"
                                           " max_bytes: 1000, retries: 0}\n"
                                           "  - {connector: epoch_benchmarks, path: export}\n",
                                 "aliases: aliases.csv\nstale_after_hours: 6\n"))
    kinds = [type(e) for e in config.entries]
    assert kinds == [SourceFile, ConnectorSource, ConnectorSource, SourceFile]  # the aliases file last
    live = config.connectors[0]
    assert (live.connector, live.max_bytes, live.retries, live.position) == ("livebench", 1000, 0, 2)
    assert config.connectors[1].path == (tmp_path / "export").resolve()
    assert config.entries[-1] == SourceFile("model_aliases", (tmp_path / "aliases.csv").resolve())
    assert config.stale_after_hours == 6 and config.connectors[0].slug != config.connectors[1].slug


@pytest.mark.parametrize("entry, column, message", [
    ("{connector: litellm, url: 'https://x.org/p.json'}", "connector", "unknown connector 'litellm'"),
    ("{connector: litellm_prices, url: 'https://x.org/p.json', path: p.json}", "sources", "exactly one"),
    ("{connector: litellm_prices, url: 'file:///etc/passwd'}", "url", "only http(s)"),
    ("{connector: litellm_prices, url: 'https://x.org/p.json', timeout_s: soon}", "timeout_s", "must be a number"),
    ("{connector: litellm_prices, url: 'https://x.org/p.json', retries: -1}", "retries", "between 0 and 10"),
    ("{connector: litellm_prices, url: 'https://x.org/p.json', retries: 1000}", "retries", "between 0 and 10"),
    ("{connector: litellm_prices, url: 'https://x.org/p.json', timeout_s: 0}", "timeout_s", "between"),
])
def test_a_bad_connector_entry_names_the_entry_and_key(tmp_path, entry, column, message):
    with pytest.raises(IngestError) as info:
        read_config(_config(tmp_path, f"  - {{table: model_costs, path: a.csv}}\n  - {entry}\n"))
    assert (info.value.row, info.value.column) == (2, column) and message in str(info.value)
    assert "c.yaml" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("top, key", [("match_threshold: 1.5\n", "match_threshold"),
                                      ("match_threshold: 0\n", "match_threshold"),
                                      ("stale_after_hours: -1\n", "stale_after_hours")])
def test_live_settings_out_of_range_are_refused(tmp_path, top, key):
    with pytest.raises(IngestError, match=f"'{key}' must be between") as info:
        read_config(_config(tmp_path, "  - {table: model_costs, path: a.csv}\n", top))
    assert info.value.column == key
