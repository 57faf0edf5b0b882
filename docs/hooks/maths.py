"""MkDocs hook: the maths of every page and docstring as MathML, rendered when the site is built.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the Markdown; this hook
turns each marked formula into MathML with latex2mathml. Browsers draw MathML themselves, so the
site needs neither MathJax nor KaTeX nor a network connection to show its equations.
"""

import html
import logging
import re

from latex2mathml.converter import convert

log = logging.getLogger("mkdocs.hooks.maths")

# arithmatex's generic output: \( ... \) in a span (inline), \[ ... \] in a div (display).
INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
DISPLAY = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)


# A command latex2mathml does not know comes out as its own text: a warning, which fails the strict
# build, instead of a formula that shows "\lVert".
UNKNOWN_COMMAND = re.compile(r"\\[A-Za-z]+")


def on_page_content(content, page, config, files):
    def convert_match(match, display):
        return _mathml(match.group(1), display, page.file.src_path)

    content = DISPLAY.sub(lambda match: convert_match(match, "block"), content)
    return INLINE.sub(lambda match: convert_match(match, "inline"), content)


def _mathml(latex, display, where):
    latex = html.unescape(latex).strip()
    try:
        mathml = convert(latex, display=display)
    except Exception as error:  # latex2mathml raises its own exception classes
        log.warning(f"{where}: cannot convert ${latex}$ to MathML: {error!r}")
        return html.escape(latex)
    unknown = UNKNOWN_COMMAND.findall(mathml)
    if unknown:
        log.warning(f"{where}: ${latex}$ uses {', '.join(unknown)}, unknown to latex2mathml")
    return f'<div class="math">{mathml}</div>' if display == "block" else mathml
