"""keras-simplicial: the 2-simplicial Transformer for Keras 3, bridge BoxWorld and IMPALA agents.

The repository keeps three top-level folders (``keras_simplicial/``, ``envs/``, ``agents/``) but
installs them under one import name, so nothing generic lands in site-packages:

    keras_simplicial          <- keras_simplicial/
    keras_simplicial.envs     <- envs/
    keras_simplicial.agents   <- agents/       (and its subpackages, agents/model/ -> ...model)

The `keras-simplicial` command is the module ``keras_simplicial_cli`` beside them; its commands
(``keras_simplicial.agents.commands``) import what they need when they run, so ``--help`` waits for
no TensorFlow.

The base install is what the layers need: Keras and NumPy (Keras runs on the backend the user
installs: JAX, PyTorch or TensorFlow). The extras bring the rest: ``[envs]`` the gymnasium
environments, ``[agents]`` the agents, their training and their analysis (TensorFlow, Ray RLlib,
gymnasium, matplotlib); ``make`` installs everything.
"""

import re

from setuptools import find_packages, setup

PACKAGE_DIRS = {
    "keras_simplicial": "keras_simplicial",
    "keras_simplicial.envs": "envs",
    "keras_simplicial.agents": "agents",
}


# The environments (keras_simplicial.envs and `keras-simplicial play`).
ENVS = ["gymnasium>=1.0,<2"]


def packages():
    """Every package under each folder of `PACKAGE_DIRS`, with its installed name."""
    names = []
    for package, folder in PACKAGE_DIRS.items():
        names += [package] + [f"{package}.{sub}" for sub in find_packages(folder)]
    return sorted(set(names))


with open("README.md", encoding="utf-8") as readme:
    long_description = readme.read()


def version():
    """``__version__`` of keras_simplicial/__init__.py, its one definition; read as text, so that
    building does not run the package (whose import installs a hook on ``import keras``)."""
    with open("keras_simplicial/__init__.py", encoding="utf-8") as init:
        return re.search(r'^__version__ = "([^"]+)"$', init.read(), flags=re.M).group(1)


setup(
    name="keras-simplicial",
    version=version(),
    description="The 2-simplicial Transformer (Clift et al.) as Keras 3 layers, with bridge "
    "BoxWorld and IMPALA agents on Ray RLlib",
    long_description=long_description,
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10,<3.14",
    packages=packages(),
    package_dir=PACKAGE_DIRS,
    py_modules=["keras_simplicial_cli"],
    install_requires=["keras>=3.12,<4", "numpy>=1.26,<3"],
    extras_require={
        "envs": ENVS,
        # The agents train with IMPALA on RLlib's old API stack (TensorFlow, tf_keras behind
        # tf.keras), the default, whose `ResilientIMPALA` overrides private IMPALA methods: Ray
        # 2.60 only. The new API stack (`train --api-stack new`: a TorchRLModule, Keras on
        # PyTorch) uses RLlib's public API (RLModule, a Learner's two override points, its fault
        # tolerance settings) and needs the [torch] extra; tested on Ray 2.60.0, the newest the
        # registry offered (2026-11), it is meant to outlive the old stack's pin
        # (docs/agents.md, "Which API stack").
        "agents": [
            *ENVS,
            "tensorflow>=2.21,<2.22",
            "tf_keras>=2.21,<2.22",
            "ray[rllib]>=2.60,<2.61",
            "matplotlib>=3.8,<4",
            "pillow>=10,<14",
            "rich>=13,<16",
        ],
        "test": ["pytest>=8,<10", "pytest-xdist>=3,<4", "ruff>=0.17,<0.18"],
        # PyTorch for the agents on RLlib's new API stack (`--api-stack new`).
        "torch": ["torch>=2.4,<3"],
        # The layers' tests also run on Keras's JAX and PyTorch backends (CPU builds).
        "backends": ["jax>=0.4.30,<0.11", "torch==2.13.0"],
        # `fused="triton"` (PyTorch), and its tests in Triton's interpreter on a CPU (wheels for
        # Linux x86-64 only). `make` installs it apart, into .venv/triton-site: a process that
        # imports TensorFlow and then Triton aborts (their LLVM builds clash), which Keras on
        # PyTorch does where both are installed (it imports Triton), so the environment's path
        # stays without it and only the Triton tests' subprocesses put that folder on theirs.
        "triton": ["triton>=3.6,<4; platform_system == 'Linux' and platform_machine == 'x86_64'"],
        "gpu": ["tensorflow[and-cuda]>=2.21,<2.22"],
        # `make docs`: the site built from the docstrings (mkdocs.yml); maths as MathML.
        "docs": [
            "mkdocs>=1.6,<2",
            "mkdocs-material>=9.5,<10",
            "mkdocstrings[python]>=0.26,<2",
            "latex2mathml>=3.77,<4",
        ],
    },
    entry_points={"console_scripts": ["keras-simplicial=keras_simplicial_cli:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Framework :: Keras",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
