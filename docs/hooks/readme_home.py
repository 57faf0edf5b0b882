"""MkDocs hook: the site's home page is the README, so that the two never tell different stories.

The README links into docs/ from the repository's root (``docs/layers.md``); on the site the same
pages sit beside the home page, so ``docs/`` is dropped from those links. The strict build then
checks every one of them.
"""

import re
from pathlib import Path

from mkdocs.structure.files import File

README = Path(__file__).resolve().parents[2] / "README.md"


def on_files(files, config):
    files.append(File.generated(config, "index.md", content=home_page()))
    return files


def home_page():
    return re.sub(r"\]\(docs/", "](", README.read_text(encoding="utf-8"))
