"""The package as users install it: a built wheel holds every module under its import name and
imports on its own, with the one version and the licence; checkpoints that name the modules of
earlier versions still load; the base install (Keras, NumPy) builds the layers on every backend
without the extras."""

import importlib
import importlib.util
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

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


def build_wheel(tmp_path):
    """The package's wheel, built (without its dependencies) from a copy of the sources."""
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
    return wheel


@pytest.mark.integration
def test_the_wheel_holds_every_module_and_imports_on_its_own(tmp_path):
    wheel = build_wheel(tmp_path)
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
    # keras_simplicial._triton needs the [triton] extra and a process without TensorFlow (which
    # this one has loaded): it refuses to import, by name, rather than abort the process.
    check = (
        "import importlib, sys\n"
        f"for name in sorted({sorted(source_modules())!r}):\n"
        "    try:\n"
        "        module = importlib.import_module(name)\n"
        "    except ImportError as error:\n"
        "        assert name == 'keras_simplicial._triton', (name, error)\n"
        "        assert 'TensorFlow' in str(error) or '[triton]' in str(error), error\n"
        "        continue\n"
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
    from keras_simplicial.agents.training.rllib.impala import ResilientIMPALA

    for old, new in MOVED_MODULES.items():
        module = importlib.import_module(f"keras_simplicial.agents.{old}")
        assert module is importlib.import_module(f"keras_simplicial.agents.{new}")
        assert module.__spec__.name == f"keras_simplicial.agents.{new}"
    # A pickle that names the class by its earlier module, as RLlib checkpoints do (protocol 0
    # writes module names as plain text).
    data = pickle.dumps(ResilientIMPALA, protocol=0).replace(
        b"keras_simplicial.agents.training.rllib.impala", b"keras_simplicial.agents.config"
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


# What the extras bring (setup.py), absent from the base install.
EXTRA_MODULES = ("tensorflow", "tf_keras", "ray", "gymnasium", "matplotlib")
# Builds a model of the layers in a fresh interpreter and prints its backend and output shape.
LAYER_MODEL = """
import numpy as np
import keras
import keras_simplicial
from keras_simplicial import SimplicialAttention, TwoSimplicialTransformerBlock, VirtualEntities

entities = keras.Input((5, 8))
x = VirtualEntities(2)(entities)
x = TwoSimplicialTransformerBlock(key_dim=4, simplicial_key_dim=3, feedforward_dim=8)(x)
x = SimplicialAttention(num_heads=1, key_dim=3)(x, x)
outputs = keras.Model(entities, x)(np.zeros((2, 5, 8), "float32"))
print(keras.backend.backend(), tuple(outputs.shape))
"""


def setup_arguments():
    """The keyword arguments setup.py passes to `setup()`, read by running it with `setup`
    replaced (nothing is built or installed)."""
    import runpy

    import setuptools

    captured = {}
    original = setuptools.setup
    setuptools.setup = lambda **arguments: captured.update(arguments)
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        runpy.run_path(str(ROOT / "setup.py"))
    finally:
        setuptools.setup = original
        os.chdir(cwd)
    return captured


def requirement_names(requirements):
    return {
        re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower().replace("_", "-") for r in requirements
    }


def test_the_base_install_is_what_the_layers_need_and_the_extras_bring_the_rest():
    arguments = setup_arguments()
    assert requirement_names(arguments["install_requires"]) == {"keras", "numpy"}
    extras = arguments["extras_require"]
    assert requirement_names(extras["envs"]) == {"gymnasium"}
    assert {"tensorflow", "tf-keras", "ray", "gymnasium", "matplotlib"} <= requirement_names(
        extras["agents"]
    )
    # make train and make test install everything, as before the split.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert '-e ".[agents,test,backends,docs]"' in makefile


def installed_backends():
    return [
        backend
        for backend in ("jax", "torch", "tensorflow", "numpy")
        if importlib.util.find_spec(backend) is not None
    ]


@pytest.mark.integration
@pytest.mark.parametrize("backend", installed_backends())
def test_the_layers_build_a_model_without_the_extras_on_every_installed_backend(backend):
    """The base install in this environment: what the extras bring is made unimportable (but the
    backend itself), then the layers build and run a model."""
    absent = [name for name in EXTRA_MODULES if name != backend]
    script = (
        "import sys\n"
        f"for name in {absent!r}:\n"
        "    sys.modules[name] = None  # not installed: import fails, find_spec finds nothing\n"
        + LAYER_MODEL
        + f"assert not [m for m in {absent!r} if sys.modules.get(m) is not None]\n"
    )
    environment = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=environment,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [backend, "(2,", "7,", "3)"]


@pytest.mark.slow
def test_a_fresh_environment_with_the_base_install_builds_the_layers(tmp_path):
    """pip installs the wheel (and Keras, NumPy from the index, with JAX as the backend) into a
    new virtual environment: no TensorFlow comes with it, the layers build a model on every
    backend there, and `keras-simplicial train` says in one line what to install. Minutes, and
    the package index must be reachable."""
    wheel = build_wheel(tmp_path)
    environment_dir = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(environment_dir)], check=True, timeout=300)
    python = environment_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel), "jax"],
        check=True,
        capture_output=True,
        timeout=1800,
    )
    found = subprocess.run(
        [str(python), "-c", f"import importlib.util as u; print([m for m in {EXTRA_MODULES!r} "
         "if u.find_spec(m)])"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert found.stdout.strip() == "[]"
    for backend in ("jax", "numpy"):
        built = subprocess.run(
            [str(python), "-c", LAYER_MODEL],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env={**os.environ, "KERAS_BACKEND": backend},
        )
        assert built.stdout.split() == [backend, "(2,", "7,", "3)"], built.stderr[-3000:]
    command = environment_dir / "bin" / "keras-simplicial"
    assert (
        subprocess.run([str(command), "--help"], capture_output=True, timeout=300).returncode == 0
    )
    train = subprocess.run(
        [str(command), "train", "--preset", "easy"], capture_output=True, text=True, timeout=300
    )
    # The first module of the [agents] extra that the command reaches is named (matplotlib, for
    # train's figures, comes before TensorFlow, which the Keras engine does not need on JAX).
    (line,) = train.stderr.splitlines()
    expected = (
        r"keras-simplicial train: error: this command needs the \[agents\] extra \(no module "
        r"named '(tensorflow|matplotlib|ray|gymnasium)'\): "
        r"pip install 'keras-simplicial\[agents\]'"
    )
    assert train.returncode == 1 and re.fullmatch(expected, line), train.stderr


@pytest.mark.parametrize(
    "blocked, statement, message",
    [
        (
            "gymnasium",
            "import keras_simplicial.envs",
            "keras_simplicial.envs needs the [envs] extra (no module named 'gymnasium'): "
            "pip install 'keras-simplicial[envs]'",
        ),
        (
            "tensorflow",
            "from keras_simplicial.agents import impala_config",
            "keras_simplicial.agents.impala_config needs the [agents] extra (no module named "
            "'tensorflow'): pip install 'keras-simplicial[agents]'",
        ),
    ],
)
def test_a_missing_extra_is_an_import_error_that_names_the_extra(blocked, statement, message):
    script = (
        f"import sys\nsys.modules[{blocked!r}] = None\n"
        f"try:\n    {statement}\nexcept ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.stdout.strip() == f"ModuleNotFoundError {message}", result.stderr[-2000:]


def test_a_module_no_extra_brings_is_raised_as_it_is():
    from keras_simplicial.extras import missing_extra

    error = ModuleNotFoundError("No module named 'nowhere'", name="nowhere")
    assert missing_extra(error, "agents", "x") is error


def test_make_installs_the_triton_of_the_triton_extra():
    """`make install` puts Triton in a folder of its own (the Makefile's TRITON_SITE) at the
    version range of setup.py's [triton] extra, one range in two files."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    made = re.search(r"^TRITON \?= (.+)$", makefile, flags=re.M).group(1).strip()
    extra = re.search(r'"triton": \["([^";]+);', setup).group(1).strip()
    assert made == extra
