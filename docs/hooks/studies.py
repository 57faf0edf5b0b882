"""MkDocs hook: the studies, each a folder of studies/, as the site's "Studies" section.

A study is a question answered by experiments. Its folder holds its page (README.md), its other
pages (the pre-registration, notes), its scripts, its results and figures/. On disk the pages link
with the paths that work in the repository: a study links the docs as ``../../docs/agents.md`` and
another study as ``../other/README.md``; a docs page links a study as
``../studies/name/README.md``; the README links ``studies/name/README.md``. On the site a study's
pages sit at ``studies/name/`` beside the docs pages, so this hook drops the ``docs/`` step from the
studies' links and the ``../`` step from the docs pages' links; the strict build then checks every
one of them. The section's entries are made here from the folders (a study's title is its page's
first heading), so a new study needs no edit of mkdocs.yml.
"""

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "studies"
SECTION = "Studies"
PAGE = "README.md"


def study_folders(root=STUDIES):
    """Every folder of `root` that holds a study page, by name."""
    return sorted(path.parent for path in Path(root).glob(f"*/{PAGE}"))


def study_pages(folder):
    """A study's pages: its README first, then its other pages by name."""
    folder = Path(folder)
    return [folder / PAGE, *sorted(p for p in folder.glob("*.md") if p.name != PAGE)]


def title(path):
    """A page's first heading."""
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{path} has no heading ('# ...'): a study page needs one for the site's nav")


def uri(path):
    return Path(path).relative_to(ROOT).as_posix()


def nav_entries(root=STUDIES):
    """The "Studies" section: one entry a study, its pages under it when it has more than one."""
    entries = []
    for folder in study_folders(root):
        pages = study_pages(folder)
        if len(pages) == 1:
            entries.append({title(pages[0]): uri(pages[0])})
        else:
            entries.append(
                {
                    title(pages[0]): [{"The study": uri(pages[0])}]
                    + [{title(page): uri(page)} for page in pages[1:]]
                }
            )
    return entries


def study_markdown(text, folder=None):
    """A study page's links as the site needs them.

    A page frozen before its study moved here (a pre-registration whose hash its runs record) may
    still link a page by its old docs address (``simplicial-attention-tasks.md``): where no such
    page is in the study's folder and docs/ keeps a page of that name (the pointer left at the
    old address), the link goes there.
    """
    text = re.sub(r"\]\(\.\./\.\./docs/", "](../../", text)
    text = re.sub(r"\]\(\.\./\.\./README\.md", "](../../index.md", text)
    if folder is not None:

        def old_address(match):
            name = match.group(1)
            if not (Path(folder) / name).exists() and (ROOT / "docs" / name).exists():
                return f"](../../{name}"
            return match.group(0)

        text = re.sub(r"\]\(([\w-]+\.md)", old_address, text)
    return text


def docs_markdown(text):
    """A docs page's links to the studies as the site needs them."""
    return re.sub(r"\]\(\.\./studies/", "](studies/", text)


def on_config(config):
    for entry in config.nav:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = nav_entries()
            return config
    raise ValueError(f"mkdocs.yml's nav needs a '{SECTION}' entry for the studies")


def on_files(files, config):
    for folder in study_folders():
        for page in study_pages(folder):
            text = study_markdown(page.read_text(encoding="utf-8"), folder)
            files.append(File.generated(config, uri(page), content=text))
        for figure in sorted((folder / "figures").glob("*")):
            if figure.is_file():
                files.append(
                    File(uri(figure), str(ROOT), config.site_dir, config.use_directory_urls)
                )
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri.startswith("studies/"):
        return markdown
    return docs_markdown(markdown)
