"""Imports run one way (agents/__init__.py): the layers import no env or agent, the envs no agent
and not the command line, training no analysis or experiment, analysis no experiment, imitation no
experiment; nothing below imitation imports it. No two modules import each other, however far
round (an import circle inside a folder too), and every module that imports RLlib imports
TensorFlow before it."""

import ast
import re
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
        "keras_simplicial.agents.commands",
        "keras_simplicial_cli",
    ),
    "agents/rollout.py": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.training",
        "keras_simplicial.agents.analysis",
        "keras_simplicial.agents.experiments",
        "keras_simplicial.agents.commands",
        "keras_simplicial_cli",
    ),
    "agents/training": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.analysis",
        "keras_simplicial.agents.experiments",
        "keras_simplicial.agents.commands",
        "keras_simplicial_cli",
    ),
    "agents/analysis": (
        "keras_simplicial.agents.imitation",
        "keras_simplicial.agents.experiments",
        "keras_simplicial.agents.commands",
        "keras_simplicial_cli",
    ),
    "agents/imitation": (
        "keras_simplicial.agents.experiments",
        "keras_simplicial.agents.commands",
        "keras_simplicial_cli",
    ),
    "agents/experiments": ("keras_simplicial.agents.commands", "keras_simplicial_cli"),
    "agents/commands": ("keras_simplicial_cli",),
}


# Repository folder -> its import name (setup.py's PACKAGE_DIRS).
PACKAGES = {
    "keras_simplicial": "keras_simplicial",
    "envs": "keras_simplicial.envs",
    "agents": "keras_simplicial.agents",
}


def imported_modules(path, package=None):
    """Every module a file imports, at its top or inside a function; relative imports resolved
    against `package` (the import name of the file's package), when given."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:
                if package is None:
                    continue
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{module}" if module else base
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def package_modules():
    """{import name: file} of every module of the package, and the command line's."""
    found = {"keras_simplicial_cli": ROOT / "keras_simplicial_cli.py"}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


# The engines' rooms: each record's functions import its engine's code when called, and that
# code reads `RunArguments`, which reads the records. That circle is by design (a record leads to
# its code in one import a tool can follow) and never closes at import time: the rooms' packages
# import their own modules inside functions only (test_engine_records_import_their_code_lazily).
ENGINE_ROOMS = (
    "keras_simplicial.agents.training.keras_engine",
    "keras_simplicial.agents.training.rllib",
)


def import_graph(record_edges=False):
    """{module: the modules of the package it imports}; without `record_edges`, an engine
    room's package (`ENGINE_ROOMS`) does not count its imports of its own modules."""
    modules = package_modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported = imported_modules(path, package)
        graph[name] = {other for other in imported if other in modules and other != name}
        if name in ENGINE_ROOMS and not record_edges:
            graph[name] = {other for other in graph[name] if not other.startswith(name + ".")}
    return graph


def import_circles(graph):
    """The groups of modules that import each other, directly or round a circle (the strongly
    connected components of more than one module)."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


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


def test_no_module_imports_round_a_circle():
    assert import_circles(import_graph()) == []


def test_engine_records_import_their_code_lazily():
    """A room's package imports nothing at its top but the `Engine` record's module, so reading
    the records (the command line, `RunArguments`) imports no engine's code."""
    for room in ENGINE_ROOMS:
        path = package_modules()[room]
        at_top = set(_imports_in_order(ast.parse(path.read_text(encoding="utf-8")).body))
        assert at_top == {"keras_simplicial.agents.training.engine_record"}, room
        assert any(other.startswith(room + ".") for other in import_graph(True)[room]), room


def test_a_circle_would_be_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(graph) == [["a", "b", "c"]]


def _imports_in_order(body):
    """The modules the statements of `body` import, in order (not inside nested functions)."""
    for node in body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_every_module_that_imports_rllib_imports_tensorflow_first():
    """RLlib's try_import_tf turns TensorFlow's v2 behaviour off when it imports TensorFlow
    itself; agents/__init__.py imports nothing heavy, so each importer of RLlib goes first."""
    late = []
    for path in sorted((ROOT / "agents").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        at_top = list(_imports_in_order(tree.body))
        bodies = [("module", tree.body)] + [
            (node.name, node.body)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        for where, body in bodies:
            seen = "tensorflow" in at_top and where != "module"
            for module in _imports_in_order(body):
                seen = seen or module == "tensorflow" or module.startswith("tensorflow.")
                if module.startswith("ray.rllib") and not seen:
                    late.append(f"{path.relative_to(ROOT)} ({where}) imports {module}")
                    break
    assert late == []


def test_no_test_or_script_loads_a_benchmark_or_study_script():
    """benchmarks/ and studies/ hold commands: nothing imports one, by path or through sys.path.
    Logic that a test checks, or that another study reuses, lives in the package."""
    offenders = []
    scripts = [*ROOT.glob("benchmarks/*.py"), *ROOT.glob("studies/*/*.py")]
    for path in sorted([*ROOT.glob("tests/**/*.py"), *scripts]):
        if path == Path(__file__):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            loads_by_path = "spec_from_file_location" in line or (
                "run_path" in line and ("benchmarks" in line or "studies" in line)
            )
            if loads_by_path or (
                "sys.path.insert" in line
                and ("benchmarks" in line or "studies" in line or path in scripts)
            ):
                offenders.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert offenders == []


def test_the_package_is_imported_by_its_installed_name():
    """`agents` and `envs` are folders of the repository, installed as keras_simplicial.agents and
    keras_simplicial.envs: an `import agents...` works only from the repository's root."""
    pattern = re.compile(r"^\s*(?:from|import) (?:agents|envs)(?:\.|\s|$)", flags=re.M)
    folders = ("agents", "envs", "keras_simplicial", "studies", "benchmarks", "examples", "tests")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
