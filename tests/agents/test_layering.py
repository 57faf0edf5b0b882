"""Imports run one way (agents/__init__.py): the layers import no env or agent, the envs no agent
and not the command line, training no analysis or experiment, analysis no experiment, imitation no
experiment; nothing below imitation imports it."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Repository folder -> the modules of the package its files must not import.
FORBIDDEN = {
    "keras_simplicial": (
        "keras_simplicial.envs",
        "keras_simplicial.agents",
        "keras_simplicial_cli",
    ),
    "envs": ("keras_simplicial.agents", "keras_simplicial_cli"),
    "agents/model": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.training",
        "keras_simplicial.agents.analysis",
        "keras_simplicial.agents.experiments",
        "keras_simplicial_cli",
    ),
    "agents/rollout.py": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.training",
        "keras_simplicial.agents.analysis",
        "keras_simplicial.agents.experiments",
        "keras_simplicial_cli",
    ),
    "agents/training": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.analysis",
        "keras_simplicial.agents.experiments",
        "keras_simplicial_cli",
    ),
    "agents/analysis": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.experiments",
        "keras_simplicial_cli",
    ),
    "agents/imitation": (
        "keras_simplicial.agents.experiments",
        "keras_simplicial.agents.commands",
        "keras_simplicial_cli",
    ),
    "agents/experiments": ("keras_simplicial.agents.commands", "keras_simplicial_cli"),
}


def imported_modules(path):
    """Every module a file imports, at its top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("where", sorted(FORBIDDEN))
def test_imports_run_one_way(where):
    target = ROOT / where
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    assert files
    wrong = sorted(
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in imported_modules(path)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[where])
    )
    assert wrong == []


def test_no_test_or_script_loads_a_benchmark_script():
    """benchmarks/ holds measurement scripts: nothing imports one, by path or through sys.path."""
    offenders = []
    for path in sorted([*ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/*.py")]):
        if path == Path(__file__):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if "spec_from_file_location" in line or (
                "sys.path.insert" in line
                and ("benchmarks" in line or path.parent.name == "benchmarks")
            ):
                offenders.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert offenders == []
