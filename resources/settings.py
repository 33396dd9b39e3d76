"""Every `COMPASS_*` environment variable, read in one place, with its default.

Each is read when its function is called (not at import), so a test or the CLI
can set the variable before a run. Run parameters that a user may want to change
per run (study size, bootstrap draws) are also Dagster `Config` fields on their
assets; these functions give those fields their defaults.

| variable | meaning | default |
|---|---|---|
| COMPASS_DB | the DuckDB warehouse file | var/warehouse.duckdb |
| COMPASS_CONFIG | YAML source config (README "Your own data") | the embedded data/ |
| COMPASS_CASES | case-study folders (os.pathsep-separated) | cases/ |
| COMPASS_SCENARIOS | scenario folders (os.pathsep-separated) | scenarios/ |
| COMPASS_INBOX | folder watched for delivered files | var/inbox |
| COMPASS_ACCEPTED | where accepted inbox files are kept | var/sources |
| COMPASS_ARCHETYPES | cluster archetype folders (os.pathsep-separated) | archetypes/ |
| COMPASS_USERS | simulated matchmaking users (os.pathsep-separated folders) | users/ |
| COMPASS_LLM_BASE_URL, _MODEL, _API_KEY | OpenAI-compatible endpoint for archetype descriptions | none |
| COMPASS_HEAVY | 1: heavy studies (cascades, oracle synthetic grid) | light |
| COMPASS_SMOKE | 1: the data-independent synthetic studies at smoke size (tests) | light |
| COMPASS_ORACLE_N_BOOT | oracle bootstrap draws | 50 |
| (none) | the report site: `reports/site/` next to the warehouse file | var/reports/site |
| (none) | assets' figures (`reports/<group>/`) and `compass run`'s log (`logs/run.log`) next to the warehouse file | var/ |
| (none) | fetched bytes (`raw/<sha256>`) and connector tables (`connectors/`) next to the warehouse file | var/ |
| COMPASS_WRITER_POOL | Dagster pool of every warehouse writer (read at import) | none (deploy profile: duckdb) |
| COMPASS_EXECUTOR | `celery`: jobs and automation run their steps on Celery workers (read at import; deploy/README.md) | none: Dagster's default executor |
| COMPASS_CELERY_CONFIG | run config of the Celery executor, the same file the workers get with `-y` | deploy/run_config.celery.yaml |
| COMPASS_WRITE_LOG | file to which every exclusive warehouse lock appends `pid enter exit` (the deploy check's evidence that writes never overlap) | none: nothing logged |
| COMPASS_STAGE | stage mode (resources.stage): steps read and write shared storage (a folder, or an fsspec URL), never the warehouse file | none: steps open the warehouse |
| COMPASS_PUBLISH_FROM | on the warehouse host: the stage whose staged transactions its workers commit when a remote step asks (pipelines.stage_publish), and to which each write exports its tables | none: no stage |
| COMPASS_REMOTE_STEPS | asset keys (`schema/table`, comma-separated) whose steps the Celery executor sends to queue `remote` (read at run start; a key that is not one asset's step is an error) | none |
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "var/warehouse.duckdb"
DEFAULT_INBOX = "var/inbox"
DEFAULT_ACCEPTED = "var/sources"
DEFAULT_ORACLE_N_BOOT = 50
CASE_DIR = ROOT / "cases"
SCENARIO_DIR = ROOT / "scenarios"
ARCHETYPE_DIR = ROOT / "archetypes"
USER_DIR = ROOT / "users"
MATCHING_DATA_DIR = ROOT / "data" / "matching"


def _folders(variable: str, default: Path) -> list[Path]:
    chosen = [Path(p) for p in os.environ.get(variable, "").split(os.pathsep) if p]
    return chosen or [default]


def db_path() -> str:
    """The warehouse file: COMPASS_DB, else var/warehouse.duckdb."""
    return os.environ.get("COMPASS_DB") or DEFAULT_DB


def site_dir() -> Path:
    """The report site's folder: reports/site/ next to the warehouse file (var/reports/site by default), so a
    test's or a user's own warehouse gets its own site."""
    return Path(db_path()).parent / "reports" / "site"


def figures_dir() -> Path:
    """Where assets save their figures (resources.publish.save_figure): reports/ next to the warehouse file
    (var/reports by default), whichever folder the command runs from."""
    return Path(db_path()).parent / "reports"


def log_dir() -> Path:
    """Where `compass run` writes Dagster's log (run.log): logs/ next to the warehouse file (var/logs by default),
    whichever folder the command runs from."""
    return Path(db_path()).parent / "logs"


def raw_store_dir() -> Path:
    """Where fetched source bytes are kept, content-addressed (resources.fetch.RawStore): raw/ next to the
    warehouse file (var/raw by default)."""
    return Path(db_path()).parent / "raw"


def connectors_dir() -> Path:
    """Where the live sources' canonical tables are staged (resources.live_sources): connectors/ next to the
    warehouse file (var/connectors by default)."""
    return Path(db_path()).parent / "connectors"


def config_path() -> str | None:
    """The user's source config: COMPASS_CONFIG, else None (the embedded default data)."""
    return os.environ.get("COMPASS_CONFIG") or None


def case_dirs() -> list[Path]:
    """COMPASS_CASES (os.pathsep-separated folders) when set, else the shipped cases/ folder."""
    return _folders("COMPASS_CASES", CASE_DIR)


def scenario_dirs() -> list[Path]:
    """COMPASS_SCENARIOS (os.pathsep-separated folders) when set, else the shipped scenarios/ folder."""
    return _folders("COMPASS_SCENARIOS", SCENARIO_DIR)


def archetype_dirs() -> list[Path]:
    """COMPASS_ARCHETYPES (os.pathsep-separated folders) when set, else the shipped archetypes/ folder."""
    return _folders("COMPASS_ARCHETYPES", ARCHETYPE_DIR)


def user_dirs() -> list[Path]:
    """COMPASS_USERS (os.pathsep-separated folders) when set, else the shipped users/ folder (CUPID users)."""
    return _folders("COMPASS_USERS", USER_DIR)


def llm_endpoint() -> tuple[str | None, str | None, str | None]:
    """(base URL, model, API key) of the OpenAI-compatible endpoint that translates archetype descriptions
    (COMPASS_LLM_BASE_URL, COMPASS_LLM_MODEL, COMPASS_LLM_API_KEY); None when unset."""
    return tuple(os.environ.get(f"COMPASS_LLM_{v}") or None for v in ("BASE_URL", "MODEL", "API_KEY"))


def inbox_dir() -> Path:
    """The inbox folder: COMPASS_INBOX, else var/inbox."""
    return Path(os.environ.get("COMPASS_INBOX") or DEFAULT_INBOX)


def inbox_settle_s() -> float:
    """Seconds a delivered file must stay unmodified before the inbox reads it: COMPASS_INBOX_SETTLE_S, else 5."""
    return float(os.environ.get("COMPASS_INBOX_SETTLE_S") or 5.0)


def accepted_dir() -> Path:
    """Folder of accepted inbox files: COMPASS_ACCEPTED, else var/sources."""
    return Path(os.environ.get("COMPASS_ACCEPTED") or DEFAULT_ACCEPTED)


def heavy() -> bool:
    """COMPASS_HEAVY=1 selects the heavy studies (the default of the cascade and oracle study Configs)."""
    return os.environ.get("COMPASS_HEAVY") == "1"


def synthetic_study_size() -> str:
    """Size of the data-independent synthetic studies (oracle.synthetic_validation, router.synthetic_evaluation,
    clusters.segmentation): "heavy" with COMPASS_HEAVY=1, else "smoke" with COMPASS_SMOKE=1 (seconds, numbers
    not meaningful: the pipeline tests, whose subject is the orchestration, set it), else "light"."""
    if heavy():
        return "heavy"
    return "smoke" if os.environ.get("COMPASS_SMOKE") == "1" else "light"


def oracle_n_boot() -> int:
    """Oracle bootstrap draws: COMPASS_ORACLE_N_BOOT, else 50 (0 skips the intervals)."""
    return int(os.environ.get("COMPASS_ORACLE_N_BOOT") or DEFAULT_ORACLE_N_BOOT)


def writer_pool() -> str | None:
    """Dagster pool of every warehouse writer: COMPASS_WRITER_POOL, else none.

    Locally the warehouse's file lock serializes writes and a pool limited to 1
    made multiprocess runs spin waiting for slots (Dagster 1.13, SQLite instance),
    so none is set; the deploy profile sets `duckdb`, whose one slot lives in
    Postgres and so holds across workers and machines (deploy/README.md).
    """
    return os.environ.get("COMPASS_WRITER_POOL") or None


def write_log_path() -> Path | None:
    """COMPASS_WRITE_LOG: where resources.warehouse logs each exclusive lock's hold (enter and exit times), else
    None (nothing logged; the local profile)."""
    value = os.environ.get("COMPASS_WRITE_LOG")
    return Path(value) if value else None


def stage_url() -> str | None:
    """COMPASS_STAGE: the shared storage a step in stage mode reads its inputs from and stages its tables to
    (resources.stage; a folder, or an fsspec URL), else None (steps open the warehouse file)."""
    return os.environ.get("COMPASS_STAGE") or None


def publish_from() -> str | None:
    """COMPASS_PUBLISH_FROM: on the warehouse host, the stage whose staged transactions it commits when the step that
    staged them asks (pipelines.stage_publish) and to which every write exports the tables it changed
    (resources.stage), else None."""
    return os.environ.get("COMPASS_PUBLISH_FROM") or None


class SettingsError(ValueError):
    """A COMPASS_* variable with a value that cannot be used: one line naming the variable and the value."""


def remote_steps() -> frozenset[str]:
    """COMPASS_REMOTE_STEPS: asset keys (`compass/case_benchmarks`, comma-separated) whose steps run in stage mode on
    the Celery queue `remote` (pipelines.executor), else none; pipelines.executor.remote_steps checks them."""
    return frozenset(k.strip() for k in (os.environ.get("COMPASS_REMOTE_STEPS") or "").split(",") if k.strip())


EXECUTORS = ("celery",)


def executor() -> str | None:
    """The executor of every job and of the automation: COMPASS_EXECUTOR (`celery`), else none, which keeps
    Dagster's default (multiprocess; in-process for `compass run`). Anything else is a one-line error."""
    name = os.environ.get("COMPASS_EXECUTOR") or None
    if name is not None and name not in EXECUTORS:
        raise ValueError(f"COMPASS_EXECUTOR={name!r}: expected one of {', '.join(EXECUTORS)} or unset")
    return name


def celery_config_path() -> Path:
    """Run config of the Celery executor (`execution.config`): COMPASS_CELERY_CONFIG, else
    deploy/run_config.celery.yaml. Workers must be started with the same file (`dagster-celery worker start -y`)."""
    return Path(os.environ.get("COMPASS_CELERY_CONFIG") or ROOT / "deploy" / "run_config.celery.yaml")
