"""The layer contract: imports flow pipelines -> assets -> resources -> compass, and no pickle anywhere.

Every import statement of every module is parsed (ast), top-level and function-local alike, so a
violation anywhere fails here with the file, line and imported name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.paths import ROOT

LAYERS = ["pipelines", "assets", "resources", "compass"]  # each may import only the layers to its right
# What the pure science core may not import besides the layers above it.
SCIENCE_FORBIDDEN = {"dagster", "duckdb"}
FORBIDDEN_EVERYWHERE = {"pickle", "cloudpickle", "joblib", "dill", "shelve"}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every import in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def violations(layer: str, root: Path = ROOT) -> list[str]:
    """Imports of `layer`'s modules that break the contract, as 'file:line imports name'."""
    above = set(LAYERS[: LAYERS.index(layer)])
    forbidden = above | FORBIDDEN_EVERYWHERE | (SCIENCE_FORBIDDEN if layer == "compass" else set())
    out = []
    for path in sorted((root / layer).rglob("*.py")):
        for line, name in imported_modules(path):
            if name in forbidden:
                out.append(f"{path.relative_to(root)}:{line} imports {name}")
    return out


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_flow_one_way(layer):
    assert violations(layer) == []


def test_the_contract_catches_an_upward_import(tmp_path):
    """The checker itself can fail: a resources module importing assets, and a compass one importing dagster."""
    for layer, text in (("resources", "from assets.partitions import case_partitions\n"),
                        ("compass", "def f():\n    import dagster\n"),
                        ("assets", "import pickle\n")):
        (tmp_path / layer).mkdir()
        (tmp_path / layer / "bad.py").write_text(text)
    assert violations("resources", tmp_path) == ["resources/bad.py:1 imports assets"]
    assert violations("compass", tmp_path) == ["compass/bad.py:2 imports dagster"]
    assert violations("assets", tmp_path) == ["assets/bad.py:1 imports pickle"]


def test_clients_import_no_plain_function_from_assets():
    """The CLI, benchmarks and tests may take asset definitions, Config classes and key constants from
    assets/, never a helper function: science lives in compass/, reading in resources/."""
    import importlib
    import inspect

    import dagster as dg

    offenders = []
    for folder in ("pipelines", "benchmarks", "tests", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("assets"):
                    module = importlib.import_module(node.module)
                    for alias in node.names:
                        obj = getattr(module, alias.name, None) or importlib.import_module(f"{node.module}.{alias.name}")
                        if inspect.isfunction(obj) and not isinstance(obj, dg.AssetsDefinition):
                            offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{alias.name}")
    assert offenders == []
