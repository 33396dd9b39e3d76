"""docs/cli.md covers every command (issue 48: it said it lists every command and had no row for `compass match`):
one row per subcommand of the CLI's parser, naming every option the subcommand takes, and no row for a command
the CLI lacks."""

import argparse
import re
from pathlib import Path

from pipelines.cli import build_parser

CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
ROW = re.compile(r"^\| `compass ([a-z][\w-]*)[^\n]*", flags=re.M)
GLOBAL = {"--help", "--db"}  # --db: said once below the table


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def options(parser: argparse.ArgumentParser) -> list[list[str]]:
    """The option strings of every option of a (sub)command and of its own subcommands (one list per option)."""
    own = [a.option_strings for a in parser._actions if a.option_strings and not GLOBAL & set(a.option_strings)]
    return own + [o for p in subcommands(parser).values() for o in options(p)]


def named(option: str, row: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", row) is not None


def test_docs_cli_has_one_row_per_command_naming_its_options():
    rows = {m.group(1): m.group(0) for m in ROW.finditer(CLI_DOC.read_text())}
    commands = subcommands(build_parser())
    assert sorted(rows) == sorted(commands), "docs/cli.md rows vs the CLI's commands"
    missing = {name: [o[-1] for o in options(parser) if not any(named(s, rows[name]) for s in o)]
               for name, parser in commands.items()}
    assert not {k: v for k, v in missing.items() if v}, "options docs/cli.md does not name"
    for name, parser in commands.items():  # a command with subcommands names each (clusters describe|export|...)
        assert all(named(sub, rows[name]) for sub in subcommands(parser)), name
