"""MkDocs hook: the package's sources laid out under their import names, for mkdocstrings.

setup.py installs three folders under one import name (keras_simplicial/ as ``keras_simplicial``,
envs/ as ``keras_simplicial.envs``, agents/ as ``keras_simplicial.agents``). mkdocstrings reads
the sources without importing them, so it needs a folder where ``keras_simplicial/envs`` exists:
build/api-sources/ holds copies of the repository's sources in that layout (mkdocs.yml's
``paths``). Copies, not links: griffe follows a link to the file's real folder and would look for
the subpackages there.
"""

import shutil
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "build" / "api-sources"
SUBPACKAGES = {"envs": "envs", "agents": "agents"}  # name under keras_simplicial -> folder


# Before mkdocstrings' own on_config, which keeps only the `paths` that exist (a fresh clone has
# no build/ yet).
@event_priority(100)
def on_config(config):
    shutil.rmtree(SOURCES, ignore_errors=True)
    sources_only = shutil.ignore_patterns("__pycache__", "*.pyc")
    package = SOURCES / "keras_simplicial"
    shutil.copytree(ROOT / "keras_simplicial", package, ignore=sources_only)
    for name, folder in SUBPACKAGES.items():
        shutil.copytree(ROOT / folder, package / name, ignore=sources_only)
    shutil.copy(ROOT / "keras_simplicial_cli.py", SOURCES)
    return config
