"""Live sources (issue 36): a config's `connector:` entries fetched (or read), parsed by their connector, their
model names matched (compass.ingest.names) and staged as canonical tables the raw assets read like any file.

For each connector entry, in config order:

1. gather its files: over HTTP (resources.fetch: conditional, capped, retried) the named file and the siblings the
   connector asks for (a sibling the server does not have is left out); from disk a file and its siblings, a
   folder's files, or a ZIP's entries (checked before extraction, compass.ingest.untrusted);
2. parse them (`CONNECTORS[name].parse(Payload(...))`): rows the connector cannot read are dropped and counted
   (compass.ingest.connectors.base.screen; the count is `rows_dropped` of the main file's raw.fetches row), the
   good rows go on; past MAX_BAD_SHARE of bad rows the parse fails (TooManyBadRows) as below;
3. on any failure (timeout, HTTP error, truncated body, a format change, too many bad rows) keep the source's
   previous files (their bytes are kept content-addressed) and parse those again, so its rows stay exactly as
   they were; the other sources go on. Each failure becomes one line: connector, URL, error, age of the data kept.

Then every spelling is matched once over all sources (new models from quality sources are known to the price
lists), and each source's tables are written to <connectors>/<slug>/<table>.parquet *only when their content
changed*: unchanged files keep their bytes and modification time, so `SourcesResource.input_digest` and with it
`compass run` see no change and nothing downstream runs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pandas as pd

from compass.ingest.aliases import alias_key, alias_lookup
from compass.ingest.errors import IngestError
from compass.ingest.ingest import ingest_table
from compass.ingest.load import TABLE_ORDER, ConnectorSource, SourceConfig, SourceFile, read_file
from compass.ingest.names import CONFIRMED, MATCHED, NEW, match_names
from compass.ingest.resolve import dedupe_costs, dedupe_scores
from compass.ingest.schemas import RAW_TABLES
from compass.ingest.untrusted import UntrustedInput, extract_zip
from resources import settings
from resources.fetch import FetchFailed, FetchPolicy, RawStore, Validators, fetch
from resources.warehouse import frame_version

MANIFEST = "manifest.json"
FETCH_COLUMNS = ["connector", "url", "status", "bytes", "sha256", "etag", "last_modified", "fetched_at", "attempts",
                 "error", "rows_dropped"]
UNMATCHED_COLUMNS = ["connector", "source", "location", "raw_name", "status", "model_id", "best_candidate",
                     "similarity", "candidates", "tables", "rows"]


@dataclass
class SourceResult:
    """What became of one connector entry this time."""

    entry: ConnectorSource
    parsed: dict[str, pd.DataFrame] | None = None  # raw-name frames (None: nothing to stage)
    manifest: dict | None = None  # the files now kept for it
    error: str | None = None  # set when this attempt failed (its previous data, if any, is kept)
    dropped: int | None = None  # rows of this attempt's payload the connector could not read
    fetches: list[dict] = field(default_factory=list)

    def failure_line(self, now: dt.datetime) -> str:
        kept = _age(self.manifest, now) if self.parsed is not None else None
        tail = f"keeping the data fetched {kept} ago" if kept else "no earlier data to keep"
        return f"source {self.entry.connector} ({self.entry.location}) failed: {self.error}; {tail}"


@dataclass
class LiveOutcome:
    """The fetch log rows, the unmatched names, the failed sources' lines, the staged files and a version that
    changes only when what the sources deliver changes (not with fetch times)."""

    fetches: pd.DataFrame
    unmatched: pd.DataFrame
    failed: dict[str, str]  # location -> the failure's line
    version: str
    ages_h: dict[str, float]  # location -> hours since its kept data was fetched (inf: none kept)
    dropped: dict[str, int]  # location -> rows its payload had that the connector could not read (url and path sources)

    @property
    def failures(self) -> list[str]:
        return list(self.failed.values())

    def stale(self, after_hours: float) -> list[str]:
        """The failed sources whose kept data is at least `after_hours` old (or who have none)."""
        return sorted(loc for loc in self.failed if self.ages_h[loc] >= after_hours)


def staged_files(entry: ConnectorSource, root: Path | None = None) -> list[SourceFile]:
    """The canonical files staged for a connector entry (none before its first successful read)."""
    folder = (root or settings.connectors_dir()) / entry.slug
    return [SourceFile(t, (folder / f"{t}.parquet").resolve()) for t in TABLE_ORDER
            if (folder / f"{t}.parquet").exists()]


def refresh_live_sources(config: SourceConfig, now: dt.datetime | None = None, root: Path | None = None,
                         store: RawStore | None = None, policy: FetchPolicy = FetchPolicy()) -> LiveOutcome:
    """Fetch, parse, match and stage every connector entry of `config` (module docstring)."""
    now = now or dt.datetime.now(dt.UTC).replace(tzinfo=None)
    root = root or settings.connectors_dir()
    store = store or RawStore(settings.raw_store_dir())
    results = [_read_source(e, root, store, _policy(e, policy), now) for e in config.connectors]
    matches = _match(config, results)
    unmatched = []
    for result in results:
        if result.parsed is None:
            continue
        tables, held = _stage_tables(result, matches)
        unmatched.append(held)
        if result.error is None:  # a failed source keeps its files untouched
            result.manifest = _write_staged(root / result.entry.slug, tables, result.manifest)
    fetches = pd.DataFrame([row for r in results for row in r.fetches], columns=FETCH_COLUMNS)
    held_back = (pd.concat(unmatched, ignore_index=True) if unmatched else pd.DataFrame(columns=UNMATCHED_COLUMNS))
    state = [(r.entry.slug, sorted((r.manifest or {}).get("files", {}).items()), r.error is not None) for r in results]
    version = hashlib.sha256(json.dumps(state).encode() + frame_version(held_back).encode()).hexdigest()[:16]
    ages = {r.entry.location: _age_hours(r.manifest, now) for r in results}
    failed = {r.entry.location: r.failure_line(now) for r in results if r.error}
    dropped = {r.entry.location: int(r.dropped) for r in results if r.dropped}
    return LiveOutcome(fetches, held_back, failed, version, ages, dropped)


def _policy(entry: ConnectorSource, default: FetchPolicy) -> FetchPolicy:
    chosen = {k: getattr(entry, k) for k in ("timeout_s", "retries", "backoff_s", "max_bytes")
              if getattr(entry, k) is not None}
    return dataclasses.replace(default, **chosen)


# ------------------------------------------------------------------ gather and parse one source


def _read_source(entry: ConnectorSource, root: Path, store: RawStore, policy: FetchPolicy,
                 now: dt.datetime) -> SourceResult:
    from compass.ingest.connectors import CONNECTORS, Payload

    connector = CONNECTORS[entry.connector]
    previous = _load_manifest(root / entry.slug)
    result = SourceResult(entry)
    try:
        name, files, manifest = (_gather_url(entry, connector, previous, store, policy, now, result.fetches)
                                 if entry.url else _gather_path(entry, connector, policy, store, now))
        parsed = connector.parse(Payload(name, files, _as_of(manifest)))
        result.parsed, result.manifest, result.dropped = dict(parsed), manifest, getattr(parsed, "bad", 0)
        _log_dropped(result)
        return result
    except Exception as exc:  # noqa: BLE001 - any failure of one source is that source's, never the refresh's
        result.error = _one_line(exc)
        if not isinstance(exc, (FetchFailed, IngestError, OSError)):  # a connector's own error: name what it read
            result.error = f"{entry.connector} could not read {entry.location}: {result.error}"
        result.dropped = getattr(exc, "bad", None)
        _log_dropped(result)
        if result.fetches and result.fetches[-1]["error"] is None and not isinstance(exc, FetchFailed):
            result.fetches[-1]["error"] = result.error  # the bytes came but did not parse
    if previous is not None:
        try:
            files = {n: store.get(sha) for n, sha in previous["files"].items()}
            result.parsed = dict(connector.parse(Payload(previous["name"], files, _as_of(previous))))
            result.manifest = previous
        except Exception:  # noqa: BLE001 - kept bytes gone: the staged files stay as they are, unread
            result.parsed = None
    return result


def _log_dropped(result: SourceResult) -> None:
    """The dropped-row count on the source's main-file fetch row (a path source has none: its count is in
    `LiveOutcome.dropped`, as every source's is)."""
    main = [row for row in result.fetches if row["url"] == result.entry.url]
    if main:
        main[0]["rows_dropped"] = result.dropped


def _gather_url(entry, connector, previous, store, policy, now, log) -> tuple[str, dict[str, bytes], dict]:
    name = Path(urlsplit(entry.url).path).name
    kept = (previous or {}).get("validators", {})
    files, validators, main = {}, {}, None
    for i, file in enumerate([name, *connector.siblings(name)]):
        url = entry.url if i == 0 else urljoin(entry.url, file)
        row = {"connector": entry.connector, "url": url, "fetched_at": now, "error": None}
        try:
            got = fetch(url, Validators(**kept[url]) if url in kept else None, store, policy)
        except FetchFailed as exc:
            log.append({**row, "status": 0, "bytes": 0, "error": str(exc)})
            if i > 0 and str(exc).startswith("HTTP 404"):
                continue  # a sibling this release does not publish
            raise
        log.append({**row, "status": got.status, "bytes": got.size, "sha256": got.sha256, "etag": got.etag,
                    "last_modified": got.last_modified, "attempts": got.attempts})
        validators[url] = {"etag": got.etag, "last_modified": got.last_modified, "sha256": got.sha256}
        files[file] = got.sha256
        main = main or got
    payload = {n: store.get(sha) for n, sha in files.items()}
    if name.lower().endswith(".zip"):
        payload = extract_zip(payload[name], entry.url)
    as_of = _http_date(main.last_modified) or now.date()
    if previous is not None and previous.get("files") == files:
        as_of = dt.date.fromisoformat(previous["as_of"]) if previous.get("as_of") else as_of
    manifest = {"name": name, "files": files, "validators": validators, "as_of": as_of.isoformat(),
                "fetched_at": now.isoformat()}
    return name, payload, manifest


def _gather_path(entry, connector, policy, store, now) -> tuple[str, dict[str, bytes], dict]:
    path = entry.path
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file())
        files = {p.relative_to(path).as_posix(): _read_capped(p, policy) for p in found}
        name = path.name
    elif path.exists():
        name = path.name
        files = {name: _read_capped(path, policy)}
        files |= {s: _read_capped(path.parent / s, policy) for s in connector.siblings(name)
                  if (path.parent / s).exists()}
    else:
        raise FileNotFoundError(f"{path} does not exist")
    shas = {n: store.put(b) for n, b in files.items()}
    if name.lower().endswith(".zip"):
        files = extract_zip(files[name], str(path))
    as_of = dt.date.fromtimestamp(path.stat().st_mtime) if path.is_file() else None
    manifest = {"name": name, "files": shas, "validators": {}, "as_of": as_of.isoformat() if as_of else None,
                "fetched_at": now.isoformat()}
    return name, files, manifest


def _read_capped(path: Path, policy: FetchPolicy) -> bytes:
    size = path.stat().st_size
    if size > policy.max_bytes:
        raise UntrustedInput(str(path), None, None, f"file of {size} bytes exceeds the size cap of {policy.max_bytes}")
    return path.read_bytes()


# ------------------------------------------------------------------ match names and stage


def _catalog_lookup(config: SourceConfig) -> tuple[dict[str, str], dict[str, str]]:
    """(alias lookup of the config's canonical models and aliases, the aliases file's confirmed matches)."""
    files = [f for f in config.files if f.path != config.aliases]
    models = ingest_table("models", files, None)
    lookup = alias_lookup(pd.DataFrame({"alias": [], "model_id": []}), models["model_id"])
    aliases = ingest_table("model_aliases", files, lookup)
    confirmed = {}
    if config.aliases is not None and config.aliases.exists():
        sheet = read_file(SourceFile("model_aliases", config.aliases))  # not UTF-8, not a CSV: one line naming it
        missing = [c for c in ("alias", "model_id") if c not in sheet.columns]
        if missing:  # a person's file: a one-line error naming it and the column, not a KeyError
            raise IngestError(str(config.aliases), None, missing[0], "the aliases file needs columns alias,model_id")
        sheet = sheet.dropna(subset=["alias", "model_id"])
        confirmed = {alias_key(a): str(m).strip() for a, m in zip(sheet["alias"], sheet["model_id"])}
    return alias_lookup(aliases, models["model_id"]), confirmed


def _match(config: SourceConfig, results: list[SourceResult]) -> pd.DataFrame:
    """MATCH_COLUMNS for every spelling of every source; new models of quality sources are then known to the
    others (a price list naming a model a leaderboard just brought in)."""
    lookup, confirmed = _catalog_lookup(config)
    catalog = set(lookup.values())
    parsed = [r.parsed for r in results if r.parsed is not None]
    names = {n for p in parsed for f in p.values() if "raw_name" in f for n in f["raw_name"].dropna()}
    scored = {n for p in parsed if "benchmark_scores" in p for n in p["benchmark_scores"]["raw_name"].dropna()}
    threshold = config.match_threshold
    first = match_names(names, lookup, confirmed, scored, threshold)
    entered = first[first["status"].isin([NEW, CONFIRMED])]["model_id"]
    lookup = {**lookup, **{alias_key(m): m for m in entered}}
    again = match_names(first[first["model_id"].isna()]["raw_name"], lookup, confirmed, scored, threshold)
    matches = pd.concat([first[first["model_id"].notna()], again], ignore_index=True).set_index("raw_name")
    return matches.assign(in_catalog=matches["model_id"].isin(catalog))


def _stage_tables(result: SourceResult, matches: pd.DataFrame) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """(canonical tables of one source, its held-back and new names as raw.unmatched_names rows)."""
    tables, counts = {}, {}
    for table, frame in result.parsed.items():
        if "raw_name" not in frame.columns:
            tables[table] = frame.reset_index(drop=True)
            continue
        ids = frame["raw_name"].map(matches["model_id"])
        for name, n in frame["raw_name"].value_counts().items():
            counts.setdefault(name, {})[table] = int(n)
        resolved = frame.assign(model_id=ids).dropna(subset=["model_id"])
        if table == "benchmark_scores":
            tables[table] = dedupe_scores(resolved)
        elif table == "model_costs":
            tables[table] = dedupe_costs(resolved)
        elif table != "models":
            key = list(RAW_TABLES[table].key)
            tables[table] = resolved.drop_duplicates(key).rename(columns={"raw_name": "variant"})
    tables["models"] = _new_models(result, matches, counts)
    for table, frame in tables.items():
        schema = RAW_TABLES[table]
        first = [c for c in schema.column_names if c in frame.columns]
        tables[table] = frame[first + sorted(c for c in frame.columns if c not in first)].sort_values(
            list(schema.key)).reset_index(drop=True)
    mine = matches.loc[matches.index.isin(counts)]
    held = mine[~mine["status"].isin([MATCHED, CONFIRMED])].reset_index()
    held = held.assign(connector=result.entry.connector, location=result.entry.location,
                       source=_source_of(result.entry),
                       tables=held["raw_name"].map(lambda n: ",".join(sorted(counts[n]))),
                       rows=held["raw_name"].map(lambda n: sum(counts[n].values())))
    return {t: f for t, f in tables.items() if len(f)}, held[UNMATCHED_COLUMNS]


def _new_models(result: SourceResult, matches: pd.DataFrame, counts: dict) -> pd.DataFrame:
    """raw.models rows of the models this source names that the catalog lacks (new, confirmed to a new id, or new
    from another source; a later file's row of the same id wins, as for any file): the
    connector's metadata of the spelling where it has some, else the id and the spelling as display name."""
    entered = matches[matches.index.isin(counts) & matches["model_id"].notna() & ~matches["in_catalog"]]
    if entered.empty:
        return pd.DataFrame(columns=["model_id"])
    meta = result.parsed.get("models", pd.DataFrame(columns=["raw_name"]))
    rows = pd.DataFrame({"raw_name": entered.index, "model_id": entered["model_id"].to_numpy()})
    rows = rows.merge(meta.drop(columns=["model_id"], errors="ignore"), on="raw_name", how="left")
    if "display_name" not in rows.columns:
        rows["display_name"] = None
    rows["display_name"] = rows["display_name"].fillna(rows["raw_name"])
    rows["source"] = rows["source"].fillna(_source_of(result.entry)) if "source" in rows else _source_of(result.entry)
    return rows.sort_values("raw_name").drop_duplicates("model_id").drop(columns=["raw_name"])


def _source_of(entry: ConnectorSource) -> str:
    from compass.ingest.connectors import CONNECTORS

    return CONNECTORS[entry.connector].source


def _write_staged(folder: Path, tables: dict[str, pd.DataFrame], manifest: dict) -> dict:
    """Write each table whose content changed since the last write (its version in the manifest; atomic rename),
    drop tables the source no longer has, then the manifest (returned): an unchanged table keeps its file, bytes
    and modification time."""
    folder.mkdir(parents=True, exist_ok=True)
    written = (_load_manifest(folder) or {}).get("tables", {})
    versions = {t: frame_version(f) for t, f in tables.items()}
    for table in TABLE_ORDER:
        path = folder / f"{table}.parquet"
        if table not in tables:
            path.unlink(missing_ok=True)
        elif not path.exists() or written.get(table) != versions[table]:
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tables[table].to_parquet(tmp, index=False)
            os.replace(tmp, path)
    manifest = {**manifest, "tables": versions}
    tmp = folder / f"{MANIFEST}.tmp{os.getpid()}"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, folder / MANIFEST)
    return manifest


# ------------------------------------------------------------------ small helpers


def _load_manifest(folder: Path) -> dict | None:
    path = folder / MANIFEST
    return json.loads(path.read_text()) if path.exists() else None


def _as_of(manifest: dict) -> dt.date | None:
    return dt.date.fromisoformat(manifest["as_of"]) if manifest.get("as_of") else None


def _http_date(value: str | None) -> dt.date | None:
    try:
        return email.utils.parsedate_to_datetime(value).date() if value else None
    except (TypeError, ValueError):
        return None


def _age_hours(manifest: dict | None, now: dt.datetime) -> float:
    if manifest is None or not manifest.get("fetched_at"):
        return float("inf")
    return (now - dt.datetime.fromisoformat(manifest["fetched_at"])).total_seconds() / 3600.0


def _age(manifest: dict | None, now: dt.datetime) -> str | None:
    hours = _age_hours(manifest, now)
    if hours == float("inf"):
        return None
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    return text if isinstance(exc, (FetchFailed,)) or ":" in text else f"{exc.__class__.__name__}: {text}"
