"""The package as users install it: a built wheel holds every module under its import name and
imports on its own, with the one version and the licence; checkpoints that name the modules of
earlier versions still load."""

import importlib
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Repository folder -> import name (setup.py's PACKAGE_DIRS).
FOLDERS = {
    "keras_simplicial": "keras_simplicial",
    "envs": "keras_simplicial.envs",
    "agents": "keras_simplicial.agents",
}


def source_modules():
    """Every module of the repository, by import name."""
    names = {"keras_simplicial_cli"}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.add(".".join((package, *parts)))
    return names


def test_the_wheel_holds_every_module_and_imports_on_its_own(tmp_path):
    # Built from a copy of the sources: setuptools writes build/ and *.egg-info beside setup.py.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "keras_simplicial_cli.py"):
        shutil.copy(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=600,
        cwd=tmp_path,
    )
    (wheel,) = (tmp_path / "dist").glob("keras_simplicial-*.whl")
    assert wheel.name.startswith(f"keras_simplicial-{package_version()}-")
    files = set(zipfile.ZipFile(wheel).namelist())
    (license_file,) = [name for name in files if name.endswith("LICENSE")]
    assert zipfile.ZipFile(wheel).read(license_file) == (ROOT / "LICENSE").read_bytes()
    in_wheel = {
        name[: -len(".py")].replace("/", ".").removesuffix(".__init__")
        for name in files
        if name.endswith(".py")
    }
    assert source_modules() <= in_wheel, sorted(source_modules() - in_wheel)
    entry_points = next(name for name in files if name.endswith("entry_points.txt"))
    assert (
        "keras-simplicial = keras_simplicial_cli:main"
        in zipfile.ZipFile(wheel).read(entry_points).decode()
    )

    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    # Every module imports from the installed wheel (not from this checkout); the dependencies
    # come from this environment.
    check = (
        "import importlib, sys\n"
        f"for name in sorted({sorted(source_modules())!r}):\n"
        "    module = importlib.import_module(name)\n"
        f"    assert module.__file__.startswith({str(site)!r}), (name, module.__file__)\n"
        "print('ok')\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(site), "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(
        [sys.executable, "-c", check],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=environment,
    )
    assert result.stdout.strip() == "ok", result.stderr[-3000:]


def test_checkpoints_naming_modules_of_earlier_versions_still_load():
    from keras_simplicial.agents import MOVED_MODULES
    from keras_simplicial.agents.training.impala import ResilientIMPALA

    for old, new in MOVED_MODULES.items():
        module = importlib.import_module(f"keras_simplicial.agents.{old}")
        assert module is importlib.import_module(f"keras_simplicial.agents.{new}")
        assert module.__spec__.name == f"keras_simplicial.agents.{new}"
    # A pickle that names the class by its earlier module, as RLlib checkpoints do (protocol 0
    # writes module names as plain text).
    data = pickle.dumps(ResilientIMPALA, protocol=0).replace(
        b"keras_simplicial.agents.training.impala", b"keras_simplicial.agents.config"
    )
    assert b"keras_simplicial.agents.config" in data
    assert pickle.loads(data) is ResilientIMPALA


def package_version():
    """``__version__`` of keras_simplicial, read without importing it."""
    text = (ROOT / "keras_simplicial" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"$', text, flags=re.M).group(1)


def test_the_version_is_defined_once():
    import keras_simplicial

    assert keras_simplicial.__version__ == package_version()
    # setup.py reads it; no other file of the package's metadata writes a version.
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert "version=version()" in setup and not re.search(r"version\s*=\s*[\"']", setup)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[project]" not in pyproject and not re.search(r"^version\s*=", pyproject, flags=re.M)
    metadata = subprocess.run(
        [sys.executable, "setup.py", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert metadata.stdout.strip().splitlines()[-1] == package_version()


def test_the_licence_is_the_apache_license_that_setup_py_declares():
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert 'license="Apache-2.0"' in setup
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("                                 Apache License\n")
    assert "Version 2.0, January 2004" in text and text.rstrip().endswith(
        "limitations under the License."
    )
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
